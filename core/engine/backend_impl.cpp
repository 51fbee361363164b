// The Backend of one instruction-set variant (this file is compiled once per
// variant, see common/isa.h).
#include "chess/notation.h"
#include "chess/perft.h"
#include "draughts/notation.h"
#include "draughts/perft.h"
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
    return game == GameKind::chess ? perft_game<Chess>(fen, depth, divide)
                                   : perft_game<Draughts>(fen, depth, divide);
  }

 private:
  // Perft of one game; G is the game's namespace-level API bundled below.
  template <class G>
  static Expected<PerftReport, Error> perft_game(std::string_view fen, int depth, bool divide) {
    auto pos = G::Position::from_fen(fen);
    if (!pos) return Unexpected(Error{"invalid_fen", pos.error().message});
    PerftReport report;
    if (divide && depth >= 1) {
      for (const auto& e : G::perft_divide(*pos, depth)) {
        report.divide.emplace_back(G::move_text(*pos, e.move), e.nodes);
        report.nodes += e.nodes;
      }
    } else {
      report.nodes = G::perft(*pos, depth);
    }
    return report;
  }

  struct Chess {
    using Position = chess::Position;
    static auto perft_divide(Position& pos, int depth) { return chess::perft_divide(pos, depth); }
    static uint64_t perft(Position& pos, int depth) { return chess::perft(pos, depth); }
    static std::string move_text(const Position&, chess::Move m) { return chess::to_uci(m); }
  };
  struct Draughts {
    using Position = draughts::Position;
    static auto perft_divide(Position& pos, int depth) {
      return draughts::perft_divide(pos, depth);
    }
    static uint64_t perft(Position& pos, int depth) { return draughts::perft(pos, depth); }
    static std::string move_text(const Position& pos, draughts::Move m) {
      return draughts::to_string(pos, m);
    }
  };
};

}  // namespace

}  // KIBITZ_NAMESPACE(impl)

namespace kibitz::engine {

Backend& KIBITZ_CONCAT(backend_, KIBITZ_ISA_NAME)() {
  static kibitz::KIBITZ_ISA_NAME::impl::BackendImpl instance;
  return instance;
}

}  // namespace kibitz::engine
