// Perft off the caller's thread: one worker and a bounded queue, so a deep
// count never blocks an I/O thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace kibitz::server {

class PerftRunner {
 public:
  explicit PerftRunner(size_t queue_size);
  ~PerftRunner();  // drops what is queued (calling each task's `refused`), joins
  PerftRunner(const PerftRunner&) = delete;
  PerftRunner& operator=(const PerftRunner&) = delete;

  struct Task {
    std::function<void()> run;
    std::function<void()> refused;  // instead of run, when shut down first
  };
  // False when the queue is full or shut down (the task is not kept).
  bool post(Task task);
  void shutdown();  // refuses queued and new tasks

 private:
  void loop();

  const size_t queue_size_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Task> queue_;
  bool quit_ = false;
  std::thread thread_;
};

}  // namespace kibitz::server
