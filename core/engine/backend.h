// The engine behind an instruction-set variant. Each variant (see
// common/isa.h) implements Backend once; backend(isa) returns the one to use,
// after checking that the CPU can run it.
#pragma once

#include <string_view>

#include "common/cpu.h"
#include "common/expected.h"
#include "engine/service.h"
#include "engine/types.h"

namespace kibitz::engine {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Isa isa() const = 0;

  virtual Expected<PerftReport, Error> perft(GameKind game, std::string_view fen, int depth,
                                             bool divide,
                                             ChessVariant variant = ChessVariant::automatic) = 0;
  virtual std::unique_ptr<Service> make_service(const ServiceOptions& options) = 0;
};

// The backend for `isa`; isa must be supported by this CPU (isa_supported).
Backend& backend(Isa isa);
inline Backend& backend() { return backend(default_isa()); }

// Defined by each variant; only backend() may call them.
Backend& backend_isa_generic();
Backend& backend_isa_bmi2();

}  // namespace kibitz::engine
