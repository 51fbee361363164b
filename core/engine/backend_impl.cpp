// The Backend and Service of one instruction-set variant (this file is
// compiled once per variant, see common/isa.h). Every operation is written
// once over a game's ops (engine/game_ops.h) and dispatched on GameKind.
#include <algorithm>
#include <atomic>
#include <cassert>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "engine/backend.h"
#include "engine/game_ops.h"
#include "engine/root_search.h"
#include "engine/tablebase_lookup.h"
#include "engine/thread_pool.h"
#include "engine/variant.h"

#define KIBITZ_CONCAT_(a, b) a##b
#define KIBITZ_CONCAT(a, b) KIBITZ_CONCAT_(a, b)

KIBITZ_NAMESPACE(impl) {

namespace {

constexpr Isa kIsa = KIBITZ_HAS_PEXT ? Isa::bmi2 : Isa::generic;

template <class Ops>
Expected<PerftReport, Error> perft_game(std::string_view fen, int depth, bool divide,
                                        ChessVariant variant) {
  auto pos = Ops::read_fen(fen, variant);
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

Expected<PerftReport, Error> run_perft(GameKind game, std::string_view fen, int depth, bool divide,
                                       ChessVariant variant) {
  return game == GameKind::chess ? perft_game<ChessOps>(fen, depth, divide, variant)
                                 : perft_game<DraughtsOps>(fen, depth, divide, variant);
}

// Perft that can stop: the top plies are walked here, checking `stop`
// between subtrees; subtrees of kLeafDepth plies or fewer are counted at
// full speed.
template <class Ops, class Stop>
std::optional<uint64_t> perft_until(const typename Ops::Position& pos, int depth, Stop& stop) {
  constexpr int kLeafDepth = 3;  // a few thousand nodes: stop is seen within microseconds
  typename Ops::Position p = pos;
  if (depth <= kLeafDepth) return Ops::perft(p, depth);
  typename Ops::Move list[Ops::Game::kMaxMoves];
  const auto* end = generate(p, list);
  assert(end - list <= Ops::Game::kMaxMoves);
  uint64_t nodes = 0;
  for (const auto* m = list; m != end; ++m) {
    if (stop()) return std::nullopt;
    typename Ops::Position child = p;
    child.do_move(*m);
    auto n = perft_until<Ops>(child, depth - 1, stop);
    if (!n) return std::nullopt;
    nodes += *n;
  }
  return nodes;
}

// A perft on a search thread: stop() asks it to end at the next subtree.
class PerftHandle final : public engine::SearchHandle {
 public:
  void stop() override { stop_.store(true, std::memory_order_relaxed); }
  void wait() override {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return done_; });
  }
  bool done() const override {
    std::lock_guard lock(mutex_);
    return done_;
  }
  uint64_t nodes() const override { return 0; }
  bool stopping() const { return stop_.load(std::memory_order_relaxed); }
  void mark_done() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
};

template <class Ops>
class PreparedOf final : public engine::PreparedPosition {
 public:
  PreparedOf(typename Ops::Position pos, engine::PositionInfo info) : pos_(std::move(pos)) {
    info_ = std::move(info);
  }
  const typename Ops::Position& position() const { return pos_; }
  std::optional<std::string> illegal(std::string_view move) const override {
    auto m = Ops::read_move(pos_, move);
    if (!m) return m.error();
    return std::nullopt;
  }

 private:
  typename Ops::Position pos_;
};

// The history that matters for repetitions: the keys of the positions
// since the last irreversible move (chess: the 50-move counter; draughts:
// all of them, its draw rules count several things), order aside.
template <class Ops>
uint64_t history_key(const typename Ops::Position& pos, std::vector<uint64_t> keys) {
  size_t window = keys.size();
  if constexpr (Ops::kKind == GameKind::chess) window = std::min(window, size_t(pos.rule50()));
  keys.erase(keys.begin(), keys.end() - std::ptrdiff_t(window));
  std::sort(keys.begin(), keys.end());
  uint64_t h = 0x9e3779b97f4a7c15ull ^ keys.size();
  for (uint64_t k : keys) {
    h ^= k + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
  }
  return h;
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

// Where a per-game pair (tables, memories) keeps each game.
constexpr int slot(GameKind g) { return g == GameKind::chess ? 0 : 1; }

// A search memory of this variant: one per game, since their tables differ.
struct MemoryImpl final : engine::SearchMemory {
  search::Memory games[2];  // [chess, draughts]
};

class ServiceImpl final : public engine::Service {
 public:
  explicit ServiceImpl(const engine::ServiceOptions& o)
      : tables_{tt::Table(o.hash_mib[0]), tt::Table(o.hash_mib[1])},
        pool_(std::max(1, o.threads), pool_options(o)) {
    if (o.background_idle_policy) {
      auto b = pool_options(o);
      b.idle_policy = true;
      background_pool_.emplace(std::max(1, o.threads), b);
    }
  }

  // Members go in reverse order: the pool joins first, so no search
  // outlives the tables it writes to.
  ~ServiceImpl() override = default;

  Expected<std::shared_ptr<const engine::PreparedPosition>, Error> prepare(
      GameKind game, std::string_view fen, const std::vector<std::string>& moves,
      ChessVariant variant) override {
    return with_game(
        game, [&]<class Ops>() -> Expected<std::shared_ptr<const engine::PreparedPosition>, Error> {
          auto pos = Ops::read_fen(fen, variant);
          if (!pos) return Unexpected(pos.error());
          std::vector<uint64_t> keys;  // of the positions before the last
          keys.reserve(moves.size());
          for (size_t i = 0; i < moves.size(); ++i) {
            auto m = Ops::read_move(*pos, moves[i]);
            if (!m) return fail("illegal_move", "moves[" + std::to_string(i) + "]: " + m.error());
            keys.push_back(pos->key());
            pos->do_move(*m);
          }
          engine::PositionInfo info;
          info.fen = pos->fen();
          info.chess960 = Ops::chess960(*pos);
          info.key = pos->key();
          info.white_to_move = Ops::Game::white_to_move(*pos);
          info.legal_moves = int(count_legal_moves(*pos));
          info.status = Ops::status(*pos);
          info.history_key = history_key<Ops>(*pos, std::move(keys));
          return std::shared_ptr<const engine::PreparedPosition>(
              std::make_shared<PreparedOf<Ops>>(std::move(*pos), std::move(info)));
        });
  }

  Expected<std::shared_ptr<engine::SearchHandle>, Error> perft_async(
      GameKind game, std::string_view fen, int depth, engine::Clock::time_point deadline,
      engine::PerftCallbacks callbacks, ChessVariant variant) override {
    return with_game(
        game, [&]<class Ops>() -> Expected<std::shared_ptr<engine::SearchHandle>, Error> {
          auto pos = Ops::read_fen(fen, variant);
          if (!pos) return Unexpected(pos.error());
          auto handle = std::make_shared<PerftHandle>();
          auto on_done = std::make_shared<std::function<void(const Expected<PerftReport, Error>&)>>(
              std::move(callbacks.on_done));
          auto report = [handle, on_done](const Expected<PerftReport, Error>& r) {
            auto f = std::move(*on_done);
            *on_done = nullptr;
            if (f) f(r);
            handle->mark_done();
          };
          engine::ThreadPool::Task task;
          task.run = [handle, report, p = std::move(*pos), depth, deadline] {
            bool late = false;
            auto stop = [&] {
              if (handle->stopping()) return true;
              late = engine::Clock::now() >= deadline;
              return late;
            };
            std::optional<uint64_t> nodes;
            try {
              nodes = perft_until<Ops>(p, depth, stop);
            } catch (const std::exception& e) {
              return report(Unexpected(Error{"internal", e.what()}));
            }
            if (nodes) return report(PerftReport{*nodes, {}});
            report(Unexpected(
                late ? Error{"deadline_exceeded", "the deadline passed before the count ended"}
                     : Error{"cancelled", "cancelled"}));
          };
          task.cancelled = [report] {
            report(Unexpected(Error{"cancelled", "the service shut down first"}));
          };
          pool_.submit({std::move(task)});
          return std::shared_ptr<engine::SearchHandle>(handle);
        });
  }

  Expected<std::shared_ptr<engine::SearchHandle>, Error> analyze(
      const engine::AnalysisRequest& request, engine::Callbacks callbacks) override {
    return with_game(request.game,
                     [&]<class Ops>() { return analyze_game<Ops>(request, std::move(callbacks)); });
  }

  Expected<engine::Replay, Error> replay(GameKind game, std::string_view fen,
                                         const std::vector<std::string>& moves,
                                         ChessVariant variant) override {
    return with_game(game, [&]<class Ops>() -> Expected<engine::Replay, Error> {
      auto pos = Ops::read_fen(fen, variant);
      if (!pos) return Unexpected(pos.error());
      engine::Replay r;
      r.start_fen = pos->fen();
      r.chess960 = Ops::chess960(*pos);
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
                                             const std::vector<std::string>& moves,
                                             ChessVariant variant) override {
    return with_game(game, [&]<class Ops>() -> Expected<engine::MovesReport, Error> {
      auto pos = setup<Ops>(fen, moves, variant);
      if (!pos) return Unexpected(pos.error());
      engine::MovesReport report;
      report.fen = pos->fen();
      report.chess960 = Ops::chess960(*pos);
      report.white_to_move = Ops::Game::white_to_move(*pos);
      typename Ops::Move list[Ops::Game::kMaxMoves];
      const auto* end = generate(*pos, list);
      assert(end - list <= Ops::Game::kMaxMoves);
      for (const auto* m = list; m != end; ++m) report.legal.push_back(Ops::describe(*pos, *m));
      report.status = Ops::status(*pos);
      return report;
    });
  }

  Expected<engine::TablebaseReport, Error> tablebase(std::string_view fen) override {
    return tablebase_lookup(fen);
  }

  Expected<PerftReport, Error> perft(GameKind game, std::string_view fen, int depth, bool divide,
                                     ChessVariant variant) override {
    return run_perft(game, fen, depth, divide, variant);
  }

  int hashfull(GameKind game) const override { return table(game).hashfull(); }
  void resize_hash(GameKind game, size_t mib) override { table(game).resize(mib); }
  std::shared_ptr<engine::SearchMemory> make_memory() override {
    return std::make_shared<MemoryImpl>();
  }

  void clear_hash() override {
    for (auto& t : tables_) t.clear(pool_.size());
  }
  int threads() const override { return pool_.size(); }
  Isa isa() const override { return kIsa; }

 private:
  static engine::ThreadPool::Options pool_options(const engine::ServiceOptions& o) {
    engine::ThreadPool::Options p;
    p.nice = o.search_nice;
    p.idle_policy = o.search_idle_policy;
    p.on_task_error = o.on_task_error;
    return p;
  }

  tt::Table& table(GameKind g) { return tables_[slot(g)]; }
  const tt::Table& table(GameKind g) const { return tables_[slot(g)]; }

  template <class Ops>
  Expected<std::shared_ptr<engine::SearchHandle>, Error> analyze_game(
      const engine::AnalysisRequest& request, engine::Callbacks callbacks) {
    using Move = typename Ops::Move;
    std::optional<typename Ops::Position> decoded;
    if (request.position) {
      decoded = static_cast<const PreparedOf<Ops>&>(*request.position).position();
    } else {
      auto p = setup<Ops>(request.fen, request.moves, request.variant);
      if (!p) return Unexpected(p.error());
      decoded = std::move(*p);
    }
    auto* pos = &*decoded;
    Move list[Ops::Game::kMaxMoves];
    const Move* end = generate(*pos, list);
    assert(end - list <= Ops::Game::kMaxMoves);
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
    auto job = std::make_shared<RootSearch<typename Ops::Game>>(
        *pos, std::move(root_moves), req, table(Ops::kKind), std::move(callbacks), pos->fen());
    // A memory made by another service (another variant) is not ours: ignored.
    // The game's part shares ownership with the whole: it lives while a
    // search holds it, even after the client has dropped its handle.
    if (auto* memory = dynamic_cast<MemoryImpl*>(request.memory.get()))
      job->set_memory({request.memory, &memory->games[slot(Ops::kKind)]});
    job->start(request.background && background_pool_ ? *background_pool_ : pool_,
               next_group_.fetch_add(1, std::memory_order_relaxed));
    return std::shared_ptr<engine::SearchHandle>(job);
  }

  tt::Table tables_[2];  // [chess, draughts]; declared before the pool, destroyed after it
  engine::ThreadPool pool_;
  std::optional<engine::ThreadPool> background_pool_;  // background_idle_policy only
  std::atomic<uint64_t> next_group_{1};
};

class BackendImpl final : public engine::Backend {
 public:
  BackendImpl() { init_tables(); }
  Isa isa() const override { return kIsa; }
  Expected<PerftReport, Error> perft(GameKind game, std::string_view fen, int depth, bool divide,
                                     ChessVariant variant) override {
    return run_perft(game, fen, depth, divide, variant);
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
