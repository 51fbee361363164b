// The server's durable state behind one interface: jobs (with a review's
// finished plies) and the evaluation library (finished analyses by
// position). Backends: SQLite (the default: one file, WAL), memory (what the
// server did before it had a store; for tests and benchmarks). A backend for
// several instances (Redis) implements this same interface.
//
// Writes go through one writer per backend, in order. `durable` writes
// return once they are committed (the 202 of a job follows its creation);
// the others are written behind, batched with what comes meanwhile. A
// failed write is reported (durable) or logged (behind); nothing throws.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"

namespace kibitz::server {

// A job's state: the "status" GET /v1/jobs/{id} shows, kept in the store
// by its name. Queued and running are unfinished; the other three are its end.
enum class JobStatus { queued, running, done, cancelled, failed };

constexpr std::string_view to_string(JobStatus s) {
  switch (s) {
    case JobStatus::queued:
      return "queued";
    case JobStatus::running:
      return "running";
    case JobStatus::done:
      return "done";
    case JobStatus::cancelled:
      return "cancelled";
    case JobStatus::failed:
      break;
  }
  return "failed";
}

// A status as the store keeps it; a name it does not know reads as failed.
constexpr JobStatus job_status(std::string_view name) {
  for (JobStatus s : {JobStatus::queued, JobStatus::running, JobStatus::done, JobStatus::cancelled})
    if (to_string(s) == name) return s;
  return JobStatus::failed;
}

constexpr bool finished(JobStatus s) {
  return s == JobStatus::done || s == JobStatus::cancelled || s == JobStatus::failed;
}

}  // namespace kibitz::server

namespace kibitz::server::store {

// A job as kept: the request it was accepted with, so that it can run again
// after a restart, and everything GET /v1/jobs/{id} shows.
struct JobRecord {
  std::string id, kind;           // kind: "analyze" or "annotate"
  std::string owner;              // for the scheduler's fairness
  nlohmann::json request;         // the request body as accepted
  std::string status = "queued";  // a JobStatus by its name (to_string)
  nlohmann::json progress = nullptr, result = nullptr, error = nullptr;
  bool cancel_requested = false;  // DELETE came: never run again
  int64_t created_ms = 0;         // wall clock, ms since the epoch
  int64_t finished_ms = 0;        // 0 while unfinished
  // How often its search was started (counted, durably, before each start;
  // a start that a graceful stop interrupted is given back): a job still
  // unfinished with job_max_attempts of them crashed the server each time.
  int attempts = 0;
};

// What changes of a job; unset fields are left as they are.
struct JobUpdate {
  std::string id;
  std::optional<std::string> status;  // a JobStatus by its name
  std::optional<nlohmann::json> progress, result, error;
  std::optional<bool> cancel_requested;
  std::optional<int64_t> finished_ms;
  std::optional<int> attempts;  // set as it is (a start given back)
};

// One finished analysis of a position, as the library keeps it.
struct Eval {
  int depth = 0;
  int multipv = 1;
  std::string body;  // the engine's result (server/store/result_codec.h), JSON text
};

class JobQueue;  // server/store/job_queue.h

struct LibraryStats {
  uint64_t bytes = 0;    // what the library takes (the file's used pages for SQLite)
  uint64_t entries = 0;  // stored analyses
};

using Status = Expected<bool, std::string>;  // true, or why the store could not write

// An Idempotency-Key of a submission (server/api/idempotency.h): the job it
// made and a fingerprint of the request it came with.
struct IdempotencyBinding {
  std::string job_id, fingerprint;
  // In a binding kept already: whether its job is in the store (read with
  // the binding, at once): false when the job was never stored.
  bool job_kept = false;
};
// The binding kept already for that owner and key, or nullopt when the new
// one was stored; or why the store could not tell.
using BindResult = Expected<std::optional<IdempotencyBinding>, std::string>;

class Store {  // thread-safe
 public:
  virtual ~Store() = default;
  virtual std::string_view backend() const = 0;  // "sqlite", "memory" or "redis"

  // --- jobs ---
  // Durable. A store that enforces caps itself (Redis, for several
  // instances) answers false and names the cap in `refused`
  // ("queue_full", "client_work_cap" or "client_jobs_cap").
  virtual Status create_job(const JobRecord& job, std::string* refused = nullptr) = 0;
  virtual Status update_job(const JobUpdate& update, bool durable) = 0;
  // One more start of the job's search, durable, and the job marked
  // running: called before the search starts, so that a search that ends
  // the process is counted. The count now, or why it could not be stored.
  virtual Expected<int, std::string> count_attempt(const std::string& id) = 0;
  // A review's finished ply (0-based) and its searches, written behind.
  virtual void save_ply(const std::string& id, int ply, const nlohmann::json& data) = 0;
  virtual void remove_job(const std::string& id) = 0;  // written behind
  // Every job kept, oldest first, and a review's finished plies.
  virtual std::vector<JobRecord> load_jobs() = 0;
  virtual std::map<int, nlohmann::json> load_plies(const std::string& id) = 0;
  // Forgets the jobs finished before this time (ms since the epoch).
  virtual void expire_jobs(int64_t finished_before_ms) = 0;
  // Binds `key` of `owner` to `binding` for ttl_ms, unless it is bound
  // already (and not expired): then nothing is written and the binding kept
  // is returned. Durable, and atomic across the instances sharing the store.
  virtual BindResult bind_idempotency_key(const std::string& owner, const std::string& key,
                                          const IdempotencyBinding& binding, int64_t ttl_ms) = 0;
  // Unbinds `key` of `owner` if it is still bound to `job_id`: a submission
  // refused after its key was bound (a cap) leaves nothing. Written behind.
  virtual void release_idempotency_key(const std::string& owner, const std::string& key,
                                       const std::string& job_id) = 0;

  // --- the evaluation library ---
  // The deepest analysis of `position` with at least `multipv` lines and
  // `min_depth`; counts a hit or a miss and marks it used.
  virtual std::optional<Eval> find_eval(const std::string& position, int multipv,
                                        int min_depth) = 0;
  // Kept unless a deeper one with as many lines is kept; written behind.
  // The least recently used analyses go when the library passes its cap.
  virtual void put_eval(const std::string& position, const Eval& eval) = 0;
  virtual LibraryStats library_stats() = 0;
  // Every analysis kept, in the order of their positions (the key's
  // text), then of their lines: `each` for each (an export). Committed
  // ones only: call flush() before. An error when this backend cannot
  // list its library.
  using EachEval = std::function<void(const std::string& position, const Eval& eval)>;
  virtual Status each_eval(const EachEval& each) {
    (void)each;
    return Unexpected(std::string("the ") + std::string(backend()) +
                      " store cannot list its evaluation library");
  }

  // Returns when everything written before is committed (or failed).
  virtual void flush() = 0;

  // --- several instances sharing one store (Redis); the single-instance
  // backends keep these defaults ---
  // The job as kept now, wherever it runs; nullopt when unknown (or this
  // backend keeps jobs only through load_jobs at start); an error when the
  // store could not be read (a job is not unknown because Redis is away).
  virtual Expected<std::optional<JobRecord>, std::string> load_job(const std::string& id) {
    (void)id;
    return std::optional<JobRecord>{};
  }
  // The queue jobs go through to whichever instance runs them, or nullptr:
  // a job runs where it was submitted.
  virtual JobQueue* queue() { return nullptr; }
  // False while the store cannot be reached (the instance is then not ready).
  virtual bool available() { return true; }
};

struct Settings {
  std::string backend = "sqlite";  // or "memory" or "redis"
  std::string path = "data/kibitz.db";
  int library_min_depth = 10;  // shallower analyses are not kept
  size_t library_mib = 256;    // the library is cut to this, least recently used first
  // redis: where, and how long a job held by an instance that stopped
  // answering waits before another instance takes it over.
  std::string redis_url = "redis://127.0.0.1:6379";
  // Redis's password (KIBITZ_REDIS_PASSWORD), over the one in redis_url;
  // "": the URL's, if any. Never logged or shown.
  std::string redis_password;
  int claim_idle_ms = 30000;
  // How long one store call may take (Redis: connect and each command)
  // before it fails; the store's threads that make those calls for the
  // network (store_pool.h), and how many calls may wait for them.
  int timeout_ms = 500;
  int threads = 2;
  int queue_size = 64;
  int64_t job_retention_ms = 3600 * 1000;  // a finished job's time to live (redis)
  // redis: the caps the single-instance backends leave to the server's
  // memory (api/jobs.h, api/scheduler.h), enforced in Redis for the whole
  // cluster when a job is created; 0: no cap. And the longest an unfinished
  // job may live (its deadline), after which its keys expire.
  size_t max_jobs = 0, max_jobs_per_client = 0, max_work_per_client = 0, max_queued_jobs = 0;
  int64_t job_deadline_ms = 600'000;
  // redis: a job claimed this often without finishing (each instance that
  // claimed it died) ends failed/crashed at the next claim; 0 = never.
  int job_max_attempts = 2;
};

// Opens the backend. Errors are one line for the operator: the file is
// corrupt, from a newer Kibitz, used by another server, cannot be created.
Expected<std::shared_ptr<Store>, std::string> open(const Settings& settings);
std::shared_ptr<Store> make_memory_store(size_t library_mib);

}  // namespace kibitz::server::store
