// Admission and order of searches: a bounded queue in front of the search
// pool. Work starts only when the threads it asks for are free, so a
// request's time limit starts when it really searches; interactive work
// (WebSocket, synchronous REST) goes before batch work (jobs, reviews), each
// in arrival order.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "engine/analysis.h"
#include "server/api/api.h"
#include "server/api/metrics.h"

namespace kibitz::server {

class Scheduler;

class Work {
 public:
  virtual ~Work() = default;
  // The scheduler gave the work its threads. The work must end by calling
  // Scheduler::finished(*this) exactly once (possibly before start returns).
  virtual void start() = 0;
  // Running: end soon and report as usual. Idempotent, any thread.
  virtual void stop() = 0;
  // Never started (cancelled while queued, shutdown): report `why` instead.
  virtual void abort(Reply why) = 0;

  int threads = 1;
  engine::Priority priority = engine::Priority::interactive;

 private:
  friend class Scheduler;
  enum class State { idle, queued, running, finished };
  State state_ = State::idle;
  uint64_t sequence_ = 0;
};

class Scheduler : public std::enable_shared_from_this<Scheduler> {  // thread-safe
 public:
  Scheduler(int capacity, size_t queue_size, Metrics& metrics);

  enum class Admission { accepted, queue_full, shutting_down };
  // Queues the work, or starts it at once when its threads are free.
  Admission submit(const std::shared_ptr<Work>& work);
  // Queued: aborted with "cancelled". Running: stopped.
  void cancel(const std::shared_ptr<Work>& work);
  // Called by a work when it has ended: frees its threads, starts the next.
  void finished(Work& work);
  // Refuses new work, aborts queued work with shutting_down, stops running work.
  void shutdown();
  // Returns when nothing is queued or running.
  void wait_idle();

  int capacity() const { return capacity_; }
  size_t queued() const;
  size_t running() const;

 private:
  // Moves what fits from the queue to running; the caller starts them
  // after releasing the lock.
  std::vector<std::shared_ptr<Work>> take_startable();

  const int capacity_;
  const size_t queue_size_;
  Metrics& metrics_;
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  std::map<std::pair<int, uint64_t>, std::shared_ptr<Work>> queue_;  // (priority, arrival)
  std::unordered_map<Work*, std::shared_ptr<Work>> running_;
  int free_ = 0;
  uint64_t next_sequence_ = 0;
  bool shutting_down_ = false;
};

}  // namespace kibitz::server
