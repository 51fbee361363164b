// After a restart: the jobs the store kept come back. Finished ones are
// readable until their retention ends, cancelled ones end as cancelled,
// the others run again (a review from the plies it had finished), unless
// they were running when the process ended job_max_attempts times: a job
// that crashes the server is not run again (a poison job).
#include <spdlog/spdlog.h>

#include "common/contain.h"
#include "server/api/job_service.h"
#include "server/api/replies.h"
#include "server/store/result_codec.h"

namespace kibitz::server {

using engine::Clock;
using nlohmann::json;

// Poison jobs. A job's search counts its start in the store before it
// begins (a cluster's claim counts it in Redis instead): one that is
// still unfinished after job_max_attempts starts ended the process each
// time, and is not run again (recover_one). A shutdown gives back the
// starts of the jobs it stops: they run again, and did not crash.
BeforeSearch JobService::count_start(const std::shared_ptr<Job>& job) {
  if (core_->store->queue()) return nullptr;
  std::weak_ptr<ApiCore> weak_core = core_;
  std::weak_ptr<Job> weak_job = job;
  return [weak_core, weak_job]() -> std::optional<Reply> {
    auto core = weak_core.lock();
    auto j = weak_job.lock();
    if (!core || !j) return std::nullopt;
    auto n = core->store->count_attempt(j->id);
    if (!n) {
      spdlog::error("job {}: its start could not be stored: {}", j->id, n.error());
      return error_reply(
          503, "storage_unavailable",
          "the job's start could not be stored (" + n.error() + "), so it was not run");
    }
    std::lock_guard lock(j->mutex);
    j->attempts = *n;
    return std::nullopt;
  };
}

void JobService::give_back_starts(const std::vector<std::shared_ptr<Job>>& jobs) {
  if (core_->store->queue()) return;  // the store hands them back (redis_scripts.h)
  for (const auto& job : jobs) {
    store::JobUpdate u;
    {
      std::lock_guard lock(job->mutex);
      if (job->attempts <= 0) continue;
      u.id = job->id;
      u.attempts = job->attempts - 1;
    }
    (void)core_->store->update_job(u, false);
  }
}

// At start: the jobs the store kept. Finished ones are readable until
// their retention ends; cancelled ones end as cancelled; the others run
// again, a review from the plies it had finished.
void JobService::recover() {
  std::vector<store::JobRecord> records;
  try {
    records = core_->store->load_jobs();
  } catch (...) {
    spdlog::error("store: cannot read the kept jobs: {}", current_exception_text());
    return;
  }
  const int64_t now_ms = wall_ms();
  const auto now = Clock::now();
  const int64_t retention_ms = int64_t(core_->config.job_retention_s) * 1000;
  size_t finished = 0, resumed = 0;
  for (auto& r : records) {
    // One job that cannot come back (an unreadable row) does not stop the others.
    contained([&] { recover_one(r, now_ms, now, retention_ms, finished, resumed); },
              [&](const std::string& what) {
                spdlog::error("job {} could not be recovered: {}", r.id, what);
                if (auto job = jobs_.find(r.id))
                  contained([&] { end_recovered(job, internal_reply(what), false); },
                            [](const std::string&) {});
              });
  }
  if (!records.empty())
    spdlog::info("store: {} job(s) kept: {} finished, {} running again", records.size(), finished,
                 resumed);
}

void JobService::recover_one(store::JobRecord& r, int64_t now_ms, Clock::time_point now,
                             int64_t retention_ms, size_t& finished, size_t& resumed) {
  auto job = std::make_shared<Job>();
  job->id = r.id;
  job->kind = r.kind;
  job->owner = r.owner;
  job->created = now - std::chrono::milliseconds(std::max<int64_t>(0, now_ms - r.created_ms));
  job->progress = r.progress;
  if (r.finished_ms) {
    if (now_ms - r.finished_ms >= retention_ms) return;
    job->status = job_status(r.status);
    job->result = r.result;
    job->error = r.error;
    job->finished_at = now - std::chrono::milliseconds(now_ms - r.finished_ms);
    jobs_.restore(job);
    ++finished;
    return;
  }
  jobs_.restore(job);
  if (r.cancel_requested) {
    end_recovered(job, error_reply(409, "cancelled", "cancelled before the restart"), true);
    return;
  }
  const int most = core_->config.job_max_attempts;
  if (!core_->store->queue() && most > 0 && r.attempts >= most) {
    spdlog::error(
        "job {} failed (crashed): it was running when the server stopped {} times; it is not "
        "run again",
        r.id, r.attempts);
    end_recovered(job, crashed_reply(r.attempts), false);
    return;
  }
  const auto deadline = now + std::chrono::milliseconds(std::max<int64_t>(
                                  0, r.created_ms + core_->config.job_deadline_ms - now_ms));
  if (r.kind == "batch") {  // run again whole: its positions' answers were not kept
    auto call = decode_batch(r.request, core_->caps, core_->service);
    if (!call) {
      end_recovered(job, call.error(), false);
      return;
    }
    {
      std::lock_guard lock(job->mutex);
      job->progress = {{"done", 0}, {"positions", call->positions.size()}};
    }
    spdlog::info("job {} recovered: batch {}, started {} time(s) before, runs again", r.id,
                 r.status, r.attempts);
    start_batch(job, std::move(*call), deadline);
    ++resumed;
    return;
  }
  std::shared_ptr<Work> work;
  if (r.kind == "annotate") {
    auto call = decode_annotate(r.request, core_->caps, core_->service);
    if (!call) {
      end_recovered(job, call.error(), false);
      return;
    }
    for (auto& [ply, data] : core_->store->load_plies(r.id)) {
      if (!data.is_object()) continue;  // unreadable: that ply is searched again
      auto best = store::result_from_json(data.value("best", json()));
      std::optional<engine::Result> played;
      if (data.contains("played") && !data["played"].is_null())
        played = store::result_from_json(data["played"]);
      if (best && ply >= 0 && (played || data["played"].is_null()))
        call->options.finished[size_t(ply)] = review::FinishedPly{*best, played};
    }
    {
      // The job is listed already (restore above): readers hold its mutex.
      std::lock_guard lock(job->mutex);
      job->progress = {{"ply", call->options.finished.size()}, {"plies", call->plies}};
    }
    keep_plies(*call, r.id);
    auto review =
        std::make_shared<ReviewWork>(core_, std::move(*call), reporter_for(job), r.id, deadline);
    review->before_search = count_start(job);
    work = review;
  } else {
    auto call = decode_analyze(r.request, core_->caps, core_->service, Priority::batch, false);
    if (!call) {
      end_recovered(job, call.error(), false);
      return;
    }
    auto analysis =
        std::make_shared<AnalysisWork>(core_, std::move(*call), reporter_for(job), r.id, deadline);
    analysis->before_search = count_start(job);
    work = analysis;
  }
  work->owner = r.owner;
  spdlog::info("job {} recovered: {} {}, started {} time(s) before, runs again", r.id, r.kind,
               r.status, r.attempts);
  {
    std::lock_guard lock(job->mutex);
    job->work = work;
  }
  if (core_->scheduler.submit(work) != Scheduler::Admission::accepted) {
    {
      std::lock_guard lock(job->mutex);
      job->work.reset();
    }
    end_recovered(job, queue_full_reply("the queue was full when the job was recovered"), false);
    return;
  }
  ++resumed;
}

// A recovered job that cannot run: ends with `why`, stored.
void JobService::end_recovered(const std::shared_ptr<Job>& job, Reply why, bool cancelled) {
  if (cancelled) {
    std::lock_guard lock(job->mutex);
    job->cancel_requested = true;
  }
  reporter_for(job).on_done(std::move(why));
}
}  // namespace kibitz::server
