#include "server/api/batch.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "common/contain.h"
#include "server/api/interactive.h"
#include "server/api/replies.h"
#include "server/api/work.h"

namespace kibitz::server {

namespace {

using engine::Clock;
using nlohmann::json;

Reply envelope_error(std::string message) {
  return error_reply(400, "invalid_request", std::move(message));
}

// The error of one part of the batch, its message prefixed with where.
Reply located(Reply r, const std::string& where) {
  if (r.body.is_object() && r.body.contains("error") && r.body["error"].is_object()) {
    json& e = r.body["error"];
    e["message"] = where + ": " + e.value("message", "");
  }
  return r;
}

// How long a position the scheduler refused waits before it is offered
// again when none of its batch's own positions is running (one of those
// ending offers it at once).
constexpr std::chrono::milliseconds kRetry{50};

class BatchRun;

class BatchTicket final : public Ticket {
 public:
  explicit BatchTicket(std::weak_ptr<BatchRun> run) : run_(std::move(run)) {}
  void cancel() override;

 private:
  std::weak_ptr<BatchRun> run_;
};

// One batch while it runs: the positions waiting (pending_), those in the
// scheduler (in_flight_, at most window_), the lines of those answered.
// Whoever answers a position offers the next ones (pump); one thread pumps
// at a time, others leave it a note (again_), so a position that ends
// inside its own submission does not recurse.
class BatchRun final : public std::enable_shared_from_this<BatchRun> {
 public:
  BatchRun(std::shared_ptr<ApiCore> core, BatchCall call, std::string owner, std::string name,
           Clock::time_point deadline, Reporter reporter, TimerThread& retries)
      : core_(std::move(core)),
        call_(std::move(call)),
        owner_(std::move(owner)),
        name_(std::move(name)),
        deadline_(deadline),
        reporter_(std::move(reporter)),
        retries_(retries),
        lines_(call_.positions.size()),
        began_(Clock::now()) {
    // The threads batch work of one owner may hold at once (scheduler.h):
    // more positions in the scheduler would only wait there.
    const Shares& s = core_->scheduler.shares();
    int threads = core_->scheduler.capacity() - s.interactive_threads;
    if (s.max_threads_per_owner > 0) threads = std::min(threads, s.max_threads_per_owner);
    size_t window = size_t(std::max(1, threads));
    // Room for the client's other work under its work cap.
    if (s.max_work_per_owner > 0)
      window = std::min(window, std::max<size_t>(1, s.max_work_per_owner / 2));
    window_ = window;
  }

  // Answers what needs no search (a decoding error, a position without a
  // move, a cached result) and offers the first positions.
  void begin() {
    for (size_t i = 0; i < call_.positions.size(); ++i) {
      auto& p = call_.positions[i];
      if (!p) {
        answer(i, p.error());
        continue;
      }
      if (auto now = answer_without_search(*core_, *p, false)) {
        answer(i, std::move(*now));
        continue;
      }
      std::lock_guard lock(mutex_);
      pending_.push_back(i);
    }
    pump();
    finish_if_done();
  }

  void cancel() {
    std::vector<std::shared_ptr<Work>> running;
    std::deque<size_t> waiting;
    {
      std::lock_guard lock(mutex_);
      if (stopped_) return;
      stopped_ = true;
      waiting.swap(pending_);
      for (auto& [i, w] : in_flight_)
        if (w) running.push_back(w);
    }
    for (size_t i : waiting) answer(i, error_reply(409, "cancelled", "the batch was stopped"));
    for (auto& w : running) core_->scheduler.cancel(w);
    finish_if_done();
  }

 private:
  // Offers pending positions while the window has room.
  void pump() {
    {
      std::lock_guard lock(mutex_);
      if (pumping_) {
        again_ = true;
        return;
      }
      pumping_ = true;
    }
    for (;;) {
      std::optional<size_t> next;
      bool late = false;
      {
        std::lock_guard lock(mutex_);
        if (!stopped_ && !blocked_ && in_flight_.size() < window_ && !pending_.empty()) {
          next = pending_.front();
          pending_.pop_front();
          in_flight_[*next] = nullptr;  // taken; its work is set before it is submitted
          late = Clock::now() >= deadline_;
        } else if (again_) {
          again_ = false;
          continue;
        } else {
          pumping_ = false;
          break;
        }
      }
      if (late) {
        {
          std::lock_guard lock(mutex_);
          in_flight_.erase(*next);
        }
        answer(*next, deadline_reply());
        continue;
      }
      submit(*next);
    }
    finish_if_done();
  }

  void submit(size_t i) {
    // The work's answer holds the batch: while a position runs (or waits
    // for its retry), the batch lives.
    auto self = shared_from_this();
    Reporter r;
    r.on_done = [self, i](Reply reply) { self->position_done(i, std::move(reply)); };
    auto work = std::make_shared<AnalysisWork>(core_, *call_.positions[i], std::move(r),
                                               name_ + "." + std::to_string(i), deadline_);
    work->owner = owner_;
    work->movetime_capped = call_.movetime_capped;
    {
      std::lock_guard lock(mutex_);
      in_flight_[i] = work;
    }
    const auto admission = core_->scheduler.submit(work);
    if (admission == Scheduler::Admission::accepted) {
      bool stop_now;
      {
        std::lock_guard lock(mutex_);
        stop_now = stopped_;  // a cancel that came before the work was queued
      }
      if (stop_now) core_->scheduler.cancel(work);
      return;
    }
    if (admission == Scheduler::Admission::shutting_down) {
      {
        std::lock_guard lock(mutex_);
        in_flight_.erase(i);
      }
      answer(i, shutting_down_reply());
      return cancel();
    }
    // Refused for now (the queue, or the owner's cap, full of other work):
    // offered again when one of this batch's positions ends, or soon.
    bool wait_timer;
    {
      std::lock_guard lock(mutex_);
      in_flight_.erase(i);
      pending_.push_front(i);
      blocked_ = true;
      wait_timer = in_flight_.empty();
    }
    if (wait_timer) retries_.at(TimerThread::Clock::now() + kRetry, [self] { self->unblock(); });
  }

  void unblock() {
    {
      std::lock_guard lock(mutex_);
      blocked_ = false;
    }
    pump();
  }

  void position_done(size_t i, Reply reply) {
    {
      std::lock_guard lock(mutex_);
      in_flight_.erase(i);
      blocked_ = false;
    }
    answer(i, std::move(reply));
    pump();
  }

  // Records a position's answer and reports its line.
  void answer(size_t i, Reply reply) {
    json line;
    if (reply.ok()) {
      line = std::move(reply.json_body());
      nodes_ += line.value("nodes", uint64_t{0});
    } else {
      line = {{"error", reply.error()}};
    }
    line["index"] = i;
    std::lock_guard lock(report_mutex_);
    if (reply.ok())
      ++answered_;
    else
      ++errors_;
    if (reporter_.on_progress)
      contained([&] { reporter_.on_progress(line); },
                [&](const std::string& what) {
                  spdlog::error("batch {}: the receiver of a line threw: {}", name_, what);
                });
    lines_[i] = std::move(line);
  }

  // Once every position is answered: the summary, exactly once.
  void finish_if_done() {
    std::lock_guard lock(report_mutex_);
    if (finished_ || answered_ + errors_ < lines_.size()) return;
    finished_ = true;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - began_);
    bool stopped;
    {
      std::lock_guard inner(mutex_);
      stopped = stopped_;
    }
    json summary = {{"positions", lines_.size()}, {"answered", answered_}, {"errors", errors_},
                    {"nodes", nodes_.load()},     {"time_ms", ms.count()}, {"stopped", stopped}};
    spdlog::info("batch {} positions={} answered={} errors={} nodes={} time_ms={} outcome={}",
                 name_, lines_.size(), answered_, errors_, nodes_.load(), ms.count(),
                 stopped ? "stopped" : "done");
    json body = {{"summary", std::move(summary)}, {"results", std::move(lines_)}};
    auto done = std::move(reporter_.on_done);
    if (done)
      contained(
          [&] {
            done(Reply{200, std::move(body), nullptr, {}});
          },
          [&](const std::string& what) {
            spdlog::error("batch {}: the receiver of its answer threw: {}", name_, what);
          });
  }

  std::shared_ptr<ApiCore> core_;
  const BatchCall call_;
  const std::string owner_, name_;
  const Clock::time_point deadline_;
  Reporter reporter_;
  TimerThread& retries_;
  size_t window_ = 1;

  std::mutex mutex_;  // the positions' places
  std::deque<size_t> pending_;
  std::unordered_map<size_t, std::shared_ptr<Work>> in_flight_;
  bool pumping_ = false, again_ = false, blocked_ = false, stopped_ = false;

  std::mutex report_mutex_;  // the lines and their order: every line before the summary
  std::vector<json> lines_;
  size_t answered_ = 0, errors_ = 0;
  std::atomic<uint64_t> nodes_{0};
  bool finished_ = false;
  const Clock::time_point began_;
};

void BatchTicket::cancel() {
  if (auto run = run_.lock()) run->cancel();
}

}  // namespace

Expected<BatchCall, Reply> decode_batch(const json& body, const Caps& caps,
                                        engine::Service& service) {
  if (!body.is_object())
    return Unexpected(envelope_error("the request body must be a JSON object"));
  auto it = body.find("positions");
  if (it == body.end() || !it->is_array())
    return Unexpected(
        envelope_error("'positions' must be a list of positions, each {\"fen\", \"moves\", ...}"));
  const size_t cap = caps.config.max_batch_positions;
  if (it->empty()) return Unexpected(envelope_error("'positions' is empty"));
  if (it->size() > cap)
    return Unexpected(envelope_error("'positions' has " + std::to_string(it->size()) +
                                     " entries; at most " + std::to_string(cap) +
                                     " are allowed (max_batch_positions)"));
  for (size_t i = 0; i < it->size(); ++i)
    if (!(*it)[i].is_object())
      return Unexpected(envelope_error("'positions[" + std::to_string(i) + "]' must be an object"));
  // The batch's other fields are every position's defaults: checked once,
  // as a request of their own; an error there is the whole batch's.
  json defaults = json::object();
  for (const auto& [key, value] : body.items())
    if (key != "positions") defaults[key] = value;
  if (auto d = decode_analyze(defaults, caps, service, Priority::batch, false); !d)
    return Unexpected(located(d.error(), "the batch's defaults"));
  BatchCall call;
  call.positions.reserve(it->size());
  for (size_t i = 0; i < it->size(); ++i) {
    // A position's field replaces the default of that name whole
    // ("limits" too: a position's limits are all of its limits).
    json merged = defaults;
    for (const auto& [key, value] : (*it)[i].items()) merged[key] = value;
    auto p = decode_analyze(merged, caps, service, Priority::batch, false);
    if (p)
      call.positions.emplace_back(std::move(*p));
    else
      call.positions.emplace_back(
          Unexpected(located(p.error(), "positions[" + std::to_string(i) + "]")));
  }
  return call;
}

std::shared_ptr<Ticket> Batches::run(const json& request, const Caller& caller, Reporter reporter) {
  auto answer_now = [&](Reply r) -> std::shared_ptr<Ticket> {
    if (reporter.on_done) reporter.on_done(std::move(r));
    return nullptr;
  };
  if (core_->shutting_down) return answer_now(shutting_down_reply());
  auto call = decode_batch(request, core_->caps, core_->service);
  if (!call) return answer_now(call.error());
  return start(std::move(*call), caller.owner, core_->next_name('b'), core_->deadline(),
               std::move(reporter));
}

std::shared_ptr<Ticket> Batches::start(BatchCall call, const std::string& owner,
                                       const std::string& name, Clock::time_point deadline,
                                       Reporter reporter) {
  auto run = std::make_shared<BatchRun>(core_, std::move(call), owner, name, deadline,
                                        std::move(reporter), retries_);
  run->begin();
  return std::make_shared<BatchTicket>(run);
}

}  // namespace kibitz::server
