// Jobs: work whose answer is fetched later (POST /v1/jobs, POST
// /v1/games/annotate; GET and DELETE /v1/jobs/{id}). Its rooms:
//  - job_service.cpp: submit (stored before it is accepted, with its
//    Idempotency-Key), get, delete, the caps and the retention;
//  - job_recovery.cpp: after a restart, the jobs the store kept come back
//    (finished ones readable, the others run again, a crashing one not);
//  - cluster.cpp: several instances share one queue in the store.
// The job table (jobs.h) holds this instance's jobs; the store keeps them.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/api/api.h"
#include "server/api/api_core.h"
#include "server/api/batch.h"
#include "server/api/cluster.h"
#include "server/api/idempotency.h"
#include "server/api/jobs.h"
#include "server/api/timer_thread.h"
#include "server/api/work.h"

namespace kibitz::server {

class JobService {
 public:
  // `batches` runs batch jobs' positions; it outlives this.
  JobService(std::shared_ptr<ApiCore> core, Batches& batches);

  // POST /v1/jobs: an analysis job, or a batch job when the body has
  // "positions" (batch.h); POST /v1/games/annotate: a review job.
  Reply submit_analysis(const nlohmann::json& request, const Caller& caller);
  Reply submit_review(const nlohmann::json& request, const Caller& caller);
  // Api::refused_early: a submission refused at a cap before its body is read.
  std::optional<Reply> refused_early(std::string_view kind, const Caller& caller, bool keyed);
  Reply get(std::string_view id);     // GET /v1/jobs/{id}
  Reply cancel(std::string_view id);  // DELETE /v1/jobs/{id}, waiting for the stop
  // DELETE /v1/jobs/{id} with no thread waiting for the stop: the
  // cancellation is stored on the caller's thread (a store thread), and
  // `done` gets the answer once the job has stopped, or after kStopWait
  // (on the timer thread): a client deleting many running jobs at once
  // holds no store thread while their searches stop.
  void cancel(std::string_view id, std::function<void(Reply)> done);
  static constexpr std::chrono::seconds kStopWait{2};

  // At start (job_recovery.cpp): the jobs the store kept.
  void recover();
  // Several instances (cluster.cpp): take jobs from the store's queue.
  void start_cluster(store::JobQueue& queue);
  // Shutting down: takes no more jobs from the cluster's queue.
  void stop_taking();
  // Shutting down: the unfinished jobs are marked interrupted (their end
  // is not stored, they run again after the restart); returns them.
  std::vector<std::shared_ptr<Job>> interrupt();
  // The starts of jobs a shutdown stopped are given back (job_recovery.cpp).
  void give_back_starts(const std::vector<std::shared_ptr<Job>>& jobs);

 private:
  // A submission with an Idempotency-Key (api/idempotency.h): `reply` when
  // it is answered already (the first job again, 409, 422, 400, 503), else
  // the id its job takes ("": any). `pass` is held until the job is stored.
  struct Keyed {
    std::optional<Reply> reply;
    std::string id;
    IdempotencyGate::Pass pass;
    std::string owner, key;  // once bound
    // A job refused at a cap (429, or 503 shutting_down) unbinds its key:
    // refusals leave nothing in the store. A store failure keeps it: the
    // job may have been stored all the same (a Redis timeout).
    Reply settle(store::Store& st, Reply r) const;
  };
  Keyed idempotent(const Caller& caller, std::string_view kind, const nlohmann::json& request);

  // A DELETE's first half: the answer at once (unknown job, one that had
  // finished, a job of another instance), or the job whose stop was asked
  // for and stored (`stored` false: the store refused it, `why`).
  struct Stopping {
    std::optional<Reply> now;
    std::shared_ptr<Job> job;
    store::Status stored = true;
  };
  Stopping start_cancel(std::string_view id);
  static Reply stopped_reply(const Job& job, const store::Status& stored);

  Reply submit_new_analysis(const nlohmann::json& request, const Caller& caller);
  Reply submit_new_review(const nlohmann::json& request, const Caller& caller);
  static nlohmann::json stored_review(const nlohmann::json& request, const AnnotateCall& call);
  Reply submit_new_batch(const nlohmann::json& request, const Caller& caller);
  // Starts a batch job (new or recovered): its start counted in the store
  // first, progress {"done", "positions"}, the batch's ticket in the job.
  void start_batch(const std::shared_ptr<Job>& job, BatchCall call,
                   engine::Clock::time_point deadline);
  std::optional<Reply> store_new(const Job& job, const nlohmann::json& request,
                                 const std::string& owner, const Reply* now);
  void forget_unstored(const std::string& id, const Keyed& keyed);
  void record_immediate(Job& job, Reply reply);
  void keep_plies(AnnotateCall& call, const std::string& id);
  void expire_stored_jobs();
  Reply submit_work(const std::shared_ptr<Job>& job, const std::shared_ptr<Work>& work);
  std::optional<Reply> refused_job(const Caller& caller) const;
  Reply remembered(const Caller& caller, Reply r);
  std::optional<Reply> jobs_room(const Caller& caller);
  Reply refusal(const Keyed& keyed, Reply r) const;
  Reporter reporter_for(const std::shared_ptr<Job>& job);

  // job_recovery.cpp
  BeforeSearch count_start(const std::shared_ptr<Job>& job);
  void recover_one(store::JobRecord& r, int64_t now_ms, engine::Clock::time_point now,
                   int64_t retention_ms, size_t& finished, size_t& resumed);
  void end_recovered(const std::shared_ptr<Job>& job, Reply why, bool cancelled);

  // cluster.cpp
  void stop_held(const std::string& id, bool elsewhere);

  std::shared_ptr<ApiCore> core_;
  Batches& batches_;
  JobTable jobs_;
  IdempotencyGate idempotency_gate_;
  std::atomic<int64_t> last_expiry_ms_{0};
  std::unique_ptr<Dispatcher> dispatcher_;  // several instances: takes jobs from the shared queue
  // The DELETEs waiting for their jobs' stops (cancel with `done`): last,
  // so that it closes first, answering those still waiting.
  TimerThread stop_waits_;
};

}  // namespace kibitz::server
