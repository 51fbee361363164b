#include "server/store/store_pool.h"

#include <spdlog/spdlog.h>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "common/contain.h"

namespace kibitz::server::store {

StorePool::StorePool(int threads, size_t max_queued, int nice)
    : max_queued_(std::max<size_t>(1, max_queued)) {
  for (int i = 0; i < std::max(1, threads); ++i)
    threads_.emplace_back([this, nice] { loop(nice); });
}

StorePool::~StorePool() { close(); }

bool StorePool::post(Task task) {
  {
    std::lock_guard lock(mutex_);
    if (closed_ || tasks_.size() >= max_queued_) return false;
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
  return true;
}

void StorePool::close() {
  std::deque<Task> dropped;
  {
    std::lock_guard lock(mutex_);
    if (closed_ && threads_.empty()) return;
    closed_ = true;
    dropped.swap(tasks_);
  }
  cv_.notify_all();
  for (Task& t : dropped)
    contained([&] { t(false); },
              [](const std::string& what) { spdlog::error("store pool: a task: {}", what); });
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  std::lock_guard lock(mutex_);
  threads_.clear();
}

size_t StorePool::queued() const {
  std::lock_guard lock(mutex_);
  return tasks_.size();
}

size_t StorePool::running() const {
  std::lock_guard lock(mutex_);
  return running_;
}

void StorePool::loop(int nice) {
  // Lowering a thread's own priority needs no privilege; a failure only
  // costs latency elsewhere.
  if (nice > 0) (void)setpriority(PRIO_PROCESS, pid_t(syscall(SYS_gettid)), std::min(nice, 19));
  for (;;) {
    Task task;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [this] { return closed_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // closed, and nothing left
      task = std::move(tasks_.front());
      tasks_.pop_front();
      ++running_;
    }
    contained([&] { task(true); },
              [](const std::string& what) { spdlog::error("store pool: a task threw: {}", what); });
    task = nullptr;  // what it holds goes before it counts as done
    std::lock_guard lock(mutex_);
    --running_;
  }
}

}  // namespace kibitz::server::store
