// The two kinds of scheduled work: one analysis (engine search) and one
// whole-game review. Both report through a Sink, which the caller points at
// a streaming client or at a job record.
#pragma once

#include <atomic>
#include <functional>
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

// What work needs of the Api; shared so that work still finishing on a
// search thread never outlives it.
struct ApiCore {
  ApiCore(const Config& c, engine::Service& s, Metrics& m)
      : config(c),
        service(s),
        metrics(m),
        cache(c.cache_entries),
        scheduler(std::make_shared<Scheduler>(s.threads(), c.queue_size, m,
                                              std::chrono::milliseconds(c.live_slice_ms))) {}
  Config config;
  engine::Service& service;
  Metrics& metrics;
  ResultCache cache;
  std::shared_ptr<Scheduler> scheduler;
};

struct Sink {
  std::function<void()> on_start;               // the work got its threads
  std::function<void(nlohmann::json)> on_info;  // progress
  std::function<void(Reply)> on_done;           // exactly once
};

class AnalysisWork final : public Work, public std::enable_shared_from_this<AnalysisWork> {
 public:
  AnalysisWork(std::shared_ptr<ApiCore> core, AnalyzeCall call, Sink sink, std::string name,
               engine::Clock::time_point deadline);
  void start() override;
  void stop() override;
  void abort(Reply why) override;

 private:
  void on_result(const engine::Result& r);

  std::shared_ptr<ApiCore> core_;
  AnalyzeCall call_;
  ResultContext context_;
  Sink sink_;
  std::string name_;  // for logs
  engine::Clock::time_point deadline_;
  engine::Clock::time_point search_deadline_;  // deadline_, or sooner for interactive searches
  std::mutex mutex_;
  std::shared_ptr<engine::SearchHandle> handle_;
  bool stop_requested_ = false;
  bool finished_ = false;  // the result came; handle_ stays empty from then on
};

class AnnotateWork final : public Work, public std::enable_shared_from_this<AnnotateWork> {
 public:
  AnnotateWork(std::shared_ptr<ApiCore> core, AnnotateCall call, Sink sink, std::string name,
               engine::Clock::time_point deadline);
  void start() override;
  void stop() override;
  void abort(Reply why) override;

 private:
  void on_done(const Expected<review::Review, Error>& r);

  std::shared_ptr<ApiCore> core_;
  AnnotateCall call_;
  Sink sink_;
  std::string name_;
  engine::Clock::time_point deadline_;
  engine::Clock::time_point started_;
  std::mutex mutex_;
  std::shared_ptr<review::Handle> handle_;
  bool stop_requested_ = false;
  bool finished_ = false;  // the result came; handle_ stays empty from then on
  std::atomic<bool> deadline_hit_{false};
};

}  // namespace kibitz::server
