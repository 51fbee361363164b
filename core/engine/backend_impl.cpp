// The Backend and Service of one instruction-set variant (this file is
// compiled once per variant, see common/isa.h). Every operation is written
// once over a game's ops (engine/game_ops.h) and dispatched on GameKind.
#include <atomic>

#include "engine/backend.h"
#include "engine/game_ops.h"
#include "engine/thread_pool.h"
#include "engine/variant.h"
#include "search/job.h"

#define KIBITZ_CONCAT_(a, b) a##b
#define KIBITZ_CONCAT(a, b) KIBITZ_CONCAT_(a, b)

KIBITZ_NAMESPACE(impl) {

namespace {

constexpr Isa kIsa = KIBITZ_HAS_PEXT ? Isa::bmi2 : Isa::generic;

template <class Ops>
Expected<PerftReport, Error> perft_game(std::string_view fen, int depth, bool divide) {
  auto pos = Ops::read_fen(fen);
  if (!pos) return Unexpected(pos.error());
  PerftReport report;
  if (divide && depth >= 1) {
    for (const auto& e : Ops::perft_divide(*pos, depth)) {
      report.divide.emplace_back(Ops::move_text(*pos, e.move), e.nodes);
      report.nodes += e.nodes;
    }
  } else {
    report.nodes = Ops::perft(*pos, depth);
  }
  return report;
}

Expected<PerftReport, Error> run_perft(GameKind game, std::string_view fen, int depth,
                                       bool divide) {
  return game == GameKind::chess ? perft_game<ChessOps>(fen, depth, divide)
                                 : perft_game<DraughtsOps>(fen, depth, divide);
}

// Calls f.template operator()<Ops>() for the game's ops.
template <class F>
decltype(auto) with_game(GameKind game, F&& f) {
  if (game == GameKind::chess) return f.template operator()<ChessOps>();
  return f.template operator()<DraughtsOps>();
}

// A search that ended before it started: nothing to search.
class FinishedHandle final : public engine::SearchHandle {
 public:
  void stop() override {}
  void wait() override {}
  bool done() const override { return true; }
  uint64_t nodes() const override { return 0; }
};

class ServiceImpl final : public engine::Service {
 public:
  explicit ServiceImpl(const engine::ServiceOptions& o)
      : pool_(std::max(1, o.threads)),
        tables_{tt::Table(o.hash_mib[0]), tt::Table(o.hash_mib[1])} {}

  ~ServiceImpl() override = default;  // the pool joins first: no job outlives the tables

  Expected<std::shared_ptr<engine::SearchHandle>, Error> analyze(
      const engine::AnalysisRequest& request, engine::Callbacks callbacks) override {
    return with_game(request.game,
                     [&]<class Ops>() { return analyze_game<Ops>(request, std::move(callbacks)); });
  }

  Expected<engine::PositionInfo, Error> position(GameKind game, std::string_view fen,
                                                 const std::vector<std::string>& moves) override {
    return with_game(game, [&]<class Ops>() -> Expected<engine::PositionInfo, Error> {
      auto pos = setup<Ops>(fen, moves);
      if (!pos) return Unexpected(pos.error());
      engine::PositionInfo info;
      info.fen = pos->fen();
      info.key = pos->key();
      info.white_to_move = Ops::Game::white_to_move(*pos);
      info.legal_moves = int(count_legal_moves(*pos));
      info.status = Ops::status(*pos);
      return info;
    });
  }

  Expected<engine::Replay, Error> replay(GameKind game, std::string_view fen,
                                         const std::vector<std::string>& moves) override {
    return with_game(game, [&]<class Ops>() -> Expected<engine::Replay, Error> {
      auto pos = Ops::read_fen(fen);
      if (!pos) return Unexpected(pos.error());
      engine::Replay r;
      r.start_fen = pos->fen();
      r.white_first = Ops::Game::white_to_move(*pos);
      r.first_move_number = Ops::fullmove_number(*pos);
      for (size_t i = 0; i < moves.size(); ++i) {
        auto m = Ops::read_move(*pos, moves[i]);
        if (!m)
          return fail("illegal_move",
                      "ply " + std::to_string(i + 1) + " ('" + moves[i] + "'): " + m.error());
        r.moves.push_back({Ops::move_text(*pos, *m), Ops::san(*pos, *m)});
        pos->do_move(*m);
      }
      r.final_fen = pos->fen();
      r.status = Ops::status(*pos);
      return r;
    });
  }

  Expected<engine::MovesReport, Error> moves(GameKind game, std::string_view fen,
                                             const std::vector<std::string>& moves) override {
    return with_game(game, [&]<class Ops>() -> Expected<engine::MovesReport, Error> {
      auto pos = setup<Ops>(fen, moves);
      if (!pos) return Unexpected(pos.error());
      engine::MovesReport report;
      report.fen = pos->fen();
      report.white_to_move = Ops::Game::white_to_move(*pos);
      typename Ops::Move list[Ops::Game::kMaxMoves];
      const auto* end = generate(*pos, list);
      for (const auto* m = list; m != end; ++m) report.legal.push_back(Ops::describe(*pos, *m));
      report.status = Ops::status(*pos);
      return report;
    });
  }

  Expected<PerftReport, Error> perft(GameKind game, std::string_view fen, int depth,
                                     bool divide) override {
    return run_perft(game, fen, depth, divide);
  }

  int hashfull(GameKind game) const override { return table(game).hashfull(); }
  void resize_hash(GameKind game, size_t mib) override { table(game).resize(mib); }
  void clear_hash() override {
    for (auto& t : tables_) t.clear(pool_.size());
  }
  int threads() const override { return pool_.size(); }
  Isa isa() const override { return kIsa; }

 private:
  tt::Table& table(GameKind g) { return tables_[g == GameKind::chess ? 0 : 1]; }
  const tt::Table& table(GameKind g) const { return tables_[g == GameKind::chess ? 0 : 1]; }

  template <class Ops>
  Expected<std::shared_ptr<engine::SearchHandle>, Error> analyze_game(
      const engine::AnalysisRequest& request, engine::Callbacks callbacks) {
    using Move = typename Ops::Move;
    auto pos = setup<Ops>(request.fen, request.moves);
    if (!pos) return Unexpected(pos.error());
    Move list[Ops::Game::kMaxMoves];
    const Move* end = generate(*pos, list);
    std::vector<Move> root_moves;
    if (request.searchmoves.empty()) {
      root_moves.assign(static_cast<const Move*>(list), end);
    } else {
      for (size_t i = 0; i < request.searchmoves.size(); ++i) {
        auto m = Ops::read_move(*pos, request.searchmoves[i]);
        if (!m) return fail("illegal_move", "searchmoves[" + std::to_string(i) + "]: " + m.error());
        if (std::find(root_moves.begin(), root_moves.end(), *m) == root_moves.end())
          root_moves.push_back(*m);
      }
    }
    if (end == list) {
      engine::Result r;
      r.white_to_move = Ops::Game::white_to_move(*pos);
      r.fen = pos->fen();
      r.status = Ops::status(*pos);
      r.hashfull = table(Ops::kKind).hashfull();
      if (callbacks.on_done) callbacks.on_done(r);
      return std::shared_ptr<engine::SearchHandle>(std::make_shared<FinishedHandle>());
    }
    if (request.multipv < 1) return fail("invalid_request", "multipv must be at least 1");
    engine::AnalysisRequest req = request;
    req.threads = std::clamp(request.threads, 1, pool_.size());
    auto job = std::make_shared<search::Job<typename Ops::Game>>(
        *pos, std::move(root_moves), req, table(Ops::kKind), std::move(callbacks), pos->fen());
    job->start(pool_, next_group_.fetch_add(1, std::memory_order_relaxed));
    return std::shared_ptr<engine::SearchHandle>(job);
  }

  engine::ThreadPool pool_;
  tt::Table tables_[2];  // [chess, draughts]
  std::atomic<uint64_t> next_group_{1};
};

class BackendImpl final : public engine::Backend {
 public:
  BackendImpl() { init_tables(); }
  Isa isa() const override { return kIsa; }
  Expected<PerftReport, Error> perft(GameKind game, std::string_view fen, int depth,
                                     bool divide) override {
    return run_perft(game, fen, depth, divide);
  }
  std::unique_ptr<engine::Service> make_service(const engine::ServiceOptions& options) override {
    return std::make_unique<ServiceImpl>(options);
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
