#include "server/api/work.h"

#include <spdlog/spdlog.h>

namespace kibitz::server {

using engine::Clock;
using nlohmann::json;

namespace {

int64_t ms_since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

Reply deadline_reply() {
  return error_reply(503, "deadline_exceeded", "the job's deadline passed before it finished");
}

}  // namespace

AnalysisWork::AnalysisWork(std::shared_ptr<ApiCore> core, AnalyzeCall call, Sink sink,
                           std::string name, Clock::time_point deadline)
    : core_(std::move(core)),
      call_(std::move(call)),
      sink_(std::move(sink)),
      name_(std::move(name)),
      deadline_(deadline) {
  threads = call_.request.threads;
  priority = call_.request.priority;
  live = call_.request.limits.infinite;
  context_.game = call_.request.game;
  context_.fen = call_.position.fen;
  context_.pov_white = call_.pov_white;
  context_.limits = call_.limits;
  context_.multipv = call_.request.multipv;
}

void AnalysisWork::start() {
  if (sink_.on_start) sink_.on_start();
  const auto now = Clock::now();
  if (now >= deadline_) {
    core_->metrics.job_finished(false, true, 0);
    spdlog::info("analysis {} game={} outcome=deadline_exceeded (queued too long)", name_,
                 game_name(context_.game));
    sink_.on_done(deadline_reply());
    core_->scheduler->finished(*this);
    return;
  }
  engine::AnalysisRequest request = call_.request;
  // A synchronous request is held to the movetime cap even when it asked
  // for depth or nodes only; jobs and infinite searches to the job deadline.
  auto deadline = deadline_;
  if (request.priority == engine::Priority::interactive && !request.limits.infinite)
    deadline = std::min(deadline, now + std::chrono::milliseconds(core_->config.max_movetime_ms));
  request.limits.deadline = deadline;
  search_deadline_ = deadline;

  auto self = shared_from_this();
  engine::Callbacks callbacks;
  callbacks.on_iteration = [self](const engine::Progress& p) {
    if (self->sink_.on_info) self->sink_.on_info(encode_progress(p, self->context_));
  };
  callbacks.on_done = [self](const engine::Result& r) { self->on_result(r); };
  auto handle = core_->service.analyze(request, std::move(callbacks));
  if (!handle) {
    core_->metrics.job_finished(false, true, 0);
    spdlog::warn("analysis {} game={} outcome={}: {}", name_, game_name(context_.game),
                 handle.error().code, handle.error().message);
    sink_.on_done(engine_error(handle.error()));
    core_->scheduler->finished(*this);
    return;
  }
  bool stop_now;
  {
    // The search may have finished already, on a search thread; then its
    // handle is not kept (it would hold this work through its callbacks).
    std::lock_guard lock(mutex_);
    if (!finished_) handle_ = *handle;
    stop_now = stop_requested_ && !finished_;
  }
  if (stop_now) (*handle)->stop();
}

void AnalysisWork::stop() {
  std::shared_ptr<engine::SearchHandle> h;
  {
    std::lock_guard lock(mutex_);
    stop_requested_ = true;
    h = handle_;
  }
  if (h) h->stop();  // outside the lock: the result may be reported on this thread
}

void AnalysisWork::abort(Reply why) { sink_.on_done(std::move(why)); }

void AnalysisWork::on_result(const engine::Result& r) {
  {
    // The search is over: drop its handle, whose callbacks hold this work.
    std::lock_guard lock(mutex_);
    finished_ = true;
    handle_.reset();
  }
  json body = encode_result(r, context_);
  // Only a search that ran to its own limits is worth repeating: not one
  // stopped by a client or cut short by a deadline.
  const bool complete = !r.stopped && Clock::now() < search_deadline_;
  if (complete && !call_.cache_key.empty()) core_->cache.put(call_.cache_key, body);
  core_->metrics.job_finished(r.stopped, false, r.nodes);
  spdlog::info(
      "analysis {} game={} limits={} multipv={} threads={} depth={} nodes={} time_ms={} "
      "outcome={}",
      name_, game_name(context_.game), call_.limits.dump(), call_.request.multipv,
      call_.request.threads, r.depth, r.nodes, r.time_ms, r.stopped ? "stopped" : "done");
  sink_.on_done(Reply{200, std::move(body), {}});
  core_->scheduler->finished(*this);
}

AnnotateWork::AnnotateWork(std::shared_ptr<ApiCore> core, AnnotateCall call, Sink sink,
                           std::string name, Clock::time_point deadline)
    : core_(std::move(core)),
      call_(std::move(call)),
      sink_(std::move(sink)),
      name_(std::move(name)),
      deadline_(deadline) {
  threads = std::max(1, call_.options.parallel);
  priority = call_.options.priority;
}

void AnnotateWork::start() {
  if (sink_.on_start) sink_.on_start();
  started_ = Clock::now();
  if (started_ >= deadline_) {
    core_->metrics.job_finished(false, true, 0);
    sink_.on_done(deadline_reply());
    core_->scheduler->finished(*this);
    return;
  }
  review::Options options = call_.options;
  options.parallel = threads;
  options.limits.deadline = deadline_;
  auto self = shared_from_this();
  review::Callbacks callbacks;
  const int plies = call_.plies;
  callbacks.on_progress = [self, plies](int done, int total) {
    if (self->sink_.on_info) self->sink_.on_info(json{{"ply", done}, {"plies", total}});
    (void)plies;
    if (Clock::now() >= self->deadline_ && !self->deadline_hit_.exchange(true)) self->stop();
  };
  callbacks.on_done = [self](const Expected<review::Review, Error>& r) { self->on_done(r); };
  auto handle =
      review::start(core_->service, call_.game, call_.record, options, std::move(callbacks));
  if (!handle) {
    core_->metrics.job_finished(false, true, 0);
    sink_.on_done(engine_error(handle.error()));
    core_->scheduler->finished(*this);
    return;
  }
  bool stop_now;
  {
    // The search may have finished already, on a search thread; then its
    // handle is not kept (it would hold this work through its callbacks).
    std::lock_guard lock(mutex_);
    if (!finished_) handle_ = *handle;
    stop_now = stop_requested_ && !finished_;
  }
  if (stop_now) (*handle)->stop();
}

void AnnotateWork::stop() {
  std::shared_ptr<review::Handle> h;
  {
    std::lock_guard lock(mutex_);
    stop_requested_ = true;
    h = handle_;
  }
  if (h) h->stop();
}

void AnnotateWork::abort(Reply why) { sink_.on_done(std::move(why)); }

void AnnotateWork::on_done(const Expected<review::Review, Error>& r) {
  {
    std::lock_guard lock(mutex_);
    finished_ = true;
    handle_.reset();  // as in AnalysisWork::on_result: no cycle through the callbacks
  }
  const int64_t ms = ms_since(started_);
  if (r) {
    core_->metrics.job_finished(false, false, r->nodes);
    spdlog::info("review {} game={} plies={} limits={} nodes={} time_ms={} outcome=done", name_,
                 game_name(call_.game), call_.plies, call_.limits.dump(), r->nodes, ms);
    sink_.on_done(
        Reply{200, encode_review(*r, call_.limits, call_.options.multipv, call_.thresholds), {}});
  } else {
    const bool cancelled = r.error().code == "cancelled";
    core_->metrics.job_finished(cancelled && !deadline_hit_, !cancelled || deadline_hit_, 0);
    spdlog::info("review {} game={} plies={} time_ms={} outcome={}", name_, game_name(call_.game),
                 call_.plies, ms, deadline_hit_ ? "deadline_exceeded" : r.error().code);
    if (deadline_hit_)
      sink_.on_done(deadline_reply());
    else if (cancelled)
      sink_.on_done(error_reply(409, "cancelled", "the review was stopped"));
    else
      sink_.on_done(engine_error(r.error()));
  }
  core_->scheduler->finished(*this);
}

}  // namespace kibitz::server
