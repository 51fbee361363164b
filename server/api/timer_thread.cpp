#include "server/api/timer_thread.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <vector>

namespace kibitz::server {

namespace {

void call(const std::function<void()>& f) noexcept {
  try {
    f();
  } catch (const std::exception& e) {
    spdlog::error("timer: a call failed: {}", e.what());
  } catch (...) {
    spdlog::error("timer: a call failed");
  }
}

}  // namespace

TimerThread::TimerThread() : thread_([this] { loop(); }) {}

TimerThread::~TimerThread() { close(); }

void TimerThread::at(Clock::time_point when, std::function<void()> f) {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    due_.emplace(when, std::move(f));
  }
  cv_.notify_one();
}

size_t TimerThread::waiting() const {
  std::lock_guard lock(mutex_);
  return due_.size();
}

void TimerThread::close() {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void TimerThread::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (closed_) break;
    if (due_.empty()) {
      cv_.wait(lock);
      continue;
    }
    const auto first = due_.begin()->first;
    if (Clock::now() < first) {
      cv_.wait_until(lock, first);
      continue;
    }
    auto f = std::move(due_.begin()->second);
    due_.erase(due_.begin());
    lock.unlock();
    call(f);
    lock.lock();
  }
  // Closed: every wait ends now.
  std::multimap<Clock::time_point, std::function<void()>> rest;
  rest.swap(due_);
  lock.unlock();
  for (auto& [when, f] : rest) call(f);
}

}  // namespace kibitz::server
