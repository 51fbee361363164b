// The Backend and Service of one instruction-set variant (this file is
// compiled once per variant, see common/isa.h).
#include <atomic>

#include "chess/game.h"
#include "chess/perft.h"
#include "engine/backend.h"
#include "engine/thread_pool.h"
#include "engine/variant.h"
#include "search/job.h"

#define KIBITZ_CONCAT_(a, b) a##b
#define KIBITZ_CONCAT(a, b) KIBITZ_CONCAT_(a, b)

KIBITZ_NAMESPACE(impl) {

namespace {

using kibitz::Error;

constexpr Isa kIsa = KIBITZ_HAS_PEXT ? Isa::bmi2 : Isa::generic;

Unexpected<Error> fail(std::string code, std::string message) {
  return Unexpected(Error{std::move(code), std::move(message)});
}

// --- chess ---------------------------------------------------------------

Expected<chess::Position, Error> chess_setup(std::string_view fen,
                                             const std::vector<std::string>& moves) {
  auto pos = chess::Position::from_fen(fen.empty() ? engine::default_fen(GameKind::chess) : fen);
  if (!pos) return fail("invalid_fen", pos.error().message);
  for (size_t i = 0; i < moves.size(); ++i) {
    auto m = chess::parse_move(*pos, moves[i]);
    if (!m) return fail("illegal_move", "moves[" + std::to_string(i) + "]: " + m.error().message);
    pos->do_move(*m);
  }
  return std::move(*pos);
}

std::string chess_status(const chess::Position& pos) {
  switch (chess::game_status(pos)) {
    case chess::GameStatus::checkmate:
      return "checkmate";
    case chess::GameStatus::stalemate:
      return "stalemate";
    case chess::GameStatus::fifty_move_rule:
      return "draw_fifty_move_rule";
    case chess::GameStatus::threefold_repetition:
      return "draw_threefold_repetition";
    case chess::GameStatus::insufficient_material:
      return "draw_insufficient_material";
    case chess::GameStatus::ongoing:
      break;
  }
  return "ongoing";
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
      : pool_(std::max(1, o.threads)), chess_tt_(o.hash_mib[0]), draughts_tt_(o.hash_mib[1]) {}

  ~ServiceImpl() override = default;  // the pool joins first: no job outlives the tables

  Expected<std::shared_ptr<engine::SearchHandle>, Error> analyze(
      const engine::AnalysisRequest& request, engine::Callbacks callbacks) override {
    if (request.game != GameKind::chess)
      return fail("invalid_request", "draughts analysis is not available yet");
    auto pos = chess_setup(request.fen, request.moves);
    if (!pos) return Unexpected(pos.error());
    std::vector<chess::Move> root_moves;
    const chess::MoveList legal(*pos);
    if (request.searchmoves.empty()) {
      root_moves.assign(legal.begin(), legal.end());
    } else {
      for (size_t i = 0; i < request.searchmoves.size(); ++i) {
        auto m = chess::parse_move(*pos, request.searchmoves[i]);
        if (!m)
          return fail("illegal_move",
                      "searchmoves[" + std::to_string(i) + "]: " + m.error().message);
        if (std::find(root_moves.begin(), root_moves.end(), *m) == root_moves.end())
          root_moves.push_back(*m);
      }
    }
    if (legal.empty()) {
      engine::Result r;
      r.white_to_move = pos->side_to_move() == chess::White;
      r.fen = pos->fen();
      r.status = chess_status(*pos);
      r.hashfull = chess_tt_.hashfull();
      if (callbacks.on_done) callbacks.on_done(r);
      return std::shared_ptr<engine::SearchHandle>(std::make_shared<FinishedHandle>());
    }
    engine::AnalysisRequest req = request;
    req.threads = std::clamp(request.threads, 1, pool_.size());
    auto job = std::make_shared<search::Job<chess::Game>>(
        *pos, std::move(root_moves), req, chess_tt_, std::move(callbacks), pos->fen());
    job->start(pool_, next_group_.fetch_add(1, std::memory_order_relaxed));
    return std::shared_ptr<engine::SearchHandle>(job);
  }

  Expected<engine::PositionInfo, Error> position(GameKind game, std::string_view fen,
                                                 const std::vector<std::string>& moves) override {
    if (game != GameKind::chess) return fail("invalid_request", "draughts is not available yet");
    auto pos = chess_setup(fen, moves);
    if (!pos) return Unexpected(pos.error());
    engine::PositionInfo info;
    info.fen = pos->fen();
    info.key = pos->key();
    info.white_to_move = pos->side_to_move() == chess::White;
    info.legal_moves = int(chess::count_legal_moves(*pos));
    info.status = chess_status(*pos);
    return info;
  }

  Expected<engine::Replay, Error> replay(GameKind game, std::string_view fen,
                                         const std::vector<std::string>& moves) override {
    if (game != GameKind::chess) return fail("invalid_request", "draughts is not available yet");
    auto pos = chess::Position::from_fen(fen.empty() ? engine::default_fen(game) : fen);
    if (!pos) return fail("invalid_fen", pos.error().message);
    engine::Replay r;
    r.start_fen = pos->fen();
    r.white_first = pos->side_to_move() == chess::White;
    r.first_move_number = pos->fullmove_number();
    for (size_t i = 0; i < moves.size(); ++i) {
      auto m = chess::parse_move(*pos, moves[i]);
      if (!m)
        return fail("illegal_move",
                    "ply " + std::to_string(i + 1) + " ('" + moves[i] + "'): " + m.error().message);
      r.moves.push_back({chess::to_uci(*m), chess::to_san(*pos, *m)});
      pos->do_move(*m);
    }
    r.final_fen = pos->fen();
    r.status = chess_status(*pos);
    return r;
  }

  Expected<engine::MovesReport, Error> moves(GameKind game, std::string_view fen,
                                             const std::vector<std::string>& moves) override {
    if (game != GameKind::chess) return fail("invalid_request", "draughts is not available yet");
    auto pos = chess_setup(fen, moves);
    if (!pos) return Unexpected(pos.error());
    engine::MovesReport report;
    report.fen = pos->fen();
    report.white_to_move = pos->side_to_move() == chess::White;
    for (chess::Move m : chess::MoveList(*pos)) {
      engine::LegalMove lm;
      lm.move = chess::to_uci(m);
      lm.san = chess::to_san(*pos, m);
      lm.from = chess::square_to_string(m.from());
      lm.to = chess::square_to_string(m.to());
      report.legal.push_back(std::move(lm));
    }
    report.status = chess_status(*pos);
    return report;
  }

  Expected<PerftReport, Error> perft(GameKind game, std::string_view fen, int depth,
                                     bool divide) override;

  int hashfull(GameKind game) const override {
    return game == GameKind::chess ? chess_tt_.hashfull() : draughts_tt_.hashfull();
  }
  void resize_hash(GameKind game, size_t mib) override {
    (game == GameKind::chess ? chess_tt_ : draughts_tt_).resize(mib);
  }
  void clear_hash() override {
    chess_tt_.clear(pool_.size());
    draughts_tt_.clear(pool_.size());
  }
  int threads() const override { return pool_.size(); }
  Isa isa() const override { return kIsa; }

 private:
  engine::ThreadPool pool_;
  tt::Table chess_tt_;
  tt::Table draughts_tt_;
  std::atomic<uint64_t> next_group_{1};
};

Expected<PerftReport, Error> run_perft(GameKind game, std::string_view fen, int depth,
                                       bool divide) {
  if (game != GameKind::chess)
    return fail("invalid_request", "draughts perft is not available yet");
  auto pos = chess::Position::from_fen(fen.empty() ? engine::default_fen(game) : fen);
  if (!pos) return fail("invalid_fen", pos.error().message);
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

Expected<PerftReport, Error> ServiceImpl::perft(GameKind game, std::string_view fen, int depth,
                                                bool divide) {
  return run_perft(game, fen, depth, divide);
}

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
