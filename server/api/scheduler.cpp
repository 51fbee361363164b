// The scheduler (scheduler.h tells its rules). One concept in one file,
// over 450 lines: admission, the fair choice of the next work, the live
// slices, cancel and shutdown all read and change the same queues and
// counts under one mutex; split, each part would need the others' state.
#include "server/api/scheduler.h"

#include <algorithm>
#include <limits>

#include <spdlog/spdlog.h>

#include "common/contain.h"
#include "server/api/replies.h"

namespace kibitz::server {

namespace {

// The shares as they can hold for this pool and queue: an owner may always
// run one thread, and batch work always keeps one thread and one place.
Shares fitted(Shares s, int capacity, size_t queue_size) {
  if (s.max_threads_per_owner > 0)
    s.max_threads_per_owner = std::min(s.max_threads_per_owner, capacity);
  s.interactive_threads = std::clamp(s.interactive_threads, 0, capacity - 1);
  s.interactive_queue = queue_size > 0 ? std::min(s.interactive_queue, queue_size - 1) : 0;
  return s;
}

}  // namespace

Scheduler::Scheduler(int capacity, size_t queue_size, Metrics& metrics,
                     std::chrono::milliseconds live_slice, Shares shares)
    : capacity_(std::max(1, capacity)),
      queue_size_(queue_size),
      metrics_(metrics),
      live_slice_(live_slice),
      shares_(fitted(shares, capacity_, queue_size)),
      free_(capacity_) {}

// --- Work ---------------------------------------------------------------

bool Work::deliver(Reply reply) {
  if (reported_.exchange(true, std::memory_order_acq_rel)) return false;
  // on_progress stays: a search thread may be reading it right now.
  auto on_done = std::move(reporter_.on_done);
  contained(
      [&] {
        if (on_done) on_done(std::move(reply));
      },
      [&](const std::string& what) {
        spdlog::error("work {}: the receiver of its answer threw: {}", name_, what);
      });
  return true;
}

void Work::done(Reply reply) {
  if (!deliver(std::move(reply))) return;
  running_.store(false, std::memory_order_release);
  if (scheduler_) scheduler_->finished(*this);
}

void Work::progress(nlohmann::json update) {
  if (reported_.load(std::memory_order_acquire) || !reporter_.on_progress) return;
  contained([&] { reporter_.on_progress(std::move(update)); },
            [&](const std::string& what) {
              spdlog::error("work {}: the receiver of its progress threw: {}", name_, what);
            });
}

// --- Scheduler ----------------------------------------------------------

void Scheduler::launch(std::vector<std::shared_ptr<Work>> works) {
  thread_local std::vector<std::shared_ptr<Work>>* pending = nullptr;
  if (pending) {  // inside another launch on this thread: let it start these
    for (auto& w : works) pending->push_back(std::move(w));
    return;
  }
  std::vector<std::shared_ptr<Work>> list = std::move(works);
  pending = &list;
  for (size_t i = 0; i < list.size(); ++i) {
    std::shared_ptr<Work> w = std::move(list[i]);
    contained([&] { w->start(); },
              [&](const std::string& what) {
                spdlog::error("work {} failed to start: {}", w->name(), what);
                if (w->running()) metrics_.job_finished(false, true, 0);
                stop_contained(*w);
                w->done(internal_reply(what));
              });
  }
  pending = nullptr;
}

void Scheduler::stop_contained(Work& work) {
  contained([&] { work.stop(); },
            [&](const std::string& what) {
              spdlog::error("work {}: stop threw: {}", work.name(), what);
            });
}

void Scheduler::abort_contained(Work& work, Reply why) { work.deliver(std::move(why)); }

namespace {

int count_of(const std::unordered_map<std::string, int>& counts, const std::string& owner) {
  auto it = counts.find(owner);
  return it == counts.end() ? 0 : it->second;
}

void decrement(std::unordered_map<std::string, int>& counts, const std::string& owner) {
  auto it = counts.find(owner);
  if (it != counts.end() && --it->second <= 0) counts.erase(it);
}

}  // namespace

int Scheduler::running_of(const std::string& owner) const { return running_of_owner(owner).works; }

bool Scheduler::over_share(const std::string& owner) const {
  const int cap = shares_.max_threads_per_owner;
  return cap > 0 && running_of_owner(owner).threads > cap;
}

const Scheduler::Running& Scheduler::running_of_owner(const std::string& owner) const {
  static const Running kNone;
  auto it = running_by_owner_.find(owner);
  return it == running_by_owner_.end() ? kNone : it->second;
}

// An owner with nothing queued or running starts afresh: first in turn.
void Scheduler::forget_if_idle(const std::string& owner) {
  if (!count_of(queued_by_owner_, owner) && !running_of(owner)) last_start_.erase(owner);
}

std::optional<Scheduler::Admission> Scheduler::refusal(const std::string& owner,
                                                       Priority priority) const {
  if (shutting_down_) return Admission::shutting_down;
  const size_t cap = shares_.max_work_per_owner;
  if (cap > 0 && size_t(count_of(queued_by_owner_, owner) + running_of(owner)) >= cap)
    return Admission::client_cap;
  // Batch work never takes the queue's last interactive places, even when
  // it could start at once: started batch work is what fills them later.
  if (priority == Priority::batch && queue_size_ > 0 &&
      batch_queued_ >= queue_size_ - shares_.interactive_queue)
    return Admission::queue_full;
  return std::nullopt;
}

Scheduler::Admission Scheduler::admissible(const std::string& owner, Priority priority) const {
  std::lock_guard lock(mutex_);
  if (auto no = refusal(owner, priority)) return *no;
  return Admission::accepted;
}

int Scheduler::batch_room() const {
  std::lock_guard lock(mutex_);
  return std::max(0, std::min(free_, batch_threads_cap() - batch_threads_) - int(batch_queued_));
}

bool Scheduler::within_shares(const Work& work) const {
  const int owner_cap = shares_.max_threads_per_owner;
  if (owner_cap > 0) {
    // Work with limits does not wait for its owner's live searches, which
    // yield at once when another owner needs the threads (take_yielding).
    const Running& r = running_of_owner(work.owner);
    const int held = work.live ? r.threads : r.threads - r.live_threads;
    if (held + work.threads > owner_cap) return false;
  }
  return work.priority != Priority::batch || batch_threads_ + work.threads <= batch_threads_cap();
}

void Scheduler::count_start(const Work& work) {
  free_ -= work.threads;
  Running& r = running_by_owner_[work.owner];
  ++r.works;
  r.threads += work.threads;
  if (work.live) r.live_threads += work.threads;
  if (work.priority == Priority::batch) batch_threads_ += work.threads;
}

void Scheduler::count_end(const Work& work) {
  free_ += work.threads;
  auto it = running_by_owner_.find(work.owner);
  if (it != running_by_owner_.end()) {
    it->second.threads -= work.threads;
    if (work.live) it->second.live_threads -= work.threads;
    if (--it->second.works <= 0) running_by_owner_.erase(it);
  }
  if (work.priority == Priority::batch) batch_threads_ -= work.threads;
}

void Scheduler::dequeued(const Work& work) {
  decrement(queued_by_owner_, work.owner);
  if (work.priority == Priority::batch) --batch_queued_;
}

Scheduler::Admission Scheduler::submit(const std::shared_ptr<Work>& work) {
  std::vector<std::shared_ptr<Work>> start;
  std::shared_ptr<Work> evicted;
  {
    std::lock_guard lock(mutex_);
    if (auto no = refusal(work->owner, work->priority)) return *no;
    // A work never asks for more threads than its shares allow, so that it
    // can always start once its owner's other work has finished.
    int most = capacity_;
    if (shares_.max_threads_per_owner > 0) most = std::min(most, shares_.max_threads_per_owner);
    if (work->priority == Priority::batch) most = std::min(most, batch_threads_cap());
    work->threads = std::clamp(work->threads, 1, most);
    const bool starts_now = queue_.empty() && work->threads <= free_ && within_shares(*work);
    if (!starts_now && queue_.size() >= queue_size_) {
      evicted = evict_for(*work);
      if (!evicted) return Admission::queue_full;
    }
    work->sequence_ = next_sequence_++;
    work->state_ = Work::State::queued;
    work->scheduler_ = this;
    queue_.emplace(QueueKey{int(work->priority), work->sequence_}, work);
    ++queued_by_owner_[work->owner];
    if (work->priority == Priority::batch) ++batch_queued_;
    metrics_.job_queued();
    start = take_startable();
    if (!queue_.empty()) slicer_wake_.notify_one();
  }
  if (evicted) {
    Reply r = error_reply(429, "queue_full",
                          "the analysis queue is full (this search made room for another "
                          "client's: one client may not fill the queue)");
    r.headers.emplace_back("Retry-After", "1");
    abort_contained(*evicted, std::move(r));
  }
  launch(std::move(start));
  return Admission::accepted;
}

std::shared_ptr<Work> Scheduler::evict_for(const Work& work) {
  if (work.priority != Priority::interactive) return nullptr;
  const int mine = count_of(queued_by_owner_, work.owner);
  const std::string* most = nullptr;
  int most_count = 0;
  for (const auto& [owner, n] : queued_by_owner_)
    if (n > most_count) most = &owner, most_count = n;
  // Only an owner with clearly more queued than the newcomer's gives way,
  // so that two clients never take turns pushing each other out.
  if (!most || most_count < mine + 2) return nullptr;
  for (auto it = queue_.rbegin(); it != queue_.rend(); ++it) {
    Work& w = *it->second;
    if (w.owner != *most || w.priority != Priority::interactive) continue;
    auto victim = std::move(it->second);
    queue_.erase(std::next(it).base());
    dequeued(*victim);
    forget_if_idle(victim->owner);
    victim->state_ = Work::State::finished;
    metrics_.job_dequeued();
    return victim;
  }
  return nullptr;
}

std::map<Scheduler::QueueKey, std::shared_ptr<Work>>::iterator Scheduler::next_in_line() {
  // Within the most urgent priority that has work within its shares: the
  // owner with the fewest searches running first, then the one whose last
  // start is oldest (owners take turns), then arrival order. Work beyond
  // its owner's (or batch work's) share is passed over until it fits.
  auto best = queue_.end();
  std::pair<int, uint64_t> best_rank{std::numeric_limits<int>::max(), 0};
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (best != queue_.end() && it->first.first != best->first.first) break;
    if (!within_shares(*it->second)) continue;
    const std::string& owner = it->second->owner;
    const auto last = last_start_.find(owner);
    const std::pair<int, uint64_t> rank{running_of(owner),
                                        last == last_start_.end() ? 0 : last->second};
    if (rank < best_rank) {
      best = it;
      best_rank = rank;
      if (rank == std::pair<int, uint64_t>{0, 0}) break;
    }
  }
  return best;
}

std::vector<std::shared_ptr<Work>> Scheduler::take_startable() {
  std::vector<std::shared_ptr<Work>> start;
  // The next in line waits for its threads rather than being overtaken by
  // smaller work, so a large job is never starved.
  const auto now = std::chrono::steady_clock::now();
  for (;;) {
    auto it = next_in_line();
    if (it == queue_.end() || it->second->threads > free_) break;
    auto w = std::move(it->second);
    queue_.erase(it);
    dequeued(*w);
    count_start(*w);
    w->state_ = Work::State::running;
    w->running_.store(true, std::memory_order_release);
    w->started_ = now;
    last_start_[w->owner] = ++starts_;
    running_.emplace(w.get(), w);
    metrics_.job_started();
    start.push_back(std::move(w));
  }
  return start;
}

std::vector<std::shared_ptr<Work>> Scheduler::take_yielding() {
  std::vector<std::shared_ptr<Work>> out;
  if (shutting_down_) return out;
  take_own_live(out);
  auto next = next_in_line();
  if (next == queue_.end()) return out;
  int need = next->second->threads - free_;
  for (const auto& [ptr, w] : running_)
    if (w->yielding_) need -= w->threads;  // already on their way out
  if (need <= 0) return out;
  const auto now = std::chrono::steady_clock::now();
  const std::string& waiting = next->second->owner;
  std::vector<std::shared_ptr<Work>> due;
  for (const auto& [ptr, w] : running_) {
    if (!w->live || w->yielding_) continue;
    // Past its owner's share (it let the owner's other work start beside
    // it): at once for another owner; else after its slice.
    const bool over = w->owner != waiting && over_share(w->owner);
    if (over || (live_slice_.count() > 0 && now - w->started_ >= live_slice_)) due.push_back(w);
  }
  std::sort(due.begin(), due.end(), [&](const auto& a, const auto& b) {
    const bool a_over = over_share(a->owner), b_over = over_share(b->owner);
    if (a_over != b_over) return a_over;  // past their share first
    return a->started_ < b->started_;     // then the longest-running
  });
  for (auto& w : due) {
    if (need <= 0) break;
    w->yielding_ = true;
    need -= w->threads;
    out.push_back(std::move(w));
  }
  return out;
}

// Wakes while work waits, and asks live searches past their slice to stop.
std::vector<std::shared_ptr<Work>> Scheduler::take_expired() {
  std::vector<std::shared_ptr<Work>> out;
  const auto now = engine::Clock::now();
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (it->second->queue_deadline > now) {
      ++it;
      continue;
    }
    auto w = std::move(it->second);
    it = queue_.erase(it);
    dequeued(*w);
    forget_if_idle(w->owner);
    w->state_ = Work::State::finished;
    metrics_.job_dequeued();
    out.push_back(std::move(w));
  }
  if (!out.empty() && queue_.empty() && running_.empty()) idle_.notify_all();
  return out;
}

// Interactive work that waits only because its owner's running work holds
// the owner's share of threads, while one of those is the owner's own live
// search: the live search yields, at once to a search with limits (the
// client's newer request comes first; its live analysis ends as if stopped
// and the client asks again), after its slice to another live search (the
// client's live analyses take turns). Live searches count against the
// share: otherwise a client's many live searches would hold every thread
// for their slices. Without a share smaller than the pool, only the slice
// rule (take_yielding) applies.
void Scheduler::take_own_live(std::vector<std::shared_ptr<Work>>& out) {
  const int cap = shares_.max_threads_per_owner;
  if (cap <= 0 || cap >= capacity_) return;
  const auto now = std::chrono::steady_clock::now();
  std::unordered_map<std::string, int> freed;  // by owner, of yielding works
  for (const auto& [ptr, w] : running_)
    if (w->yielding_) freed[w->owner] += w->threads;
  for (const auto& [key, q] : queue_) {
    if (q->priority != Priority::interactive) break;  // in key order: batch after
    // Work with limits waiting for the owner's other work with limits: no
    // live search's end would let it start.
    if (!q->live && !within_shares(*q)) continue;
    int need = running_of_owner(q->owner).threads - freed[q->owner] + q->threads - cap;
    if (need <= 0) continue;
    for (const auto& [ptr, w] : running_) {
      if (need <= 0) break;
      if (w->owner != q->owner || !w->live || w->yielding_) continue;
      if (q->live && (live_slice_.count() == 0 || now - w->started_ < live_slice_)) continue;
      w->yielding_ = true;
      need -= w->threads;
      freed[q->owner] += w->threads;
      out.push_back(w);
    }
  }
}

// Wakes every 50 ms while work waits: answers queued work whose deadline
// has passed (it would otherwise wait for threads that may stay busy), and
// asks live searches past their slice to stop.
void Scheduler::run_slicer() {
  std::unique_lock lock(mutex_);
  while (!closing_) {
    if (queue_.empty())
      slicer_wake_.wait(lock);
    else
      slicer_wake_.wait_for(lock, std::chrono::milliseconds(50));
    if (closing_) break;
    auto expired = take_expired();
    auto yielding = take_yielding();
    if (expired.empty() && yielding.empty()) continue;
    lock.unlock();
    for (auto& w : expired)
      abort_contained(*w, error_reply(503, "deadline_exceeded",
                                      "the job's deadline passed while it waited in the queue"));
    for (auto& w : yielding) stop_contained(*w);  // reports and calls finished() as usual
    expired.clear();
    yielding.clear();
    lock.lock();
  }
}

void Scheduler::cancel(const std::shared_ptr<Work>& work) {
  bool was_queued = false, was_running = false;
  {
    std::lock_guard lock(mutex_);
    if (work->state_ == Work::State::queued) {
      queue_.erase({int(work->priority), work->sequence_});
      dequeued(*work);
      forget_if_idle(work->owner);
      work->state_ = Work::State::finished;
      metrics_.job_dequeued();
      was_queued = true;
      if (queue_.empty() && running_.empty()) idle_.notify_all();
    } else {
      was_running = work->state_ == Work::State::running;
    }
  }
  // Outside the lock: both report to the client, and stop() may finish the
  // work on this thread (which calls finished()).
  if (was_queued)
    abort_contained(*work, error_reply(409, "cancelled", "cancelled before it started"));
  if (was_running) stop_contained(*work);
}

void Scheduler::close_slicer() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  slicer_wake_.notify_all();
}

void Scheduler::finished(Work& work) {
  std::shared_ptr<Work> keep;  // the work outlives its removal from running_
  std::vector<std::shared_ptr<Work>> start;
  {
    std::lock_guard lock(mutex_);
    auto it = running_.find(&work);
    if (it == running_.end()) return;
    keep = std::move(it->second);
    running_.erase(it);
    count_end(work);
    forget_if_idle(work.owner);
    work.state_ = Work::State::finished;
    if (!shutting_down_) start = take_startable();
    ++finishing_;
  }
  launch(std::move(start));
  keep.reset();
  std::lock_guard lock(mutex_);
  if (--finishing_ == 0 && queue_.empty() && running_.empty()) idle_.notify_all();
}

void Scheduler::shutdown() {
  std::vector<std::shared_ptr<Work>> queued, running;
  {
    std::lock_guard lock(mutex_);
    shutting_down_ = true;
    for (auto& [key, w] : queue_) {
      w->state_ = Work::State::finished;
      metrics_.job_dequeued();
      queued.push_back(std::move(w));
    }
    queue_.clear();
    queued_by_owner_.clear();
    batch_queued_ = 0;
    last_start_.clear();
    for (auto& [ptr, w] : running_) running.push_back(w);
    if (running_.empty()) idle_.notify_all();
  }
  for (auto& w : queued) abort_contained(*w, shutting_down_reply());
  for (auto& w : running) stop_contained(*w);
}

void Scheduler::wait_idle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty() && running_.empty() && finishing_ == 0; });
}

bool Scheduler::shutting_down() const {
  std::lock_guard lock(mutex_);
  return shutting_down_;
}

size_t Scheduler::queued() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

size_t Scheduler::running() const {
  std::lock_guard lock(mutex_);
  return running_.size();
}

}  // namespace kibitz::server
