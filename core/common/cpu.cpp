#include "common/cpu.h"

#include <cstdlib>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace kibitz {

namespace {

// POPCNT, BMI1, BMI2 and AVX2, with the operating system saving the AVX
// registers (OSXSAVE, and XCR0's SSE and AVX bits).
bool cpu_has_bmi2_variant() {
#if defined(__x86_64__) && defined(KIBITZ_HAVE_BMI2_VARIANT)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const bool popcnt = (c & bit_POPCNT) != 0;
  const bool osxsave = (c & bit_OSXSAVE) != 0 && (c & bit_AVX) != 0;
  if (!osxsave) return false;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  if ((xcr0_lo & 6) != 6) return false;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  const bool bmi1 = (b & bit_BMI) != 0;
  const bool bmi2 = (b & bit_BMI2) != 0;
  const bool avx2 = (b & bit_AVX2) != 0;
  return popcnt && bmi1 && bmi2 && avx2;
#else
  return false;
#endif
}

}  // namespace

bool isa_supported(Isa isa) {
  switch (isa) {
    case Isa::generic:
      return true;
    case Isa::bmi2: {
      static const bool supported = cpu_has_bmi2_variant();
      return supported;
    }
  }
  return false;
}

Isa default_isa() {
  if (const char* env = std::getenv("KIBITZ_ISA")) {
    if (auto isa = parse_isa(env); isa && isa_supported(*isa)) return *isa;
  }
  return isa_supported(Isa::bmi2) ? Isa::bmi2 : Isa::generic;
}

std::string_view isa_name(Isa isa) { return isa == Isa::bmi2 ? "bmi2" : "generic"; }

std::optional<Isa> parse_isa(std::string_view name) {
  if (name == "generic") return Isa::generic;
  if (name == "bmi2") return Isa::bmi2;
  return std::nullopt;
}

}  // namespace kibitz
