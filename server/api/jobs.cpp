#include "server/api/jobs.h"

#include "common/contain.h"

#include <sys/random.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>
#include <system_error>
#include <thread>

namespace kibitz::server {

using nlohmann::json;

std::string random_job_id() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "getrandom");
    }
    got += size_t(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (unsigned char b : bytes) {
    id += kHex[b >> 4];
    id += kHex[b & 15];
  }
  return id;
}

json Job::to_json() const {
  std::lock_guard lock(mutex);
  JobStatus shown = status;
  if (!finished_at && cancel_requested && !interrupted)
    shown = JobStatus::cancelled;  // what its end will be: a GET never contradicts the DELETE
  else if (!finished_at && work)
    shown = work->running() ? JobStatus::running : JobStatus::queued;
  return job_json(id, kind, shown, progress, result, error);
}

json job_json(std::string_view id, std::string_view kind, JobStatus status, const json& progress,
              const json& result, const json& error) {
  json j = {{"id", id},
            {"kind", kind},
            {"status", to_string(status)},
            {"progress", progress},
            {"result", result}};
  if (!error.is_null()) j["error"] = error;
  return j;
}

void Job::when_finished(std::function<void()> f) {
  {
    std::lock_guard lock(mutex);
    if (!finished_at) {
      on_finished.push_back(std::move(f));
      return;
    }
  }
  f();
}

bool Job::wait_finished(std::chrono::milliseconds limit) const {
  std::unique_lock lock(mutex);
  return finished.wait_for(lock, limit, [&] { return finished_at.has_value(); });
}

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Reporter Job::reporter_for(const std::shared_ptr<Job>& job, std::weak_ptr<ApiCore> core) {
  // Weak: the job owns the work, the work owns the reporter.
  std::weak_ptr<Job> weak = job;
  Reporter s;
  s.on_progress = [weak, core](json info) {
    auto j = weak.lock();
    if (!j) return;
    store::JobUpdate update;
    update.id = j->id;
    update.status = to_string(JobStatus::running);
    update.progress = info;
    {
      std::lock_guard lock(j->mutex);
      j->progress = std::move(info);
    }
    if (auto c = core.lock(); c && c->store) (void)c->store->update_job(update, false);
  };
  s.on_done = [weak, core](Reply reply) {
    auto j = weak.lock();
    if (!j) return;
#ifdef KIBITZ_TEST_HOOKS
    // A stop that takes this long to take effect (tests: a DELETE's wait
    // holds no store thread).
    if (const char* v = std::getenv("KIBITZ_TEST_JOB_STOP_DELAY_MS")) {
      bool cancelled;
      {
        std::lock_guard lock(j->mutex);
        cancelled = j->cancel_requested;
      }
      if (cancelled) std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(v)));
    }
#endif
    reply.json_body();  // a cached answer holds only its text
    store::JobUpdate update;
    update.id = j->id;
    bool keep;
    JobStatus end;
    {
      std::lock_guard lock(j->mutex);
      if (reply.ok()) {
        update.result = reply.body;
        end = j->cancel_requested && !j->interrupted ? JobStatus::cancelled : JobStatus::done;
      } else {
        update.error = reply.error();
        const std::string code = update.error->value("code", "");
        end = j->cancel_requested || code == "cancelled" || code == "shutting_down"
                  ? JobStatus::cancelled
                  : JobStatus::failed;
      }
      // A search a shutdown stopped runs again after the restart; one that
      // reached its limits as the shutdown came is kept.
      keep = !j->interrupted ||
             (reply.ok() && reply.body.is_object() && !reply.body.value("stopped", true));
      if (j->interrupted && !keep) end = JobStatus::cancelled;
    }
    update.status = to_string(end);
    update.finished_ms = wall_ms();
    // Stored before it shows: a job seen finished is finished after a crash.
    if (auto c = core.lock(); keep && c && c->store) {
      if (auto ok = c->store->update_job(update, true); ok && *ok)
        spdlog::info("job {} finished: {}", j->id, *update.status);
      else if (ok)  // several instances share the store: the first end is kept
        spdlog::info("job {} was finished by another instance; this end ({}) is not kept", j->id,
                     *update.status);
      else
        spdlog::error("job {} finished: {}, but the store could not keep it: {}", j->id,
                      *update.status, ok.error());
    }
    std::shared_ptr<Work> work;                  // released outside the lock
    std::vector<std::function<void()>> waiters;  // called outside it
    {
      std::lock_guard lock(j->mutex);
      j->status = end;
      if (update.result) j->result = std::move(*update.result);
      if (update.error) j->error = std::move(*update.error);
      j->finished_at = engine::Clock::now();
      work = std::move(j->work);
      j->ticket.reset();
      waiters.swap(j->on_finished);
      j->finished.notify_all();
    }
    for (auto& f : waiters) contained(f, [](const std::string&) {});
  };
  return s;
}

JobTable::Full JobTable::room_locked(const std::string& owner, engine::Clock::time_point now) {
  const auto owned = [&] {
    auto it = by_owner_.find(owner);
    return it == by_owner_.end() ? size_t{0} : it->second;
  };
  // The sweep reads every job: once a second, or when a count is reached.
  if (now - last_purge_ >= std::chrono::seconds(1) || jobs_.size() >= max_jobs_ ||
      owned() >= max_per_owner_)
    purge(now);
  return jobs_.size() >= max_jobs_ ? Full::all : owned() >= max_per_owner_ ? Full::owner : Full::no;
}

JobTable::Full JobTable::room(const std::string& owner) {
  std::lock_guard lock(mutex_);
  return room_locked(owner, engine::Clock::now());
}

std::shared_ptr<Job> JobTable::create(std::string kind, std::string owner, Full* full,
                                      const std::string& id) {
  const auto now = engine::Clock::now();
  std::lock_guard lock(mutex_);
  const Full why = room_locked(owner, now);
  if (full) *full = why;
  if (why != Full::no) return nullptr;
  auto job = std::make_shared<Job>();
  if (!id.empty() && jobs_.count(id)) return nullptr;  // the caller checked; a race lost
  job->id = id;
  while (job->id.empty() || jobs_.count(job->id)) job->id = random_job_id();
  job->kind = std::move(kind);
  job->owner = std::move(owner);
  job->created = now;
  count(*job);
  jobs_.emplace(job->id, job);
  return job;
}

void JobTable::count(const Job& job) { ++by_owner_[job.owner]; }

JobTable::Map::iterator JobTable::erase(Map::iterator it) {
  if (auto o = by_owner_.find(it->second->owner); o != by_owner_.end() && --o->second == 0)
    by_owner_.erase(o);
  return jobs_.erase(it);
}

void JobTable::restore(std::shared_ptr<Job> job) {
  std::lock_guard lock(mutex_);
  if (auto it = jobs_.find(job->id); it != jobs_.end()) erase(it);
  count(*job);
  jobs_.emplace(job->id, std::move(job));
}

void JobTable::remove(const std::string& id) {
  std::lock_guard lock(mutex_);
  if (auto it = jobs_.find(id); it != jobs_.end()) erase(it);
}

void JobTable::remove_exact(const std::shared_ptr<Job>& job) {
  std::lock_guard lock(mutex_);
  if (auto it = jobs_.find(job->id); it != jobs_.end() && it->second == job) erase(it);
}

std::shared_ptr<Job> JobTable::find(std::string_view id) {
  const auto now = engine::Clock::now();
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(std::string(id));
  if (it == jobs_.end()) return nullptr;
  if (expired(*it->second, now)) {  // past its retention, swept or not
    erase(it);
    return nullptr;
  }
  return it->second;
}

std::vector<std::shared_ptr<Job>> JobTable::all() {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<Job>> out;
  for (auto& [id, j] : jobs_) out.push_back(j);
  return out;
}

bool JobTable::expired(const Job& job, engine::Clock::time_point now) const {
  std::lock_guard lock(job.mutex);
  return job.finished_at && now - *job.finished_at >= retention_;
}

void JobTable::purge(engine::Clock::time_point now) {
  last_purge_ = now;
  for (auto it = jobs_.begin(); it != jobs_.end();)
    it = expired(*it->second, now) ? erase(it) : std::next(it);
}

}  // namespace kibitz::server
