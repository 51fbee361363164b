#include "engine/thread_pool.h"

#include "common/contain.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace kibitz::engine {

ThreadPool::ThreadPool(int threads, Options options) : options_(std::move(options)) {
  const size_t stack_bytes = options_.stack_bytes;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes);
  for (int i = 0; i < threads; ++i) {
    pthread_t t;
    if (const int err = pthread_create(&t, &attr, &ThreadPool::entry, this)) {
      pthread_attr_destroy(&attr);
      {
        std::lock_guard lock(mutex_);
        quit_ = true;
      }
      wake_.notify_all();
      for (pthread_t started : threads_) pthread_join(started, nullptr);
      throw std::runtime_error("cannot start search thread: error " + std::to_string(err));
    }
    threads_.push_back(t);
  }
  pthread_attr_destroy(&attr);
}

ThreadPool::~ThreadPool() {
  std::deque<Task> dropped;
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
    dropped.swap(queue_);
  }
  wake_.notify_all();
  for (auto& task : dropped)
    if (task.cancelled) run_contained(task.cancelled);
  for (pthread_t t : threads_) pthread_join(t, nullptr);
}

void* ThreadPool::entry(void* self) {
  auto* pool = static_cast<ThreadPool*>(self);
  // Linux: policy and nice value are per thread; lowering them needs no
  // privilege. A failure only costs latency elsewhere.
  const int nice = std::clamp(pool->options_.nice, 0, 19);
  if (nice > 0) (void)setpriority(PRIO_PROCESS, pid_t(syscall(SYS_gettid)), nice);
  if (pool->options_.idle_policy) {
    sched_param param{};
    (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);
  }
  pool->loop();
  return nullptr;
}

void ThreadPool::run_contained(std::function<void()>& f) {
  contained(f, [this](const std::string& what) {
    if (options_.on_task_error) options_.on_task_error(what);
  });
}

void ThreadPool::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return quit_ || !queue_.empty(); });
    if (queue_.empty()) return;  // quit_ and nothing left
    Task task = std::move(queue_.front());
    queue_.pop_front();
    ++busy_;
    lock.unlock();
    run_contained(task.run);
    task = Task{};  // release what the task holds before parking
    lock.lock();
    --busy_;
  }
}

void ThreadPool::submit(std::vector<Task> tasks) {
  bool rejected = false;
  {
    std::lock_guard lock(mutex_);
    rejected = quit_;
    if (!rejected)
      for (Task& t : tasks) queue_.push_back(std::move(t));
  }
  if (rejected) {
    for (Task& t : tasks)
      if (t.cancelled) run_contained(t.cancelled);
    return;
  }
  wake_.notify_all();
}

void ThreadPool::cancel_group(uint64_t group) {
  std::vector<Task> dropped;
  {
    std::lock_guard lock(mutex_);
    for (auto it = queue_.begin(); it != queue_.end();) {
      if (it->group == group) {
        dropped.push_back(std::move(*it));
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (Task& t : dropped)
    if (t.cancelled) run_contained(t.cancelled);
}

int ThreadPool::busy() const {
  std::lock_guard lock(mutex_);
  return busy_;
}

size_t ThreadPool::queued() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

}  // namespace kibitz::engine
