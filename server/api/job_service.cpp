#include "server/api/job_service.h"

#include <spdlog/spdlog.h>

#include "record/record.h"
#include "server/api/interactive.h"
#include "server/api/replies.h"
#include "server/store/result_codec.h"

namespace kibitz::server {

using engine::Clock;
using nlohmann::json;

JobService::JobService(std::shared_ptr<ApiCore> core, Batches& batches)
    : core_(std::move(core)),
      batches_(batches),
      jobs_(core_->config.max_jobs, core_->config.max_jobs_per_client,
            std::chrono::seconds(core_->config.job_retention_s)) {}

Reply JobService::submit_analysis(const json& request, const Caller& caller) {
  const bool batch = request.is_object() && request.contains("positions");
  return remembered(
      caller, batch ? submit_new_batch(request, caller) : submit_new_analysis(request, caller));
}

Reply JobService::submit_review(const json& request, const Caller& caller) {
  return remembered(caller, submit_new_review(request, caller));
}

std::optional<Reply> JobService::refused_early(std::string_view kind, const Caller& caller,
                                               bool keyed) {
  if (core_->shutting_down) return std::nullopt;
  // Here a repeat at a cap answers the job it made, so a keyed one is read.
  // Several instances know a client's caps only from a refusal by the
  // store a moment ago (RefusalMemo), and HAProxy gives every submission
  // a key: there a keyed one is refused within that second too (a repeat
  // of one that made a job is answered it once the second has passed).
  if (keyed && !core_->store->queue()) return std::nullopt;
  const bool review = kind == "annotate";
  // A job answered at once (a finished position) takes no search: the
  // work cap is not known to apply to an analysis job before it is read.
  if (auto r = core_->refusals.find(caller.owner, review)) return r;
  // Remembered too: the client's next refusals in this second wait for it.
  if (review)
    if (auto no = refused_job(caller)) return remembered(caller, std::move(*no));
  if (auto no = jobs_room(caller)) return remembered(caller, std::move(*no));
  return std::nullopt;
}

Reply JobService::submit_new_analysis(const json& request, const Caller& caller) {
  if (core_->shutting_down) return shutting_down_reply();
  auto keyed = idempotent(caller, "analyze", request);
  if (keyed.reply) return std::move(*keyed.reply);
  // At the jobs cap: refused before the request is decoded.
  if (auto no = jobs_room(caller)) return keyed.settle(*core_->store, std::move(*no));
  auto call = decode_analyze(request, core_->caps, core_->service, Priority::batch, false);
  if (!call) return keyed.settle(*core_->store, call.error());
  auto now = answer_without_search(*core_, *call, false);
  if (!now)  // an answer at once takes no search: only the jobs cap counts
    if (auto no = refused_job(caller)) return keyed.settle(*core_->store, std::move(*no));
  JobTable::Full full;
  auto job = jobs_.create("analyze", caller.owner, &full, keyed.id);
  if (!job) return keyed.settle(*core_->store, jobs_full_reply(full, core_->config));
  if (auto no = store_new(*job, request, caller.owner, now ? &*now : nullptr)) {
    forget_unstored(job->id, keyed);
    return refusal(keyed, std::move(*no));
  }
  if (now) {
    record_immediate(*job, std::move(*now));
    return accepted_reply(job->id);
  }
  auto work = std::make_shared<AnalysisWork>(core_, std::move(*call), reporter_for(job), job->id,
                                             core_->deadline());
  work->owner = caller.owner;
  work->before_search = count_start(job);
  return keyed.settle(*core_->store, submit_work(job, work));
}

// What a review job keeps in the store, to run it again after a restart:
// the game as the review reads it (main line, tags, comments and NAGs),
// not the text as sent, whose variations the review drops. Up to
// max_body_bytes of them would be written for nothing, and one client's
// burst of such games made every client's commits wait on the disk.
json JobService::stored_review(const json& request, const AnnotateCall& call) {
  json stored = request;
  stored[call.game == GameKind::chess ? "pgn" : "pdn"] = record::write(call.record);
  return stored;
}

Reply JobService::submit_new_review(const json& request, const Caller& caller) {
  if (core_->shutting_down) return shutting_down_reply();
  auto keyed = idempotent(caller, "annotate", request);
  if (keyed.reply) return std::move(*keyed.reply);
  // At a cap: refused before the game (up to max_body_bytes of PGN) is
  // parsed, so that a client refused again and again costs little.
  if (auto no = refused_job(caller)) return keyed.settle(*core_->store, std::move(*no));
  if (auto no = jobs_room(caller)) return keyed.settle(*core_->store, std::move(*no));
  auto call = decode_annotate(request, core_->caps, core_->service);
  if (!call) return keyed.settle(*core_->store, call.error());
  JobTable::Full full;
  auto job = jobs_.create("annotate", caller.owner, &full, keyed.id);
  if (!job) return keyed.settle(*core_->store, jobs_full_reply(full, core_->config));
  {
    std::lock_guard lock(job->mutex);
    job->progress = {{"ply", 0}, {"plies", call->plies}};
  }
  if (auto no = store_new(*job, stored_review(request, *call), caller.owner, nullptr)) {
    forget_unstored(job->id, keyed);
    return refusal(keyed, std::move(*no));
  }
  keep_plies(*call, job->id);
  auto work = std::make_shared<ReviewWork>(core_, std::move(*call), reporter_for(job), job->id,
                                           core_->deadline());
  work->owner = caller.owner;
  work->before_search = count_start(job);
  return keyed.settle(*core_->store, submit_work(job, work));
}

Reply JobService::get(std::string_view id) {
  auto job = jobs_.find(id);
  // Several instances share the store: a job run elsewhere, or finished
  // here, is read from the store, which keeps the end that counts. A job
  // running here shows its live progress, unless the store already has
  // its end (stored before this record shows it): then every instance
  // answers that end.
  if (!job || core_->store->queue()) {
    auto stored = stored_job_reply(*core_->store, id);
    if (stored && stored->status != 200 && job) stored.reset();  // unreadable: what is held here
    if (stored) {
      const bool running_here =
          job && job->to_json().value("status", "") == to_string(JobStatus::running);
      const bool ended =
          stored->body.is_object() && finished(job_status(stored->body.value("status", "")));
      if (!running_here || ended) return std::move(*stored);
    }
    if (!job) return unknown_job_reply(*core_->store, id);
  }
  return Reply{200, job->to_json(), nullptr, {}};
}

JobService::Stopping JobService::start_cancel(std::string_view id) {
  Stopping s;
  auto job = jobs_.find(id);
  if (!job) {
    if (auto stored = cancel_stored_job(*core_->store, id))
      s.now = std::move(*stored);
    else
      s.now = unknown_job_reply(*core_->store, id);
    return s;
  }
  std::shared_ptr<Work> work;
  std::shared_ptr<Ticket> ticket;
  bool cancelled = false;
  {
    std::lock_guard lock(job->mutex);
    if (!job->finished_at) cancelled = job->cancel_requested = true;
    work = job->work;
    ticket = job->ticket;
  }
  // Stored before the answer: a cancelled job never runs after a restart.
  if (cancelled) {
    store::JobUpdate u;
    u.id = job->id;
    u.cancel_requested = true;
    s.stored = core_->store->update_job(u, true);
  }
  if (work) core_->scheduler.cancel(work);
  if (ticket) ticket->cancel();
  if (!cancelled) s.now = stopped_reply(*job, s.stored);
  s.job = std::move(job);
  return s;
}

Reply JobService::stopped_reply(const Job& job, const store::Status& stored) {
  if (!stored)
    return error_reply(503, "storage_unavailable",
                       "the job was stopped, but its cancellation could not be stored (" +
                           stored.error() + "): it may run again after a restart");
  return Reply{200, job.to_json(), nullptr, {}};
}

// The answer shows the job as the stop left it (its best result so far),
// not as it was running: a search stops within milliseconds; the wait is
// bounded (kStopWait) for one that does not, which shows "cancelled"
// meanwhile.
Reply JobService::cancel(std::string_view id) {
  Stopping s = start_cancel(id);
  if (s.now) return std::move(*s.now);
  s.job->wait_finished(kStopWait);
  return stopped_reply(*s.job, s.stored);
}

void JobService::cancel(std::string_view id, std::function<void(Reply)> done) {
  Stopping s = start_cancel(id);
  if (s.now) return done(std::move(*s.now));
  // Whichever comes first, the job's end or the bound, answers; once. The
  // job holds its waiter weakly: a job that never ends keeps nothing alive.
  auto answered = std::make_shared<std::atomic<bool>>(false);
  auto answer = std::make_shared<std::function<void()>>(
      [answered, job = s.job, stored = s.stored, done = std::move(done)] {
        if (!answered->exchange(true)) done(stopped_reply(*job, stored));
      });
  stop_waits_.at(TimerThread::Clock::now() + kStopWait, [answer] { (*answer)(); });
  s.job->when_finished([weak = std::weak_ptr(answer)] {
    if (auto a = weak.lock()) (*a)();
  });
}

Reply JobService::Keyed::settle(store::Store& st, Reply r) const {
  if (r.status != 202 && !key.empty()) st.release_idempotency_key(owner, key, id);
  return r;
}

JobService::Keyed JobService::idempotent(const Caller& caller, std::string_view kind,
                                         const json& request) {
  Keyed k;
  if (!caller.idempotency_key) return k;
  auto key = check_idempotency_key(*caller.idempotency_key);
  if (!key) {
    k.reply = error_reply(400, "invalid_request", key.error());
    return k;
  }
  k.pass = idempotency_gate_.enter(caller.owner, *key);
  if (!k.pass) {
    k.reply = error_reply(409, "idempotency_key_in_use",
                          "a request with this Idempotency-Key is being processed; retry when "
                          "it has been answered");
    k.reply->headers.emplace_back("Retry-After", "1");
    return k;
  }
  const std::string fingerprint = request_fingerprint(kind, request);
  // Kept as long as the job can be: its deadline, then its retention.
  const int64_t ttl_ms =
      core_->config.job_deadline_ms + int64_t(core_->config.job_retention_s) * 1000;
  const std::string fresh = random_job_id();
  auto bound = core_->store->bind_idempotency_key(caller.owner, *key, {fresh, fingerprint},
                                                  std::max<int64_t>(1, ttl_ms));
  if (!bound) {
    k.reply = storage_reply(bound.error());
    return k;
  }
  if (!*bound) {  // the first time: the job takes the id just bound
    k.id = fresh;
    k.owner = caller.owner;
    k.key = *key;
    return k;
  }
  const store::IdempotencyBinding& first = **bound;
  if (first.fingerprint != fingerprint) {
    k.reply = error_reply(422, "idempotency_key_reused",
                          "this Idempotency-Key was used with another request; use a new key "
                          "for a new request");
    return k;
  }
  if (first.job_kept || jobs_.find(first.job_id)) {
    k.reply = accepted_reply(first.job_id);
    k.reply->headers.emplace_back("Idempotent-Replayed", "true");
    return k;
  }
  // Bound by an attempt whose job was never kept (the store failed after
  // the binding, or the process died): made now, under that id.
  k.id = first.job_id;
  k.owner = caller.owner;
  k.key = *key;
  return k;
}

// A new job, stored before it is accepted; `now` is its answer when it
// needs no search (stored finished at once: one write). The refusal when
// it could not be stored, or the store (Redis: the caps of the whole
// cluster) refused it.
std::optional<Reply> JobService::store_new(const Job& job, const json& request,
                                           const std::string& owner, const Reply* now) {
  expire_stored_jobs();
  store::JobRecord r;
  r.id = job.id;
  r.kind = job.kind;
  r.owner = owner;
  r.request = request;
  r.created_ms = wall_ms();
  {
    std::lock_guard lock(job.mutex);
    r.progress = job.progress;
  }
  if (now) {
    r.finished_ms = r.created_ms;
    Reply answer = *now;
    if (answer.ok()) {
      r.status = to_string(JobStatus::done);
      r.result = answer.json_body();
    } else {
      r.status = to_string(JobStatus::failed);
      r.error = answer.error();
    }
  }
  std::string refused;
  auto stored = core_->store->create_job(r, &refused);
  if (!stored) return storage_reply(stored.error());
  if (*stored) return std::nullopt;
  if (refused == "client_jobs_cap") return jobs_full_reply(JobTable::Full::owner, core_->config);
  if (refused == "client_work_cap")
    return admission_reply(Scheduler::Admission::client_cap, core_->config);
  return queue_full_reply("the cluster's job queue (queue_size) or max_jobs is full");
}

// A job refused because its creation failed. A write that timed out may
// still reach the store (a stalled Redis runs what its socket holds once
// it resumes): its removal follows it, written behind, so a job answered
// 503 never runs -- unless an Idempotency-Key binds its id: a retry (on
// any instance) makes the job under that same id, which a removal
// written behind could then delete; the key answers for it instead.
void JobService::forget_unstored(const std::string& id, const Keyed& keyed) {
  jobs_.remove(id);
  if (keyed.key.empty()) core_->store->remove_job(id);
}

// An answer known at once, recorded into the job (stored already).
void JobService::record_immediate(Job& job, Reply reply) {
  std::lock_guard lock(job.mutex);
  if (reply.ok()) {
    job.result = std::move(reply.json_body());
    job.status = JobStatus::done;
  } else {
    job.error = reply.error();
    job.status = JobStatus::failed;
  }
  job.finished_at = Clock::now();
}

// A review keeps each ply as it is finished, to resume from after a restart.
void JobService::keep_plies(AnnotateCall& call, const std::string& id) {
  std::weak_ptr<ApiCore> weak = core_;
  call.options.on_ply = [weak, id](size_t ply, const review::FinishedPly& f) {
    auto core = weak.lock();
    if (!core) return;
    json data = {{"best", store::result_to_json(f.best)},
                 {"played", f.played ? store::result_to_json(*f.played) : json(nullptr)}};
    core->store->save_ply(id, int(ply), data);
  };
}

// Forgets stored jobs past their retention, now and then.
void JobService::expire_stored_jobs() {
  const int64_t now = wall_ms();
  int64_t last = last_expiry_ms_.load();
  if (now - last < 10'000 || !last_expiry_ms_.compare_exchange_strong(last, now)) return;
  core_->store->expire_jobs(now - int64_t(core_->config.job_retention_s) * 1000);
}

Reply JobService::submit_work(const std::shared_ptr<Job>& job, const std::shared_ptr<Work>& work) {
  if (core_->store->queue()) {  // stored and queued already: whichever instance is free runs it
    jobs_.remove_exact(job);
    return accepted_reply(job->id);
  }
  {
    std::lock_guard lock(job->mutex);
    job->work = work;
  }
  const auto admission = core_->scheduler.submit(work);
  switch (admission) {
    case Scheduler::Admission::accepted:
      return accepted_reply(job->id);
    case Scheduler::Admission::queue_full:
    case Scheduler::Admission::client_cap:
      jobs_.remove(job->id);
      core_->store->remove_job(job->id);
      return admission_reply(admission, core_->config);
    case Scheduler::Admission::shutting_down:
      break;
  }
  jobs_.remove(job->id);
  core_->store->remove_job(job->id);
  return shutting_down_reply();
}

// A job the scheduler would refuse now is refused before it is stored.
// Several instances queue jobs in the store instead (cluster.h).
std::optional<Reply> JobService::refused_job(const Caller& caller) const {
  if (core_->store->queue()) return std::nullopt;
  const auto a = core_->scheduler.admissible(caller.owner, Priority::batch);
  if (a == Scheduler::Admission::accepted) return std::nullopt;
  return admission_reply(a, core_->config);
}

// A refusal at a client's cap is remembered for a second (RefusalMemo).
Reply JobService::remembered(const Caller& caller, Reply r) {
  if (r.status == 429 && r.body.contains("error")) {
    const std::string code = r.body["error"].value("code", "");
    if (code == "client_jobs_cap" || code == "client_work_cap")
      r.hold = core_->refusals.remember(caller.owner, r);
  }
  return r;
}

// The jobs cap of this instance's job map, before anything is decoded
// (create checks it again). Several instances count in the store instead.
std::optional<Reply> JobService::jobs_room(const Caller& caller) {
  if (core_->store->queue()) return std::nullopt;
  const JobTable::Full full = jobs_.room(caller.owner);
  if (full == JobTable::Full::no) return std::nullopt;
  return jobs_full_reply(full, core_->config);
}

// A job the store did not keep: refused at a cap of the store's (Redis),
// its key is unbound like any refusal's; a store failure keeps it (the
// job may have been stored all the same: a Redis timeout).
Reply JobService::refusal(const Keyed& keyed, Reply r) const {
  return r.status == 429 ? keyed.settle(*core_->store, std::move(r)) : r;
}

Reporter JobService::reporter_for(const std::shared_ptr<Job>& job) {
  return Job::reporter_for(job, core_);
}

std::vector<std::shared_ptr<Job>> JobService::interrupt() {
  std::vector<std::shared_ptr<Job>> interrupted;
  for (auto& job : jobs_.all()) {
    std::lock_guard lock(job->mutex);
    if (!job->finished_at && !job->cancel_requested) {
      job->cancel_requested = job->interrupted = true;
      interrupted.push_back(job);
    }
  }
  return interrupted;
}

}  // namespace kibitz::server
