// A fixed pool of search threads, created once with large stacks and parked
// on a condition variable between tasks. A search job submits one task per
// thread it wants; tasks run by priority (interactive before batch), then in
// submission order, so concurrent jobs share the threads. A job can take its
// queued tasks back (cancel_group) when it stops before they started.
#pragma once

#include <pthread.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace kibitz::engine {

class ThreadPool {
 public:
  struct Task {
    std::function<void()> run;
    std::function<void()> cancelled;  // called instead of run when cancelled while queued
    int priority = 0;                 // lower runs first
    uint64_t group = 0;
  };

  static constexpr size_t kDefaultStack = size_t(16) << 20;

  explicit ThreadPool(int threads, size_t stack_bytes = kDefaultStack);
  ~ThreadPool();  // runs `cancelled` for queued tasks, waits for running ones
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void submit(std::vector<Task> tasks);
  // Removes the queued tasks of `group` and calls their `cancelled`.
  void cancel_group(uint64_t group);

  int size() const { return int(threads_.size()); }
  int busy() const;
  size_t queued() const;

 private:
  static void* entry(void* self);
  void loop();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  // (priority, sequence) -> task
  std::map<std::pair<int, uint64_t>, Task> queue_;
  uint64_t sequence_ = 0;
  int busy_ = 0;
  bool quit_ = false;
  std::vector<pthread_t> threads_;
};

}  // namespace kibitz::engine
