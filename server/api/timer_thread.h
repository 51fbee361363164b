// One thread that calls functions at given times: bounded waits that must
// not hold a thread of their own while they wait (a DELETE's wait for its
// job's stop). The calls run on this thread, one at a time, so they must be
// short (post an answer, nothing more). A call never throws out: an
// exception is logged and dropped.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace kibitz::server {

class TimerThread {
 public:
  using Clock = std::chrono::steady_clock;

  TimerThread();
  ~TimerThread();  // close()
  TimerThread(const TimerThread&) = delete;
  TimerThread& operator=(const TimerThread&) = delete;

  // Calls `f` at `when` (at once if that has passed); after close(), never.
  void at(Clock::time_point when, std::function<void()> f);
  // Calls every function still waiting, at once, then joins the thread:
  // a bounded wait ends early rather than never. Idempotent.
  void close();
  size_t waiting() const;

 private:
  void loop();

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::multimap<Clock::time_point, std::function<void()>> due_;
  bool closed_ = false;
  std::thread thread_;
};

}  // namespace kibitz::server
