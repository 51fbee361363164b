#include "engine/thread_pool.h"

#include <stdexcept>
#include <string>

namespace kibitz::engine {

ThreadPool::ThreadPool(int threads, size_t stack_bytes) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes);
  for (int i = 0; i < threads; ++i) {
    pthread_t t;
    if (const int err = pthread_create(&t, &attr, &ThreadPool::entry, this)) {
      pthread_attr_destroy(&attr);
      {
        std::lock_guard lock(mutex_);
        quit_ = true;
      }
      wake_.notify_all();
      for (pthread_t started : threads_) pthread_join(started, nullptr);
      throw std::runtime_error("cannot start search thread: error " + std::to_string(err));
    }
    threads_.push_back(t);
  }
  pthread_attr_destroy(&attr);
}

ThreadPool::~ThreadPool() {
  std::map<std::pair<int, uint64_t>, Task> dropped;
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
    dropped.swap(queue_);
  }
  wake_.notify_all();
  for (auto& [key, task] : dropped)
    if (task.cancelled) task.cancelled();
  for (pthread_t t : threads_) pthread_join(t, nullptr);
}

void* ThreadPool::entry(void* self) {
  static_cast<ThreadPool*>(self)->loop();
  return nullptr;
}

void ThreadPool::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return quit_ || !queue_.empty(); });
    if (queue_.empty()) return;  // quit_ and nothing left
    Task task = std::move(queue_.begin()->second);
    queue_.erase(queue_.begin());
    ++busy_;
    lock.unlock();
    task.run();
    task = Task{};  // release what the task holds before parking
    lock.lock();
    --busy_;
  }
}

void ThreadPool::submit(std::vector<Task> tasks) {
  bool rejected = false;
  {
    std::lock_guard lock(mutex_);
    rejected = quit_;
    if (!rejected)
      for (Task& t : tasks) queue_.emplace(std::make_pair(t.priority, sequence_++), std::move(t));
  }
  if (rejected) {
    for (Task& t : tasks)
      if (t.cancelled) t.cancelled();
    return;
  }
  wake_.notify_all();
}

void ThreadPool::cancel_group(uint64_t group) {
  std::vector<Task> dropped;
  {
    std::lock_guard lock(mutex_);
    for (auto it = queue_.begin(); it != queue_.end();) {
      if (it->second.group == group) {
        dropped.push_back(std::move(it->second));
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (Task& t : dropped)
    if (t.cancelled) t.cancelled();
}

int ThreadPool::busy() const {
  std::lock_guard lock(mutex_);
  return busy_;
}

size_t ThreadPool::queued() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

}  // namespace kibitz::engine
