// The memory backend: what the server kept before it had a store, behind the
// store's interface. Nothing survives the process; every write is "durable"
// at once. For tests, benchmarks and servers that want nothing on disk.
#include <algorithm>
#include <chrono>
// Jobs are kept without their request: nothing is run again from here.
#include <list>
#include <mutex>
#include <tuple>
#include <unordered_map>

#include "server/store/store.h"

namespace kibitz::server::store {

namespace {

class MemoryStore final : public Store {
 public:
  explicit MemoryStore(size_t library_mib) : cap_bytes_(uint64_t(library_mib) << 20) {}

  std::string_view backend() const override { return "memory"; }

  Status create_job(const JobRecord& job, std::string* /*refused*/) override {
    std::lock_guard lock(mutex_);
    JobRecord& kept = jobs_[job.id] = job;
    // Not its request (up to max_body_bytes, held for the job's life): a
    // job is run again from it only after a restart, which nothing kept
    // here survives.
    kept.request = nullptr;
    return true;
  }

  Status update_job(const JobUpdate& u, bool) override {
    std::lock_guard lock(mutex_);
    auto it = jobs_.find(u.id);
    if (it == jobs_.end()) return true;
    JobRecord& j = it->second;
    if (u.status) j.status = *u.status;
    if (u.progress) j.progress = *u.progress;
    if (u.result) j.result = *u.result;
    if (u.error) j.error = *u.error;
    if (u.cancel_requested) j.cancel_requested = *u.cancel_requested;
    if (u.attempts) j.attempts = *u.attempts;
    if (u.finished_ms) {
      j.finished_ms = *u.finished_ms;
      plies_.erase(u.id);  // a finished review's plies are of no more use
    }
    return true;
  }

  Expected<int, std::string> count_attempt(const std::string& id) override {
    std::lock_guard lock(mutex_);
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return Unexpected("no job " + id);
    it->second.status = to_string(JobStatus::running);
    return ++it->second.attempts;
  }

  void save_ply(const std::string& id, int ply, const nlohmann::json& data) override {
    std::lock_guard lock(mutex_);
    if (jobs_.count(id)) plies_[id][ply] = data;
  }

  void remove_job(const std::string& id) override {
    std::lock_guard lock(mutex_);
    jobs_.erase(id);
    plies_.erase(id);
  }

  std::vector<JobRecord> load_jobs() override {
    std::lock_guard lock(mutex_);
    std::vector<JobRecord> out;
    for (auto& [id, j] : jobs_) out.push_back(j);
    return out;
  }

  std::map<int, nlohmann::json> load_plies(const std::string& id) override {
    std::lock_guard lock(mutex_);
    auto it = plies_.find(id);
    return it == plies_.end() ? std::map<int, nlohmann::json>{} : it->second;
  }

  void expire_jobs(int64_t before_ms) override {
    std::lock_guard lock(mutex_);
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      if (it->second.finished_ms && it->second.finished_ms < before_ms) {
        plies_.erase(it->first);
        it = jobs_.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::optional<Eval> find_eval(const std::string& position, int multipv, int min_depth) override {
    std::lock_guard lock(mutex_);
    auto it = evals_.find(position);
    if (it == evals_.end()) return std::nullopt;
    const Entry* best = nullptr;
    for (auto& e : it->second)
      if (e->eval.multipv >= multipv && e->eval.depth >= min_depth &&
          (!best || e->eval.depth > best->eval.depth))
        best = &*e;
    if (!best) return std::nullopt;
    for (auto& e : it->second)
      if (&*e == best) order_.splice(order_.begin(), order_, e);
    return best->eval;
  }

  void put_eval(const std::string& position, const Eval& eval) override {
    std::lock_guard lock(mutex_);
    auto& entries = evals_[position];
    for (auto& e : entries)
      if (e->eval.multipv == eval.multipv) {
        if (e->eval.depth > eval.depth) return;
        bytes_ -= e->bytes;
        e->eval = eval;
        e->bytes = size_of(position, eval);
        bytes_ += e->bytes;
        order_.splice(order_.begin(), order_, e);
        evict();
        return;
      }
    order_.push_front(Entry{position, eval, size_of(position, eval)});
    entries.push_back(order_.begin());
    bytes_ += order_.front().bytes;
    evict();
  }

  Status each_eval(const EachEval& each) override {
    std::vector<std::pair<std::string, Eval>> all;
    {
      std::lock_guard lock(mutex_);
      for (const auto& e : order_) all.emplace_back(e.position, e.eval);
    }
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
      return std::tie(a.first, a.second.multipv) < std::tie(b.first, b.second.multipv);
    });
    for (const auto& [position, eval] : all) each(position, eval);
    return true;
  }

  LibraryStats library_stats() override {
    std::lock_guard lock(mutex_);
    return {bytes_, order_.size()};
  }

  void flush() override {}

  BindResult bind_idempotency_key(const std::string& owner, const std::string& key,
                                  const IdempotencyBinding& binding, int64_t ttl_ms) override {
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mutex_);
    if (now - last_sweep_ >= std::chrono::seconds(1)) {  // the expired go, once a second
      last_sweep_ = now;
      for (auto it = keys_.begin(); it != keys_.end();)
        it = it->second.second <= now ? keys_.erase(it) : std::next(it);
    }
    auto [it, added] = keys_.try_emplace(std::to_string(owner.size()) + ":" + owner + key);
    if (!added && it->second.second > now) {
      IdempotencyBinding kept = it->second.first;
      kept.job_kept = jobs_.count(kept.job_id) > 0;
      return std::optional(kept);
    }
    it->second = {binding, now + std::chrono::milliseconds(ttl_ms)};
    return std::optional<IdempotencyBinding>();
  }

  void release_idempotency_key(const std::string& owner, const std::string& key,
                               const std::string& job_id) override {
    std::lock_guard lock(mutex_);
    auto it = keys_.find(std::to_string(owner.size()) + ":" + owner + key);
    if (it != keys_.end() && it->second.first.job_id == job_id) keys_.erase(it);
  }

 private:
  struct Entry {
    std::string position;
    Eval eval;
    uint64_t bytes = 0;
  };
  static uint64_t size_of(const std::string& position, const Eval& e) {
    return position.size() + e.body.size() + 64;
  }
  void evict() {  // with mutex_ held
    while (bytes_ > cap_bytes_ && !order_.empty()) {
      Entry& last = order_.back();
      auto& entries = evals_[last.position];
      for (auto it = entries.begin(); it != entries.end(); ++it)
        if (&**it == &last) {
          entries.erase(it);
          break;
        }
      if (entries.empty()) evals_.erase(last.position);
      bytes_ -= last.bytes;
      order_.pop_back();
    }
  }

  const uint64_t cap_bytes_;
  std::mutex mutex_;
  std::unordered_map<std::string, JobRecord> jobs_;
  std::unordered_map<std::string, std::map<int, nlohmann::json>> plies_;
  std::list<Entry> order_;  // most recently used first
  std::unordered_map<std::string, std::vector<std::list<Entry>::iterator>> evals_;
  uint64_t bytes_ = 0;
  // Idempotency keys: owner and key -> binding, expiry.
  std::unordered_map<std::string,
                     std::pair<IdempotencyBinding, std::chrono::steady_clock::time_point>>
      keys_;
  std::chrono::steady_clock::time_point last_sweep_{};
};

}  // namespace

std::shared_ptr<Store> make_memory_store(size_t library_mib) {
  return std::make_shared<MemoryStore>(library_mib);
}

}  // namespace kibitz::server::store
