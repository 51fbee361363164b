// One search of one root: 1..N threads of the shared pool on the same
// position (Lazy SMP). Worker 0 reports each completed iteration; the search
// ends when its last running thread leaves, and then reports the result
// exactly once.
//
// Which thread's result wins: the one whose last completed iteration is the
// deepest; on equal depth the main worker (it alone honours MultiPV order
// and the limits exactly), then the lower index.
//
// No exception leaves a pool task: one thrown by a worker (e.g. out of
// memory) or by on_progress stops the search, and the result reports it in
// engine::Result::error; one thrown by on_done is swallowed (the report has
// been made; the pool thread must go on).
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/contain.h"
#include "engine/analysis.h"
#include "engine/game_report.h"
#include "engine/thread_pool.h"
#include "search/search.h"

KIBITZ_NAMESPACE(impl) {

// Turns a game's internal results into the neutral report types, through
// the reporting half of its adapter (engine/game_report.h): the search and
// the games' search adapters stay free of strings and report types.
template <search::Game G>
engine::Line make_line(const typename G::Position& root, const search::RootMove<G>& rm, int multipv,
                       int depth, bool root_in_tb = false) {
  using R = Report<G>;
  using namespace search;
  engine::Line line;
  line.multipv = multipv;
  typename G::Position pos = root;
  for (const auto& m : rm.pv) {
    if (!R::is_legal(pos, m)) break;  // defensive: a line is only ever shown legal
    line.moves.push_back(R::move_string(pos, m));
    if constexpr (R::kHasSan) line.san.push_back(R::san_string(pos, m));
    G::do_move(pos, m);
  }
  Value v = rm.score == -kValueInfinite ? rm.previous_score : rm.score;
  // A root the tablebases rank: the move's result as they tell it, unless
  // the search found a mate.
  if (root_in_tb && !is_mate_score(v)) v = rm.tb_score;
  line.score = R::score(v);
  line.bound = rm.bound == BoundLower   ? engine::BoundKind::lower
               : rm.bound == BoundUpper ? engine::BoundKind::upper
                                        : engine::BoundKind::exact;
  line.wdl = R::wdl(v);
  line.depth = depth;
  line.seldepth = rm.sel_depth;
  return line;
}

template <search::Game G>
class RootSearch final : public engine::SearchHandle,
                         public std::enable_shared_from_this<RootSearch<G>> {
 public:
  using Position = typename G::Position;
  using Move = typename G::Move;

  // `root_moves` are the moves to search: every legal move, or the request's
  // searchmoves (then the root is restricted and its value never stored).
  RootSearch(const Position& root, std::vector<Move> root_moves,
             const engine::AnalysisRequest& request, tt::Table& table, engine::Callbacks callbacks,
             std::string fen)
      : shared_(root, std::move(root_moves), request.multipv, request.limits, table,
                /*restricted_root=*/!request.searchmoves.empty()),
        callbacks_(std::move(callbacks)),
        fen_(std::move(fen)),
        threads_(std::max(1, request.threads)) {}

  // Tests only (empty otherwise): runs as every root search of this game
  // starts, on the thread that starts it, before its workers run. Set it
  // while no search starts: it is read without a lock.
  static inline std::function<void(RootSearch&)> on_start_for_tests;

  // Before start(): the memory the workers start from and leave their tables in.
  void set_memory(std::shared_ptr<search::Memory> memory) { shared_.memory = std::move(memory); }

  // For tests only, before start(): runs on each worker after each iteration
  // it completes, with (worker index, depth); it may throw, as a worker can.
  void set_iteration_hook(std::function<void(int, int)> hook) {
    shared_.iteration_hook = std::move(hook);
  }
  // What tests see of the search.
  tt::Table& table() const { return shared_.tt; }
  uint64_t root_key() const { return G::key(shared_.root); }
  bool restricted_root() const { return shared_.restricted_root; }
  const std::vector<Move>& root_moves() const { return shared_.root_moves; }

  // Starts the search on the pool. It keeps itself alive until done.
  // The callbacks run on search threads and must not wait for this search.
  void start(engine::ThreadPool& pool, uint64_t group) {
    if (on_start_for_tests) on_start_for_tests(*this);
    pool_ = &pool;
    group_ = group;
    shared_.tt.new_search();
    for (int i = 0; i < threads_; ++i)
      shared_.workers.push_back(std::make_unique<search::Worker<G>>(shared_, i));
    shared_.on_progress = [this](const search::Worker<G>& main) { report_iteration(main); };
    running_.store(threads_, std::memory_order_relaxed);
    std::vector<engine::ThreadPool::Task> tasks;
    auto self = this->shared_from_this();
    for (int i = 0; i < threads_; ++i) {
      tasks.push_back({[self, i] { self->work(i); },
                       [self, i] {
                         // Cancelled before it ran: the main worker's result is
                         // still owed, the helpers' are not.
                         if (i == 0) self->shared_.stop.store(true, std::memory_order_relaxed);
                         self->leave();
                       },
                       group});
    }
    pool.submit(std::move(tasks));
  }

  void stop() override {
    stopped_by_request_.store(true, std::memory_order_relaxed);
    shared_.stop.store(true, std::memory_order_relaxed);
    if (pool_) pool_->cancel_group(group_);
  }

  void wait() override {
    std::unique_lock lock(mutex_);
    done_cv_.wait(lock, [this] { return done_; });
  }

  bool done() const override {
    std::lock_guard lock(mutex_);
    return done_;
  }

  uint64_t nodes() const override { return shared_.total_nodes(); }

 private:
  // One pool task: worker i's search, then its leaving. Nothing escapes.
  void work(int i) noexcept {
    try {
      if (i == 0 || !shared_.stop.load(std::memory_order_relaxed))
        shared_.workers[size_t(i)]->run();
    } catch (...) {
      fail(current_exception_text());
    }
    // A helper never ends the search: only the main worker decides.
    if (i == 0) shared_.stop.store(true, std::memory_order_relaxed);
    leave();
  }

  // The search cannot go on: keep the first reason, stop every worker.
  void fail(std::string what) noexcept {
    {
      std::lock_guard lock(mutex_);
      if (!error_) {
        try {
          error_ = std::move(what);
        } catch (...) {  // no memory for the text
          error_.emplace();
        }
      }
    }
    shared_.stop.store(true, std::memory_order_relaxed);
    // Helpers still queued are not needed any more (their cancel callbacks leave()).
    try {
      if (pool_) pool_->cancel_group(group_);
    } catch (...) {  // they will run, see the stop flag and leave
    }
  }

  engine::Progress progress_of(const search::Worker<G>& w) const {
    engine::Progress p;
    p.white_to_move = G::white_to_move(shared_.root);
    p.depth = w.completed_depth();
    p.seldepth = w.sel_depth();
    p.nodes = shared_.total_nodes();
    p.tbhits = shared_.total_tbhits();
    p.time_ms = shared_.time.elapsed_ms();
    p.nps = p.nodes * 1000 / uint64_t(std::max<int64_t>(1, p.time_ms));
    p.hashfull = shared_.tt.hashfull();
    const auto& rms = w.completed();
    if (p.depth > 0)  // no line before the first iteration completes
      for (int i = 0; i < shared_.multipv && i < int(rms.size()); ++i)
        p.lines.push_back(
            make_line<G>(shared_.root, rms[size_t(i)], i + 1, p.depth, shared_.root_in_tb()));
    return p;
  }

  // On the main worker, inside its run(): a throwing callback stops the
  // search here rather than unwinding through it.
  void report_iteration(const search::Worker<G>& main) {
    if (!callbacks_.on_progress) return;
    try {
      callbacks_.on_progress(progress_of(main));
    } catch (...) {
      fail(current_exception_text());
    }
  }

  engine::Result result() const {
    const search::Worker<G>* best = shared_.workers[0].get();
    for (const auto& w : shared_.workers)
      if (w->completed_depth() > best->completed_depth()) best = w.get();
    engine::Result r;
    static_cast<engine::Progress&>(r) = progress_of(*best);
    r.fen = fen_;
    r.stopped = stopped_by_request_.load(std::memory_order_relaxed);
    r.cut_by_deadline = shared_.cut_by_deadline.load(std::memory_order_relaxed);
    if (!r.lines.empty() && !r.lines[0].moves.empty()) {
      r.bestmove = r.lines[0].moves[0];
      if (r.lines[0].moves.size() > 1) r.ponder = r.lines[0].moves[1];
    } else if (!shared_.root_moves.empty()) {
      // Stopped before the first iteration: any legal move beats none.
      r.bestmove = Report<G>::move_string(shared_.root, shared_.root_moves[0]);
    }
    return r;
  }

  void leave() noexcept {
    if (running_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    // Last one out: every worker has stopped; choose and report the result.
    engine::Result r;
    try {
      r = result();
    } catch (...) {  // e.g. no memory for the lines: report the failure alone
      fail(current_exception_text());
      r = engine::Result{};
      r.white_to_move = G::white_to_move(shared_.root);
      r.nodes = shared_.total_nodes();
    }
    {
      std::lock_guard lock(mutex_);
      try {
        r.error = error_;
      } catch (...) {
        r.error.emplace();  // a failure without its text
      }
    }
    // The callbacks go with the report: they often hold the owner of this
    // search's handle, and keeping them would make a cycle that never frees.
    engine::Callbacks callbacks = std::move(callbacks_);
    callbacks_ = {};
    try {
      if (callbacks.on_done) callbacks.on_done(r);
    } catch (...) {  // the report is made; nothing is left to tell
    }
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_all();
  }

  search::Shared<G> shared_;
  engine::Callbacks callbacks_;
  std::string fen_;
  const int threads_;
  engine::ThreadPool* pool_ = nullptr;
  uint64_t group_ = 0;
  std::atomic<int> running_{0};
  std::atomic<bool> stopped_by_request_{false};
  mutable std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::optional<std::string> error_;  // under mutex_
};

}  // KIBITZ_NAMESPACE(impl)
