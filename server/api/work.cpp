#include "server/api/work.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <stdexcept>

#include "common/contain.h"
#include "server/api/replies.h"

namespace kibitz::server {

using engine::Clock;
using nlohmann::json;

namespace {

int64_t ms_since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

#ifdef KIBITZ_TEST_HOOKS
// Test builds only (CMake KIBITZ_TEST_HOOKS, never in a shipped image): an
// analysis of the position in KIBITZ_TEST_CRASH_FEN ends the process from
// its search thread at its first progress, as a crash in the engine would
// (tests/server/test_poison_job.py). Read once, at the first analysis.
const std::string& test_crash_fen() {
  static const std::string fen = [] {
    const char* v = std::getenv("KIBITZ_TEST_CRASH_FEN");
    std::string f = v ? v : "";
    if (!f.empty()) spdlog::warn("test hook: an analysis of '{}' aborts the process", f);
    return f;
  }();
  return fen;
}

// An analysis of the position KIBITZ_TEST_FAIL_FEN (after the moves) fails once its search
// has ended, as one whose result cannot be handled would: 500 internal
// (kibitz analyze's exit 1 for a server error, tests/server_api/cli_analyze_test.py).
bool test_fail(const AnalyzeCall& call) {
  static const std::string fen = [] {
    const char* v = std::getenv("KIBITZ_TEST_FAIL_FEN");
    return std::string(v ? v : "");
  }();
  return !fen.empty() && call.position.fen == fen;  // the analysed position, after the moves
}

[[noreturn]] void test_crash(const std::string& name) {
  spdlog::critical("test hook: analysis {} aborts the process (KIBITZ_TEST_CRASH_FEN)", name);
  spdlog::default_logger_raw()->flush();
  std::abort();
}
#endif

}  // namespace

// --- EngineWork: the shape the three share --------------------------------

template <class Call, class Handle>
bool EngineWork<Call, Handle>::may_start(const char* kind) {
  began_ = Clock::now();
  if (began_ >= deadline_) {
    core_->metrics.job_finished(false, true, 0);
    spdlog::info("{} {} outcome=deadline_exceeded (queued too long)", kind, name());
    done(deadline_reply());
    return false;
  }
  if (before_search)
    if (auto instead = before_search()) {
      done(std::move(*instead));
      return false;
    }
  return true;
}

template <class Call, class Handle>
void EngineWork<Call, Handle>::not_started(const Error& e) {
  core_->metrics.job_finished(false, true, 0);
  spdlog::warn("{} did not start: {}: {}", name(), e.code, e.message);
  done(engine_error(e));
}

template <class Call, class Handle>
template <class Self, class Result, class Fn>
void EngineWork<Call, Handle>::contained_end(const std::shared_ptr<Self>& self, const char* kind,
                                             const Result& r, Fn on_end) {
  contained([&] { ((*self).*on_end)(r); },
            [&](const std::string& what) {
              spdlog::error("{} {} failed: {}", kind, self->name(), what);
              self->done(internal_reply(what));
            });
}

// --- AnalysisWork ------------------------------------------------------

AnalysisWork::AnalysisWork(std::shared_ptr<ApiCore> core, AnalyzeCall call, Reporter reporter,
                           std::string name, Clock::time_point deadline)
    : EngineWork(std::move(core), std::move(call), std::move(reporter), std::move(name), deadline) {
  threads = call_.request.threads;
  priority = call_.priority;
  live = call_.request.limits.infinite;
  movetime_capped = priority == Priority::interactive;
  context_ = context_of(call_);
}

void AnalysisWork::start() {
  if (!may_start("analysis")) return;
  engine::AnalysisRequest request = call_.request;
  // The threads the scheduler granted, which its shares may have lowered
  // from those asked for: the engine takes exactly these from the pool.
  request.threads = threads;
  // Batch work (jobs) on the service's background threads, when it has them.
  request.background = priority == Priority::batch;
  // A synchronous request (or a batch's position) is held to the movetime
  // cap even when it asked for depth or nodes only; jobs and infinite
  // searches to the job deadline. A movetime (never above the cap: decode)
  // ends the search itself: the cap's deadline, a moment after this start,
  // would otherwise come just before it and call the search cut short.
  auto deadline = deadline_;
  if (movetime_capped && !request.limits.infinite && !request.limits.movetime_ms)
    deadline =
        std::min(deadline, began_ + std::chrono::milliseconds(core_->config.max_movetime_ms));
  request.limits.deadline = deadline;

  auto self = shared_from_this();
  engine::Callbacks callbacks;
#ifdef KIBITZ_TEST_HOOKS
  const bool crash = !test_crash_fen().empty() && (call_.position.fen == test_crash_fen() ||
                                                   call_.request.fen == test_crash_fen());
  callbacks.on_progress = [self, crash](const engine::Progress& p) {
    if (crash) test_crash(self->name());
    self->progress(encode_progress(p, self->context_));
  };
#else
  callbacks.on_progress = [self](const engine::Progress& p) {
    self->progress(encode_progress(p, self->context_));
  };
#endif
  callbacks.on_done = [self](const engine::Result& r) {
    contained_end(self, "analysis", r, &AnalysisWork::on_result);
  };
  auto handle = core_->service.analyze(request, std::move(callbacks));
  if (!handle) return not_started(handle.error());
  handle_.keep(*handle);
}

void AnalysisWork::on_result(const engine::Result& r) {
  handle_.finish();
#ifdef KIBITZ_TEST_HOOKS
  if (test_fail(call_))
    throw std::runtime_error("test hook: this analysis fails (KIBITZ_TEST_FAIL_FEN)");
#endif
  if (r.error) {
    core_->metrics.job_finished(false, true, r.nodes);
    spdlog::error("analysis {} game={} outcome=failed: {}", name(), game_name(context_.game),
                  *r.error);
    return done(internal_reply(*r.error));
  }
  json body = encode_result(r, context_);
  // Only a search that ran to its own limits is worth repeating: not one
  // stopped by a client or cut short by a deadline.
  const bool complete = !r.stopped && !r.cut_by_deadline;
  if (complete && !call_.cache_key.empty()) core_->cache.put(call_.cache_key, body);
  if (complete) library_keep(*core_, call_, r);
  core_->metrics.job_finished(r.stopped, false, r.nodes);
  spdlog::info(
      "analysis {} game={} limits={} multipv={} threads={} depth={} nodes={} time_ms={} "
      "outcome={}",
      name(), game_name(context_.game), call_.limits.dump(), call_.request.multipv,
      call_.request.threads, r.depth, r.nodes, r.time_ms,
      r.stopped           ? "stopped"
      : r.cut_by_deadline ? "deadline"
                          : "done");
  done(Reply{200, std::move(body), nullptr, {}});
}

// --- ReviewWork --------------------------------------------------------

ReviewWork::ReviewWork(std::shared_ptr<ApiCore> core, AnnotateCall call, Reporter reporter,
                       std::string name, Clock::time_point deadline)
    : EngineWork(std::move(core), std::move(call), std::move(reporter), std::move(name), deadline) {
  threads = std::max(1, call_.options.parallel);
  priority = call_.priority;
}

void ReviewWork::start() {
  if (!may_start("review")) return;
  review::Options options = call_.options;
  if (!options.finished.empty())
    spdlog::info("review {} game={} resumes with {} of {} plies finished", name(),
                 game_name(call_.game), options.finished.size(), call_.plies);
  options.parallel = threads;
  options.background = priority == Priority::batch;
  options.limits.deadline = deadline_;
  auto self = shared_from_this();
  review::Callbacks callbacks;
  callbacks.on_progress = [self](const review::Progress& p) {
    self->progress(json{{"ply", p.done}, {"plies", p.total}});
    if (Clock::now() >= self->deadline_ && !self->deadline_hit_.exchange(true)) self->stop();
  };
  callbacks.on_done = [self](const Expected<review::Review, Error>& r) {
    contained_end(self, "review", r, &ReviewWork::on_review);
  };
  auto handle =
      review::start(core_->service, call_.game, call_.record, options, std::move(callbacks));
  if (!handle) return not_started(handle.error());
  handle_.keep(*handle);
}

void ReviewWork::on_review(const Expected<review::Review, Error>& r) {
  handle_.finish();
  const int64_t ms = ms_since(began_);
  if (r) {
    core_->metrics.job_finished(false, false, r->nodes);
    spdlog::info("review {} game={} plies={} limits={} nodes={} time_ms={} outcome=done", name(),
                 game_name(call_.game), call_.plies, call_.limits.dump(), r->nodes, ms);
    return done(Reply{200,
                      encode_review(*r, call_.limits, call_.options.multipv, call_.thresholds),
                      nullptr,
                      {}});
  }
  const bool cancelled = r.error().code == "cancelled";
  core_->metrics.job_finished(cancelled && !deadline_hit_, !cancelled || deadline_hit_, 0);
  const auto log_level = cancelled ? spdlog::level::info : spdlog::level::err;
  spdlog::log(log_level, "review {} game={} plies={} time_ms={} outcome={}: {}", name(),
              game_name(call_.game), call_.plies, ms,
              deadline_hit_ ? "deadline_exceeded" : r.error().code, r.error().message);
  if (deadline_hit_) return done(deadline_reply());
  if (cancelled)
    return done(core_->scheduler.shutting_down()
                    ? shutting_down_reply()
                    : error_reply(409, "cancelled", "the review was stopped"));
  done(engine_error(r.error()));
}

// --- PerftWork ---------------------------------------------------------

PerftWork::PerftWork(std::shared_ptr<ApiCore> core, PerftCall call, Reporter reporter,
                     std::string name, Clock::time_point deadline)
    : EngineWork(std::move(core), std::move(call), std::move(reporter), std::move(name), deadline) {
  threads = 1;
  priority = Priority::interactive;
}

void PerftWork::start() {
  if (!may_start("perft")) return;
  auto self = shared_from_this();
  engine::PerftCallbacks callbacks;
  callbacks.on_done = [self](const Expected<PerftReport, Error>& r) {
    contained_end(self, "perft", r, &PerftWork::on_count);
  };
  // Held to the movetime cap like a synchronous analysis: a count the
  // client waits for never holds a search thread longer than any search.
  const auto until =
      std::min(deadline_, began_ + std::chrono::milliseconds(core_->config.max_movetime_ms));
  auto handle = core_->service.perft_async(call_.game, call_.fen, call_.depth, until,
                                           std::move(callbacks), call_.variant);
  if (!handle) return not_started(handle.error());
  handle_.keep(*handle);
}

nlohmann::json PerftWork::count_json(uint64_t nodes, int64_t us, uint64_t nps) const {
  nlohmann::json j = {{"game", game_name(call_.game)}, {"fen", call_.fen},
                      {"depth", call_.depth},          {"nodes", nodes},
                      {"time_ms", us / 1000},          {"nps", nps}};
  if (call_.variant == ChessVariant::chess960) j["variant"] = "chess960";
  return j;
}

void PerftWork::on_count(const Expected<PerftReport, Error>& r) {
  handle_.finish();
  const auto us =
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - began_).count();
  spdlog::info("perft {} game={} depth={} outcome={} time_ms={}", name(), game_name(call_.game),
               call_.depth, r ? "done" : r.error().code, us / 1000);
  const bool cancelled = !r && r.error().code == "cancelled";
  core_->metrics.job_finished(cancelled, !r && !cancelled, 0);  // perft nodes are not searched
  if (!r) {
    if (r.error().code == "cancelled")
      return done(core_->scheduler.shutting_down()
                      ? shutting_down_reply()
                      : error_reply(409, "cancelled", "the count was stopped"));
    if (r.error().code == "deadline_exceeded") return done(deadline_reply());
    return done(engine_error(r.error()));
  }
  const uint64_t nps = us > 0 ? uint64_t(double(r->nodes) * 1e6 / double(us)) : 0;
  done(Reply{200, count_json(r->nodes, us, nps), nullptr, {}});
}

}  // namespace kibitz::server
