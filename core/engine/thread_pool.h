// A fixed pool of search threads, created once with large stacks and parked
// on a condition variable between tasks. A search submits one task per
// thread it wants; tasks run in submission order. The pool is not a
// scheduler: the server's Scheduler (the only queue) starts a search only
// when its threads are free, so tasks rarely wait here. A search can take
// its queued tasks back (cancel_group) when it stops before they started.
//
// No exception leaves a task: one that escapes is caught on the thread,
// reported to on_task_error, and the thread goes on.
#pragma once

#include <pthread.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace kibitz::engine {

class ThreadPool {
 public:
  struct Task {
    std::function<void()> run;
    std::function<void()> cancelled;  // called instead of run when cancelled while queued
    uint64_t group = 0;
  };

  static constexpr size_t kDefaultStack = size_t(16) << 20;

  struct Options {
    size_t stack_bytes = kDefaultStack;
    // The threads' nice value (0..19): a higher one yields the CPU to the
    // process's other threads, such as a server's I/O threads.
    int nice = 0;
    // Linux SCHED_IDLE: the threads run only when no other thread of the
    // process's group wants the core, and a waking thread (an I/O thread
    // with a request) takes the core from them at once.
    bool idle_policy = false;
    std::function<void(const std::string&)> on_task_error;
  };
  explicit ThreadPool(int threads) : ThreadPool(threads, Options{}) {}
  ThreadPool(int threads, Options options);
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
  void run_contained(std::function<void()>& f);

  std::deque<Task> queue_;
  const Options options_;
  int busy_ = 0;
  bool quit_ = false;
  std::vector<pthread_t> threads_;
};

}  // namespace kibitz::engine
