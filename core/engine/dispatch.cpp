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

std::string_view default_fen(GameKind game) {
  return game == GameKind::chess
             ? "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
             : "W:Wa1,a3,b2,c1,c3,d2,e1,e3,f2,g1,g3,h2:Ba7,b6,b8,c7,d6,d8,e7,f6,f8,g7,h6,h8";
}

}  // namespace kibitz::engine
