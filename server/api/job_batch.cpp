// Batch jobs (POST /v1/jobs with "positions"): a batch (batch.h) whose
// reporter records into its job. The job holds the batch's ticket rather
// than a work; its progress is {"done", "positions"}, its result the
// batch's {"summary", "results"}. After a restart an unfinished batch job
// runs again whole (job_recovery.cpp); with several instances (Redis) the
// one that takes it from the queue runs it the same way, and runs it again
// whole when it takes over another's.
#include <spdlog/spdlog.h>

#include "server/api/job_service.h"
#include "server/api/replies.h"

namespace kibitz::server {

using engine::Clock;
using nlohmann::json;

Reply JobService::submit_new_batch(const json& request, const Caller& caller) {
  if (core_->shutting_down) return shutting_down_reply();
  auto keyed = idempotent(caller, "batch", request);
  if (keyed.reply) return std::move(*keyed.reply);
  if (auto no = jobs_room(caller)) return keyed.settle(*core_->store, std::move(*no));
  if (auto no = refused_job(caller)) return keyed.settle(*core_->store, std::move(*no));
  auto call = decode_batch(request, core_->caps, core_->service);
  if (!call) return keyed.settle(*core_->store, call.error());
  JobTable::Full full;
  auto job = jobs_.create("batch", caller.owner, &full, keyed.id);
  if (!job) return keyed.settle(*core_->store, jobs_full_reply(full, core_->config));
  {
    std::lock_guard lock(job->mutex);
    job->progress = {{"done", 0}, {"positions", call->positions.size()}};
  }
  if (auto no = store_new(*job, request, caller.owner, nullptr)) {
    forget_unstored(job->id, keyed);
    return refusal(keyed, std::move(*no));
  }
  if (core_->store->queue()) {  // stored and queued: whichever instance is free runs it
    jobs_.remove_exact(job);    // (cluster.cpp, through recover_one as after a restart)
    return keyed.settle(*core_->store, accepted_reply(job->id));
  }
  start_batch(job, std::move(*call), core_->deadline());
  return keyed.settle(*core_->store, accepted_reply(job->id));
}

void JobService::start_batch(const std::shared_ptr<Job>& job, BatchCall call,
                             Clock::time_point deadline) {
  Reporter job_reporter = reporter_for(job);
  if (auto before = count_start(job))
    if (auto instead = before()) return job_reporter.on_done(std::move(*instead));
  const size_t total = call.positions.size();
  auto done = std::make_shared<size_t>(0);  // the batch reports one line at a time
  Reporter r;
  r.on_progress = [progress = job_reporter.on_progress, done, total](json) {
    progress(json{{"done", ++*done}, {"positions", total}});
  };
  r.on_done = std::move(job_reporter.on_done);
  call.movetime_capped = false;  // a job's positions search to their limits
  auto ticket = batches_.start(std::move(call), job->owner, job->id, deadline, std::move(r));
  bool cancelled;
  {
    std::lock_guard lock(job->mutex);
    cancelled = job->cancel_requested && !job->finished_at;
    if (!job->finished_at) {
      job->ticket = ticket;
      // Running from its start: its positions take turns in the scheduler.
      job->status = JobStatus::running;
    }
  }
  if (cancelled) ticket->cancel();
}

}  // namespace kibitz::server
