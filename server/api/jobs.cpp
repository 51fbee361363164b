#include "server/api/jobs.h"

namespace kibitz::server {

using nlohmann::json;

json JobRecord::to_json() const {
  std::lock_guard lock(mutex);
  json j = {
      {"id", id}, {"kind", kind}, {"status", status}, {"progress", progress}, {"result", result}};
  if (!error.is_null()) j["error"] = error;
  return j;
}

Sink JobRecord::sink_for(const std::shared_ptr<JobRecord>& job) {
  // Weak: the job record owns the work, the work owns the sink.
  std::weak_ptr<JobRecord> weak = job;
  Sink s;
  s.on_start = [weak] {
    if (auto j = weak.lock()) {
      std::lock_guard lock(j->mutex);
      if (j->status == "queued") j->status = "running";
    }
  };
  s.on_info = [weak](json info) {
    if (auto j = weak.lock()) {
      std::lock_guard lock(j->mutex);
      j->progress = std::move(info);
    }
  };
  s.on_done = [weak](Reply reply) {
    auto j = weak.lock();
    if (!j) return;
    std::shared_ptr<Work> work;  // released outside the lock
    std::lock_guard lock(j->mutex);
    if (reply.status == 200) {
      j->result = std::move(reply.body);
      j->status = j->cancel_requested ? "cancelled" : "done";
    } else {
      j->error = reply.body.value("error", json::object());
      const std::string code = j->error.value("code", "");
      j->status = j->cancel_requested || code == "cancelled" || code == "shutting_down"
                      ? "cancelled"
                      : "failed";
    }
    j->finished_at = engine::Clock::now();
    work = std::move(j->work);
  };
  return s;
}

std::shared_ptr<JobRecord> JobStore::create(std::string kind) {
  const auto now = engine::Clock::now();
  std::lock_guard lock(mutex_);
  purge(now);
  if (jobs_.size() >= max_jobs_) return nullptr;
  auto job = std::make_shared<JobRecord>();
  static constexpr char kHex[] = "0123456789abcdef";
  do {  // 128 random bits: ids cannot be guessed
    job->id.clear();
    for (int half = 0; half < 2; ++half) {
      uint64_t r = random_();
      for (int i = 0; i < 16; ++i, r >>= 4) job->id += kHex[r & 15];
    }
  } while (jobs_.count(job->id));
  job->kind = std::move(kind);
  job->created = now;
  jobs_.emplace(job->id, job);
  return job;
}

void JobStore::remove(const std::string& id) {
  std::lock_guard lock(mutex_);
  jobs_.erase(id);
}

std::shared_ptr<JobRecord> JobStore::find(std::string_view id) {
  const auto now = engine::Clock::now();
  std::lock_guard lock(mutex_);
  purge(now);
  auto it = jobs_.find(std::string(id));
  return it == jobs_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<JobRecord>> JobStore::all() {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<JobRecord>> out;
  for (auto& [id, j] : jobs_) out.push_back(j);
  return out;
}

void JobStore::purge(engine::Clock::time_point now) {
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    bool expired;
    {
      std::lock_guard lock(it->second->mutex);
      expired = it->second->finished_at && now - *it->second->finished_at >= retention_;
    }
    it = expired ? jobs_.erase(it) : std::next(it);
  }
}

}  // namespace kibitz::server
