// The store's own threads. A call that may wait for the store (SQLite's
// durable writes, any Redis command) made for a network connection runs
// here, never on an I/O thread: a slow disk or a Redis that stops answering
// holds these threads, not the ones that answer /healthz and every other
// client. The queue is bounded: a task that finds it full is refused at
// once (the caller answers 503), rather than waiting without end.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kibitz::server::store {

class StorePool {
 public:
  // run: true when the task runs; false when the pool closed before it
  // started (the caller's answer is then "shutting down"). Exactly once.
  using Task = std::function<void(bool run)>;

  // nice: the threads' nice value (Linux, per thread; 0 leaves it).
  StorePool(int threads, size_t max_queued, int nice = 0);
  ~StorePool();  // close()
  StorePool(const StorePool&) = delete;
  StorePool& operator=(const StorePool&) = delete;

  // Queues `task`; false (and the task is dropped uncalled) when
  // max_queued tasks wait already or the pool is closed.
  bool post(Task task);
  // Takes no more; the tasks still queued are called with false, the
  // running ones finish; then the threads are joined. Idempotent.
  void close();

  size_t queued() const;   // waiting for a thread
  size_t running() const;  // on a thread now
  size_t max_queued() const { return max_queued_; }

 private:
  void loop(int nice);

  const size_t max_queued_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Task> tasks_;
  size_t running_ = 0;
  bool closed_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace kibitz::server::store
