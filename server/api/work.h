// The units of scheduled work: an analysis (one engine search), a review
// (a whole game) and a perft. Each is made from a request decoded once
// (server/api/request.h), reports through its Reporter, and ends with
// Work::done exactly once.
#pragma once

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/service.h"
#include "review/review.h"
#include "server/api/cache.h"
#include "server/api/encode.h"
#include "server/api/library.h"
#include "server/api/metrics.h"
#include "server/api/request.h"
#include "server/api/scheduler.h"
#include "server/store/store.h"

namespace kibitz::server {

// The scheduler's shares (scheduler.h) from the per-client settings.
inline Shares shares_of(const Config& c, int pool) {
  Shares s;
  s.max_work_per_owner = c.max_work_per_client;
  s.max_threads_per_owner =
      c.max_threads_per_client > 0 ? c.max_threads_per_client : (std::max(1, pool) + 1) / 2;
  s.interactive_threads = c.interactive_reserved_threads;
  s.interactive_queue = c.interactive_reserved_queue;
  return s;
}

// What work needs of the Api, shared: a work or a ticket that outlives the
// Api (a session cancelling late) still finds it. Nothing in it owns a
// thread, so it may be freed on any thread.
struct ApiCore {
  ApiCore(const Config& c, engine::Service& s, std::shared_ptr<store::Store> st)
      : config(c),
        service(s),
        store(std::move(st)),
        cache(c.cache_entries),
        scheduler(s.threads(), c.queue_size, metrics, std::chrono::milliseconds(c.live_slice_ms),
                  shares_of(c, s.threads())) {}
  Config config;
  engine::Service& service;             // outlives the Api
  std::shared_ptr<store::Store> store;  // jobs and the evaluation library
  LibraryCounters library;
  Metrics metrics;
  ResultCache cache;
  Scheduler scheduler;
};

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

class AnalysisWork final : public Work, public std::enable_shared_from_this<AnalysisWork> {
 public:
  AnalysisWork(std::shared_ptr<ApiCore> core, AnalyzeCall call, Reporter reporter, std::string name,
               engine::Clock::time_point deadline);

 private:
  void start() override;
  void stop() override;
  void on_result(const engine::Result& r);

  std::shared_ptr<ApiCore> core_;
  AnalyzeCall call_;
  ResultContext context_;
  engine::Clock::time_point deadline_;
  engine::Clock::time_point search_deadline_;  // deadline_, or sooner for interactive searches
  HandleSlot<engine::SearchHandle> handle_;
};

class ReviewWork final : public Work, public std::enable_shared_from_this<ReviewWork> {
 public:
  ReviewWork(std::shared_ptr<ApiCore> core, AnnotateCall call, Reporter reporter, std::string name,
             engine::Clock::time_point deadline);

 private:
  void start() override;
  void stop() override;
  void on_review(const Expected<review::Review, Error>& r);

  std::shared_ptr<ApiCore> core_;
  AnnotateCall call_;
  engine::Clock::time_point deadline_;
  engine::Clock::time_point started_;
  HandleSlot<review::Handle> handle_;
  std::atomic<bool> deadline_hit_{false};
};

class PerftWork final : public Work, public std::enable_shared_from_this<PerftWork> {
 public:
  PerftWork(std::shared_ptr<ApiCore> core, PerftCall call, Reporter reporter, std::string name,
            engine::Clock::time_point deadline);

 private:
  void start() override;
  void stop() override;
  void on_count(const Expected<PerftReport, Error>& r);

  std::shared_ptr<ApiCore> core_;
  PerftCall call_;
  engine::Clock::time_point deadline_;
  engine::Clock::time_point started_;
  HandleSlot<engine::SearchHandle> handle_;
};

}  // namespace kibitz::server
