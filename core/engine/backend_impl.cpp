// The Backend of one instruction-set variant (this file is compiled once per
// variant, see common/isa.h).
#include "chess/notation.h"
#include "chess/perft.h"
#include "engine/backend.h"
#include "engine/variant.h"

#define KIBITZ_CONCAT_(a, b) a##b
#define KIBITZ_CONCAT(a, b) KIBITZ_CONCAT_(a, b)

KIBITZ_NAMESPACE(impl) {

namespace {

class BackendImpl final : public kibitz::engine::Backend {
 public:
  BackendImpl() { init_tables(); }

  Isa isa() const override { return KIBITZ_HAS_PEXT ? Isa::bmi2 : Isa::generic; }

  Expected<PerftReport, Error> perft(GameKind game, std::string_view fen, int depth,
                                     bool divide) override {
    if (game != GameKind::chess)
      return Unexpected(Error{"invalid_request", "draughts perft is not available yet"});
    auto pos = chess::Position::from_fen(fen);
    if (!pos) return Unexpected(Error{"invalid_fen", pos.error().message});
    PerftReport report;
    if (divide && depth >= 1) {
      for (const auto& e : chess::perft_divide(*pos, depth)) {
        report.divide.emplace_back(chess::to_uci(e.move), e.nodes);
        report.nodes += e.nodes;
      }
    } else {
      report.nodes = chess::perft(*pos, depth);
    }
    return report;
  }
};

}  // namespace

}  // KIBITZ_NAMESPACE(impl)

namespace kibitz::engine {

Backend& KIBITZ_CONCAT(backend_, KIBITZ_ISA_NAME)() {
  static kibitz::KIBITZ_ISA_NAME::impl::BackendImpl instance;
  return instance;
}

}  // namespace kibitz::engine
