#include "server/api/scheduler.h"

#include <algorithm>

namespace kibitz::server {

Scheduler::Scheduler(int capacity, size_t queue_size, Metrics& metrics)
    : capacity_(std::max(1, capacity)),
      queue_size_(queue_size),
      metrics_(metrics),
      free_(capacity_) {}

Scheduler::Admission Scheduler::submit(const std::shared_ptr<Work>& work) {
  std::vector<std::shared_ptr<Work>> start;
  {
    std::lock_guard lock(mutex_);
    if (shutting_down_) return Admission::shutting_down;
    work->threads = std::clamp(work->threads, 1, capacity_);
    const bool starts_now = queue_.empty() && work->threads <= free_;
    if (!starts_now && queue_.size() >= queue_size_) return Admission::queue_full;
    work->sequence_ = next_sequence_++;
    work->state_ = Work::State::queued;
    queue_.emplace(std::make_pair(int(work->priority), work->sequence_), work);
    metrics_.job_queued();
    start = take_startable();
  }
  for (auto& w : start) w->start();
  return Admission::accepted;
}

std::vector<std::shared_ptr<Work>> Scheduler::take_startable() {
  std::vector<std::shared_ptr<Work>> start;
  // Strict order: the first in line waits for its threads rather than being
  // overtaken by smaller work, so a large job is never starved.
  while (!queue_.empty() && queue_.begin()->second->threads <= free_) {
    auto w = std::move(queue_.begin()->second);
    queue_.erase(queue_.begin());
    free_ -= w->threads;
    w->state_ = Work::State::running;
    running_.emplace(w.get(), w);
    metrics_.job_started();
    start.push_back(std::move(w));
  }
  return start;
}

void Scheduler::cancel(const std::shared_ptr<Work>& work) {
  bool was_queued = false, was_running = false;
  {
    std::lock_guard lock(mutex_);
    if (work->state_ == Work::State::queued) {
      queue_.erase({int(work->priority), work->sequence_});
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
  if (was_queued) work->abort(error_reply(409, "cancelled", "cancelled before it started"));
  if (was_running) work->stop();
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
    free_ += work.threads;
    work.state_ = Work::State::finished;
    if (!shutting_down_) start = take_startable();
    if (queue_.empty() && running_.empty()) idle_.notify_all();
  }
  for (auto& w : start) w->start();
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
    for (auto& [ptr, w] : running_) running.push_back(w);
    if (running_.empty()) idle_.notify_all();
  }
  for (auto& w : queued) w->abort(error_reply(503, "shutting_down", "the server is shutting down"));
  for (auto& w : running) w->stop();
}

void Scheduler::wait_idle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty() && running_.empty(); });
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
