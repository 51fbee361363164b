#include <benchmark/benchmark.h>

#include <cstdio>

#include "common/cpu.h"
#include "engine/variant.h"

int main(int argc, char** argv) {
  const kibitz::Isa isa = KIBITZ_HAS_PEXT ? kibitz::Isa::bmi2 : kibitz::Isa::generic;
  if (!kibitz::isa_supported(isa)) {
    std::fprintf(stderr, "this CPU cannot run the %s variant\n", kibitz::isa_name(isa).data());
    return 1;
  }
  kibitz::impl::init_tables();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
