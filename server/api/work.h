// The units of scheduled work: an analysis (one engine search), a review
// (a whole game) and a perft. Each is made from a request decoded once
// (server/api/request.h), reports through its Reporter, and ends with
// Work::done exactly once.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/service.h"
#include "review/review.h"
#include "server/api/cache.h"
#include "server/api/encode.h"
#include "server/api/metrics.h"
#include "server/api/request.h"
#include "server/api/scheduler.h"

namespace kibitz::server {

// What work needs of the Api, shared: a work or a ticket that outlives the
// Api (a session cancelling late) still finds it. Nothing in it owns a
// thread, so it may be freed on any thread.
struct ApiCore {
  ApiCore(const Config& c, engine::Service& s)
      : config(c),
        service(s),
        cache(c.cache_entries),
        scheduler(s.threads(), c.queue_size, metrics, std::chrono::milliseconds(c.live_slice_ms)) {}
  Config config;
  engine::Service& service;  // outlives the Api
  Metrics metrics;
  ResultCache cache;
  Scheduler scheduler;
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
  std::mutex mutex_;
  std::shared_ptr<engine::SearchHandle> handle_;
  bool stop_requested_ = false;
  bool finished_ = false;  // the result came; handle_ stays empty from then on
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
  std::mutex mutex_;
  std::shared_ptr<review::Handle> handle_;
  bool stop_requested_ = false;
  bool finished_ = false;
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
  std::mutex mutex_;
  std::shared_ptr<engine::SearchHandle> handle_;
  bool stop_requested_ = false;
  bool finished_ = false;
};

}  // namespace kibitz::server
