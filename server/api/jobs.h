// Jobs: work whose result is fetched later (POST /v1/jobs, POST
// /v1/games/annotate). Finished jobs are kept for the retention time, then
// forgotten.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/analysis.h"
#include "server/api/api.h"
#include "server/api/replies.h"
#include "server/api/work.h"

namespace kibitz::server {

// A job: the record of a work whose answer is fetched later.
struct Job {
  std::string id, kind;  // kind: "analyze", "annotate" or "batch"
  std::string owner;     // the client it counts against (max_jobs_per_client)
  engine::Clock::time_point created;

  mutable std::mutex mutex;
  mutable std::condition_variable finished;  // notified when finished_at is set
  // While unfinished, queued or running as its work is; then done,
  // cancelled or failed.
  JobStatus status = JobStatus::queued;
  nlohmann::json progress = nullptr, result = nullptr, error = nullptr;
  bool cancel_requested = false;
  // Stopped by a shutdown rather than by a client: its end is not stored,
  // so that it runs again after the restart.
  bool interrupted = false;
  std::optional<engine::Clock::time_point> finished_at;
  std::shared_ptr<Work> work;  // until it finishes
  // A batch job's instead of a work (its positions are works of their
  // own, batch.h): what stops it.
  std::shared_ptr<Ticket> ticket;
  // Called once, just after it finishes (outside `mutex`), on the thread
  // that finished it: when_finished adds to them.
  std::vector<std::function<void()>> on_finished;
  // Its search's starts as the store counted them when this process last
  // started it; 0 while it has not started here.
  int attempts = 0;

  // Unfinished: "queued" or "running" as its work is, or "cancelled" once a
  // client's DELETE came (its end will say so).
  nlohmann::json to_json() const;
  // Waits until the job has finished or `limit` has passed: true if finished.
  bool wait_finished(std::chrono::milliseconds limit) const;
  // Calls `f` once the job has finished: at once (on this thread) if it
  // has, else on the thread that finishes it.
  void when_finished(std::function<void()> f);
  // A reporter that records into this job, and into the store of `core`:
  // progress written behind, the end written before the job shows it.
  static Reporter reporter_for(const std::shared_ptr<Job>& job, std::weak_ptr<ApiCore> core);
};

// The one JSON view of a job (GET and DELETE /v1/jobs/{id}), whether held
// by this instance (Job::to_json) or read from the store.
nlohmann::json job_json(std::string_view id, std::string_view kind, JobStatus status,
                        const nlohmann::json& progress, const nlohmann::json& result,
                        const nlohmann::json& error);

// Wall-clock milliseconds since the epoch: what the store keeps.
int64_t wall_ms();

// 128 bits from the operating system's generator (getrandom), as hex: an
// id cannot be guessed from others, so knowing ids is what lets a client
// read or cancel a job.
std::string random_job_id();

// The jobs this instance holds, by id: a map in memory with its caps
// (max_jobs, max_jobs_per_client) and retention. Not the store: what
// outlives the process is kept in store::Store. Thread-safe.
class JobTable {
 public:
  JobTable(size_t max_jobs, size_t max_per_owner, std::chrono::seconds retention)
      : max_jobs_(max_jobs), max_per_owner_(max_per_owner), retention_(retention) {}

  using Full = JobsFull;  // why create gave nullptr (replies.h)
  // A new job of this owner, or nullptr when max_jobs are kept already
  // (`full` = all) or max_per_owner of this owner's (`full` = owner); `id`
  // "": a random one.
  std::shared_ptr<Job> create(std::string kind, std::string owner, Full* full = nullptr,
                              const std::string& id = "");
  // What create would answer now for this owner (Full::no: room), without
  // creating anything: a request refused at a cap is refused before it is
  // decoded.
  Full room(const std::string& owner);
  // A job kept before a restart, whatever the count.
  void restore(std::shared_ptr<Job> job);
  void remove(const std::string& id);  // a job that could not be queued
  // Forgets this very job, not one restored under its id meanwhile (a job
  // queued for several instances, taken at once by this one).
  void remove_exact(const std::shared_ptr<Job>& job);
  std::shared_ptr<Job> find(std::string_view id);
  std::vector<std::shared_ptr<Job>> all();

 private:
  using Map = std::unordered_map<std::string, std::shared_ptr<Job>>;
  void purge(engine::Clock::time_point now);  // with mutex_ held
  Full room_locked(const std::string& owner, engine::Clock::time_point now);
  bool expired(const Job& job, engine::Clock::time_point now) const;
  Map::iterator erase(Map::iterator it);  // with mutex_ held; keeps the owner counts
  void count(const Job& job);             // with mutex_ held

  const size_t max_jobs_;
  const size_t max_per_owner_;
  const std::chrono::seconds retention_;
  std::mutex mutex_;
  Map jobs_;
  std::unordered_map<std::string, size_t> by_owner_;
  engine::Clock::time_point last_purge_{};
};

}  // namespace kibitz::server
