// Admission and order of searches: a bounded queue in front of the search
// pool. Work starts only when the threads it asks for are free, so a
// request's time limit starts when it really searches; interactive work
// (WebSocket, synchronous REST) goes before batch work (jobs, reviews).
//
// Fair between clients ("owners": an API key, else the client's address):
//  - within a priority, the next to start is the queued work whose owner has
//    the fewest searches running, then the oldest;
//  - a full queue still admits interactive work of an owner with fewer
//    queued searches than the owner with the most: that owner's newest
//    queued interactive search is refused instead (429 queue_full, as if it
//    had come when the queue was full); batch work is never pushed out;
//  - a live (infinite) search that has run for the live slice yields its
//    threads while other work waits: it ends as if stopped, with its best
//    move so far. Without this a few clients' live analyses would hold every
//    search thread for as long as they stay connected.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
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
  std::string owner;  // who asked, for fairness; "" is an owner too
  bool live = false;  // runs until stopped (WebSocket "infinite")

 private:
  friend class Scheduler;
  enum class State { idle, queued, running, finished };
  State state_ = State::idle;
  uint64_t sequence_ = 0;
  std::chrono::steady_clock::time_point started_{};
  bool yielding_ = false;
};

class Scheduler : public std::enable_shared_from_this<Scheduler> {  // thread-safe
 public:
  // live_slice 0: live searches never yield.
  Scheduler(int capacity, size_t queue_size, Metrics& metrics,
            std::chrono::milliseconds live_slice = std::chrono::milliseconds(0));
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

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
  using QueueKey = std::pair<int, uint64_t>;  // (priority, arrival)
  // Moves what fits from the queue to running; the caller starts them
  // after releasing the lock.
  std::vector<std::shared_ptr<Work>> take_startable();
  // The queued work to start next (fair order), or queue_.end().
  std::map<QueueKey, std::shared_ptr<Work>>::iterator next_in_line();
  // A queued interactive search to refuse so that `work` fits, or nullptr.
  std::shared_ptr<Work> evict_for(const Work& work);
  // Running live searches to stop so that the next in line can start.
  std::vector<std::shared_ptr<Work>> take_yielding();
  void slicer();
  int running_of(const std::string& owner) const;
  void forget_if_idle(const std::string& owner);

  const int capacity_;
  const size_t queue_size_;
  Metrics& metrics_;
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  const std::chrono::milliseconds live_slice_;
  std::map<QueueKey, std::shared_ptr<Work>> queue_;
  std::unordered_map<Work*, std::shared_ptr<Work>> running_;
  std::unordered_map<std::string, int> running_by_owner_, queued_by_owner_;
  std::unordered_map<std::string, uint64_t> last_start_;  // owner -> starts_ at its last start
  uint64_t starts_ = 0;
  std::condition_variable slicer_wake_;
  bool closing_ = false;
  std::thread slicer_thread_;  // started in the constructor's body
  int free_ = 0;
  uint64_t next_sequence_ = 0;
  bool shutting_down_ = false;
};

}  // namespace kibitz::server
