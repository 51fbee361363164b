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
//
// Shares no client can exceed (Shares; 0 = no cap):
//  - an owner has at most max_work_per_owner works queued and running
//    together: more is refused (429 client_work_cap);
//  - an owner's running works hold at most max_threads_per_owner threads
//    together: its queued work waits, others' overtakes it. Its live
//    searches are the exception, as they can be stopped at any time: its
//    work with limits may start beside them on threads nobody else waits
//    for, and a live search of an owner past its share yields at once when
//    another owner's work waits for threads (a client's board analysis
//    never keeps its own job from running on an idle server);
//  - batch work never holds the last interactive_threads threads nor the
//    last interactive_queue places of the queue: a flood of jobs leaves
//    room for interactive clients.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/analysis.h"
#include "server/api/api.h"
#include "server/api/metrics.h"

namespace kibitz::server {

class Scheduler;

// A unit of work: one analysis, one review or one perft, decoded once. The
// scheduler starts it when its threads are free; it reports its answer
// through done() (started work) or the scheduler's abort (never started),
// exactly once either way.
class Work {
 public:
  Work(Reporter reporter, std::string name)
      : reporter_(std::move(reporter)), name_(std::move(name)) {}
  virtual ~Work() = default;
  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;

  const std::string& name() const { return name_; }  // for logs: a job id, or "a12"
  // Started and not yet finished (a job's "running").
  bool running() const { return running_.load(std::memory_order_acquire); }

  int threads = 1;
  Priority priority = Priority::interactive;
  std::string owner;  // who asked, for fairness; "" is an owner too
  bool live = false;  // runs until stopped (WebSocket "infinite")
  // Still queued at this time: answered 503 deadline_exceeded then.
  engine::Clock::time_point queue_deadline = engine::Clock::time_point::max();

 protected:
  // The work has its threads: start it. It must end with done(), possibly
  // before start returns. An exception from start fails the work (500).
  virtual void start() = 0;
  // Running: end soon and report as usual. Idempotent, any thread.
  virtual void stop() = 0;
  // Reports the answer (the first call only) and gives the threads back.
  void done(Reply reply);
  // Progress for whoever asked; an exception from the receiver is logged.
  void progress(nlohmann::json update);

 private:
  friend class Scheduler;
  bool deliver(Reply reply);  // false when already reported

  Reporter reporter_;
  const std::string name_;
  std::atomic<bool> reported_{false};
  std::atomic<bool> running_{false};
  Scheduler* scheduler_ = nullptr;  // set by submit; outlives the work's run
  enum class State { idle, queued, running, finished };
  State state_ = State::idle;
  uint64_t sequence_ = 0;
  std::chrono::steady_clock::time_point started_{};
  bool yielding_ = false;
};

// What one owner, and batch work as a whole, may take (see the top).
struct Shares {
  int max_threads_per_owner = 0;  // threads of one owner's running works; 0: no cap
  size_t max_work_per_owner = 0;  // one owner's queued + running works; 0: no cap
  int interactive_threads = 0;    // threads batch work never takes (at most capacity - 1)
  size_t interactive_queue = 0;   // queue places batch work never takes
};

class Scheduler {  // thread-safe
 public:
  // live_slice 0: live searches yield only when their owner is past its share.
  Scheduler(int capacity, size_t queue_size, Metrics& metrics,
            std::chrono::milliseconds live_slice = std::chrono::milliseconds(0),
            Shares shares = {});
  ~Scheduler() = default;  // after wait_idle and close_slicer
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  enum class Admission { accepted, queue_full, client_cap, shutting_down };
  // Queues the work, or starts it at once when its threads are free.
  Admission submit(const std::shared_ptr<Work>& work);
  // What submit would answer now for a work of this owner and priority,
  // before anything is stored for it (a job): a refusal is certain, an
  // acceptance may still turn into queue_full when others come first.
  Admission admissible(const std::string& owner, Priority priority) const;
  // Threads batch work may still start on now (several instances take
  // jobs from the shared queue while this is positive).
  int batch_room() const;
  // A work that submit() did not admit: `why` is its answer.
  void refuse(Work& work, Reply why) { abort_contained(work, std::move(why)); }
  // Queued: aborted with "cancelled". Running: stopped.
  void cancel(const std::shared_ptr<Work>& work);
  // Refuses new work, aborts queued work with shutting_down, stops running work.
  void shutdown();
  // Returns when nothing is queued or running, and no call into the
  // scheduler from a finishing work is still under way.
  void wait_idle();
  // The loop of queue deadlines and live slices: runs on a thread of the
  // owner's (which joins it before it destroys the scheduler) until
  // close_slicer().
  void run_slicer();
  void close_slicer();

  int capacity() const { return capacity_; }
  const Shares& shares() const { return shares_; }
  bool shutting_down() const;
  size_t queued() const;
  size_t running() const;

 private:
  friend class Work;
  using QueueKey = std::pair<int, uint64_t>;  // (priority, arrival)
  // A work has ended (Work::done): frees its threads, starts the next.
  void finished(Work& work);
  // Starts works in a loop on this thread. A work that ends inside its
  // start (an error, a passed deadline) calls finished(), which starts the
  // next: those are appended to the loop's list instead of nesting.
  void launch(std::vector<std::shared_ptr<Work>> works);
  static void stop_contained(Work& work);
  static void abort_contained(Work& work, Reply why);
  // Moves what fits from the queue to running; the caller starts them
  // after releasing the lock.
  std::vector<std::shared_ptr<Work>> take_startable();
  // The queued work to start next (fair order), or queue_.end().
  std::map<QueueKey, std::shared_ptr<Work>>::iterator next_in_line();
  // A queued interactive search to refuse so that `work` fits, or nullptr.
  std::shared_ptr<Work> evict_for(const Work& work);
  // Running live searches to stop so that the next in line can start.
  std::vector<std::shared_ptr<Work>> take_yielding();
  // Live searches whose own owner's interactive work waits for its share.
  void take_own_live(std::vector<std::shared_ptr<Work>>& out);
  // Queued works whose deadline has passed, taken out of the queue.
  std::vector<std::shared_ptr<Work>> take_expired();
  void slicer();
  int running_of(const std::string& owner) const;
  void forget_if_idle(const std::string& owner);
  // With mutex_ held: the refusal a new work of this owner gets, if any.
  std::optional<Admission> refusal(const std::string& owner, Priority priority) const;
  // With mutex_ held: the work may start once enough threads are free (its
  // owner and, for batch work, batch work as a whole are under their share).
  bool within_shares(const Work& work) const;
  int batch_threads_cap() const { return capacity_ - shares_.interactive_threads; }
  // Marks the work running / no longer running in the counts.
  void count_start(const Work& work);
  void count_end(const Work& work);
  // Takes a work taken out of queue_ out of the queued counts.
  void dequeued(const Work& work);

  const int capacity_;
  const size_t queue_size_;
  Metrics& metrics_;
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  const std::chrono::milliseconds live_slice_;
  const Shares shares_;
  std::map<QueueKey, std::shared_ptr<Work>> queue_;
  std::unordered_map<Work*, std::shared_ptr<Work>> running_;
  std::unordered_map<std::string, int> queued_by_owner_;
  struct Running {
    int works = 0, threads = 0;
    int live_threads = 0;  // of its live searches, among `threads`
  };
  // With mutex_ held: the owner's running works hold more threads than its share.
  bool over_share(const std::string& owner) const;
  std::unordered_map<std::string, Running> running_by_owner_;  // owners with running works
  const Running& running_of_owner(const std::string& owner) const;
  int batch_threads_ = 0;  // of running batch works
  size_t batch_queued_ = 0;
  std::unordered_map<std::string, uint64_t> last_start_;  // owner -> starts_ at its last start
  uint64_t starts_ = 0;
  std::condition_variable slicer_wake_;
  bool closing_ = false;
  int free_ = 0;
  int finishing_ = 0;  // finished() calls past their lock, still on their way out
  uint64_t next_sequence_ = 0;
  bool shutting_down_ = false;
};

}  // namespace kibitz::server
