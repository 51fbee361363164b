// The units of scheduled work: an analysis (one engine search), a review
// (a whole game) and a perft, in one shape (EngineWork). Each is made from
// a request decoded once (server/api/request.h), reports through its
// Reporter, and ends with Work::done exactly once.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "engine/service.h"
#include "review/review.h"
#include "server/api/api_core.h"
#include "server/api/cache.h"
#include "server/api/encode.h"
#include "server/api/library.h"
#include "server/api/metrics.h"
#include "server/api/request.h"
#include "server/api/scheduler.h"
#include "server/store/store.h"

namespace kibitz::server {

// The engine's handle of a started work, kept so that stop() can reach it.
// The engine may finish (finish()) before start has stored the handle, and a
// stop may come before either: each order ends right.
template <class Handle>
class HandleSlot {
 public:
  // After the engine started: keeps the handle unless the work has finished,
  // and stops it at once when a stop came first.
  void keep(const std::shared_ptr<Handle>& h) {
    bool stop_now;
    {
      std::lock_guard lock(mutex_);
      if (!finished_) handle_ = h;
      stop_now = stop_requested_ && !finished_;
    }
    if (stop_now) h->stop();
  }
  void stop() {
    std::shared_ptr<Handle> h;
    {
      std::lock_guard lock(mutex_);
      stop_requested_ = true;
      h = handle_;
    }
    if (h) h->stop();  // outside the lock: the result may be reported on this thread
  }
  // The result came: drops the handle, whose callbacks hold the work.
  void finish() {
    std::lock_guard lock(mutex_);
    finished_ = true;
    handle_.reset();
  }

 private:
  std::mutex mutex_;
  std::shared_ptr<Handle> handle_;
  bool stop_requested_ = false;
  bool finished_ = false;
};

// A job's start, before its search: counts the attempt in the store
// (server/api/job_recovery.cpp). An answer instead ends the work without a
// search.
using BeforeSearch = std::function<std::optional<Reply>()>;

// The one shape of a unit of work: the Api's core, the request decoded once
// (`Call`), its deadline, and the engine's handle (`Handle`) that stop()
// reaches. An analysis, a review and a perft differ only in how they start
// the engine and what their result is (`start` and the engine's callback).
template <class Call, class Handle>
class EngineWork : public Work {
 public:
  EngineWork(std::shared_ptr<ApiCore> core, Call call, Reporter reporter, std::string name,
             engine::Clock::time_point deadline)
      : Work(std::move(reporter), std::move(name)),
        core_(std::move(core)),
        call_(std::move(call)),
        deadline_(deadline) {
    queue_deadline = deadline;
  }
  BeforeSearch before_search;  // a job's, set before it is submitted

 protected:
  void stop() final { handle_.stop(); }
  // The first step of start(): false, with the work answered, when its
  // deadline has passed while it was queued or before_search answered
  // instead of a search.
  bool may_start(const char* kind);
  // The engine did not start: its error is the answer.
  void not_started(const Error& e);
  // The engine's result callback: `on_end` with the exceptions contained
  // (an exception is the work's 500).
  template <class Self, class Result, class Fn>
  static void contained_end(const std::shared_ptr<Self>& self, const char* kind, const Result& r,
                            Fn on_end);

  std::shared_ptr<ApiCore> core_;
  Call call_;
  engine::Clock::time_point deadline_;
  engine::Clock::time_point began_;  // when start() ran
  HandleSlot<Handle> handle_;
};

class AnalysisWork final : public EngineWork<AnalyzeCall, engine::SearchHandle>,
                           public std::enable_shared_from_this<AnalysisWork> {
 public:
  AnalysisWork(std::shared_ptr<ApiCore> core, AnalyzeCall call, Reporter reporter, std::string name,
               engine::Clock::time_point deadline);
  // Its search is held to max_movetime_ms, whatever limits it asked for:
  // what a client waits for (interactive work, a batch's positions); else
  // to its deadline (a job). Set before it is submitted.
  bool movetime_capped = false;

 private:
  void start() override;
  void on_result(const engine::Result& r);

  ResultContext context_;
};

class ReviewWork final : public EngineWork<AnnotateCall, review::Handle>,
                         public std::enable_shared_from_this<ReviewWork> {
 public:
  ReviewWork(std::shared_ptr<ApiCore> core, AnnotateCall call, Reporter reporter, std::string name,
             engine::Clock::time_point deadline);

 private:
  void start() override;
  void on_review(const Expected<review::Review, Error>& r);

  std::atomic<bool> deadline_hit_{false};
};

class PerftWork final : public EngineWork<PerftCall, engine::SearchHandle>,
                        public std::enable_shared_from_this<PerftWork> {
 public:
  PerftWork(std::shared_ptr<ApiCore> core, PerftCall call, Reporter reporter, std::string name,
            engine::Clock::time_point deadline);

 private:
  void start() override;
  void on_count(const Expected<PerftReport, Error>& r);
  nlohmann::json count_json(uint64_t nodes, int64_t us, uint64_t nps) const;
};

}  // namespace kibitz::server
