#include <cstdio>
#include <cstdlib>

#include "engine/backend.h"

namespace kibitz::engine {

Backend& backend(Isa isa) {
  if (!isa_supported(isa)) {
    // A programming error: callers check isa_supported first.
    std::fprintf(stderr, "kibitz: instruction set %s is not supported by this CPU\n",
                 isa_name(isa).data());
    std::abort();
  }
#if defined(KIBITZ_HAVE_BMI2_VARIANT)
  if (isa == Isa::bmi2) return backend_isa_bmi2();
#endif
  return backend_isa_generic();
}

std::unique_ptr<Service> make_service(const ServiceOptions& options, std::optional<Isa> isa) {
  return backend(isa.value_or(default_isa())).make_service(options);
}

}  // namespace kibitz::engine
