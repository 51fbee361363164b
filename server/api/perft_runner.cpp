#include "server/api/perft_runner.h"

namespace kibitz::server {

PerftRunner::PerftRunner(size_t queue_size)
    : queue_size_(queue_size), thread_([this] { loop(); }) {}

PerftRunner::~PerftRunner() {
  shutdown();
  thread_.join();
}

bool PerftRunner::post(Task task) {
  {
    std::lock_guard lock(mutex_);
    if (quit_ || queue_.size() >= queue_size_ + 1) return false;
    queue_.push_back(std::move(task));
  }
  wake_.notify_one();
  return true;
}

void PerftRunner::shutdown() {
  std::deque<Task> dropped;
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
    dropped.swap(queue_);
  }
  wake_.notify_all();
  for (auto& t : dropped)
    if (t.refused) t.refused();
}

void PerftRunner::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return quit_ || !queue_.empty(); });
    if (queue_.empty()) return;
    Task t = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    t.run();
    t = Task{};
    lock.lock();
  }
}

}  // namespace kibitz::server
