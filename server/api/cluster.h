// Several instances as one service (store.backend "redis"): jobs go to the
// store's shared queue instead of this instance's scheduler, and this
// instance takes jobs from that queue while it has search threads free.
// A job run elsewhere is read and cancelled through the store. The job
// service's part of it (JobService::start_cluster, stop_held) is defined
// in cluster.cpp too.
#pragma once

#include <atomic>
#include <functional>
#include <string_view>
#include <thread>

#include "server/api/api.h"
#include "server/api/scheduler.h"
#include "server/store/job_queue.h"

namespace kibitz::server {

// A thread taking jobs from the queue when the scheduler has room: `run`
// starts each (as a recovered job: a review resumes from its finished
// plies). Stopped by stop() or the destructor.
class Dispatcher {
 public:
  Dispatcher(Scheduler& scheduler, store::JobQueue& queue,
             std::function<void(store::JobRecord&)> run);
  ~Dispatcher() { stop(); }
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;
  void stop();

 private:
  void loop();

  Scheduler& scheduler_;
  store::JobQueue& queue_;
  std::function<void(store::JobRecord&)> run_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// GET /v1/jobs/{id} of a job this instance does not hold: as the store
// keeps it, nullopt when unknown, or 503 storage_unavailable when the
// store cannot be read (never 404 for a job the store may still hold).
std::optional<Reply> stored_job_reply(store::Store& store, std::string_view id);

// DELETE /v1/jobs/{id} of a job this instance does not hold: a queued job
// ends as cancelled at once; a running one is marked and its instance told
// (it stops and keeps its best result). nullopt when unknown; 503 as above.
std::optional<Reply> cancel_stored_job(store::Store& store, std::string_view id);

}  // namespace kibitz::server
