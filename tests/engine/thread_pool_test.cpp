// The search thread pool: order, cancellation, shutdown, contained exceptions,
// the nice value of its threads.
#include "engine/thread_pool.h"

#include <fstream>

#include "common/thread_slice.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kibitz::engine {
namespace {

// A latch the test releases by hand, to hold a pool thread busy.
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false, entered = false;
  void pass() {
    std::unique_lock lock(m);
    entered = true;
    cv.notify_all();
    cv.wait(lock, [this] { return open; });
  }
  void wait_entered() {
    std::unique_lock lock(m);
    cv.wait(lock, [this] { return entered; });
  }
  void release() {
    std::lock_guard lock(m);
    open = true;
    cv.notify_all();
  }
};

TEST(ThreadPool, RunsEveryTaskOnce) {
  ThreadPool pool(2);
  std::mutex m;
  std::condition_variable cv;
  int done = 0;
  std::vector<ThreadPool::Task> tasks;
  for (int i = 0; i < 50; ++i)
    tasks.push_back({[&] {
                       std::lock_guard lock(m);
                       ++done;
                       cv.notify_all();
                     },
                     nullptr, 2});
  pool.submit(std::move(tasks));
  std::unique_lock lock(m);
  cv.wait(lock, [&] { return done == 50; });
  EXPECT_EQ(done, 50);
}

TEST(ThreadPool, RunsTasksInSubmissionOrder) {
  ThreadPool pool(1);
  Gate gate;
  pool.submit({{[&] { gate.pass(); }, nullptr, 1}});
  gate.wait_entered();  // the only thread is busy: the next tasks queue
  std::mutex m;
  std::vector<int> order;
  std::condition_variable cv;
  const auto record = [&](int v) {
    return [&, v] {
      std::lock_guard lock(m);
      order.push_back(v);
      cv.notify_all();
    };
  };
  pool.submit({{record(1), nullptr, 2}, {record(2), nullptr, 2}});
  pool.submit({{record(3), nullptr, 3}});
  gate.release();
  std::unique_lock lock(m);
  cv.wait(lock, [&] { return order.size() == 3; });
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(ThreadPool, AnExceptionInATaskIsReportedAndTheThreadGoesOn) {
  std::mutex m;
  std::vector<std::string> errors;
  ThreadPool::Options options;
  options.on_task_error = [&](const std::string& what) {
    std::lock_guard lock(m);
    errors.push_back(what);
  };
  ThreadPool pool(1, options);
  std::atomic<int> ran{0};
  pool.submit({{[] { throw std::runtime_error("injected"); }, nullptr, 1},
               {[] { throw 42; }, nullptr, 1},
               {[&] { ran++; }, nullptr, 1}});
  while (ran.load() == 0) std::this_thread::yield();
  std::lock_guard lock(m);
  EXPECT_EQ(errors, (std::vector<std::string>{"injected", "an exception of unknown type"}));
}

TEST(ThreadPool, ThreadsRunAtTheNiceValueAndPolicyAsked) {
  ThreadPool::Options options;
  options.nice = 7;
  options.idle_policy = true;
  ThreadPool pool(1, options);
  std::atomic<int> nice{-100}, policy{-100};
  pool.submit({{[&] {
                  errno = 0;
                  nice = getpriority(PRIO_PROCESS, pid_t(syscall(SYS_gettid)));
                  policy = sched_getscheduler(0);
                },
                nullptr, 1}});
  while (policy.load() == -100) std::this_thread::yield();
  // Lowering either needs no privilege, so this holds everywhere.
  EXPECT_EQ(nice.load(), 7);
  EXPECT_EQ(policy.load(), SCHED_IDLE);
}

TEST(ThreadPool, CancelGroupDropsQueuedTasks) {
  ThreadPool pool(1);
  Gate gate;
  pool.submit({{[&] { gate.pass(); }, nullptr, 1}});
  gate.wait_entered();
  std::atomic<int> ran{0}, cancelled{0};
  pool.submit({{[&] { ran++; }, [&] { cancelled++; }, 7},
               {[&] { ran++; }, [&] { cancelled++; }, 7},
               {[&] { ran++; }, [&] { cancelled++; }, 8}});
  EXPECT_EQ(pool.queued(), 3u);
  pool.cancel_group(7);
  EXPECT_EQ(cancelled.load(), 2);
  EXPECT_EQ(pool.queued(), 1u);
  gate.release();
  while (pool.queued() != 0 || pool.busy() != 0) std::this_thread::yield();
  EXPECT_EQ(ran.load(), 1);
}

TEST(ThreadPool, ShutdownCancelsWhatIsQueuedAndWaitsForWhatRuns) {
  std::atomic<int> cancelled{0}, ran{0};
  std::atomic<bool> running_task_finished{false};
  Gate gate;
  auto pool = std::make_unique<ThreadPool>(1);
  pool->submit({{[&] {
                   gate.pass();
                   running_task_finished = true;
                 },
                 nullptr, 1}});
  gate.wait_entered();
  pool->submit(
      {{[&] { ran++; }, [&] { cancelled++; }, 2}, {[&] { ran++; }, [&] { cancelled++; }, 2}});
  std::thread destroyer([&] { pool.reset(); });
  // The destructor cancels the queued tasks before it waits for the running
  // one (which the gate still holds); if it ran them instead, this would hang.
  while (cancelled.load() < 2) std::this_thread::yield();
  gate.release();
  destroyer.join();
  EXPECT_TRUE(running_task_finished.load());
  EXPECT_EQ(ran.load(), 0);
}

}  // namespace
}  // namespace kibitz::engine

namespace {
// se.slice of the calling thread in ns from /proc (Linux 6.12+), or -1.
long long reported_slice_ns() {
  std::ifstream in("/proc/thread-self/sched");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("se.slice", 0) == 0) return std::stoll(line.substr(line.find(':') + 1));
  }
  return -1;
}
}  // namespace

// The I/O threads' short slice (common/thread_slice.h): asked without
// privilege, it keeps the thread's nice value, and where the kernel reports
// slices it is the one asked.
TEST(ThreadSlice, AShortSliceKeepsTheNiceValueAndIsGranted) {
  std::atomic<int> nice{-100};
  std::atomic<bool> granted{false};
  std::atomic<long long> slice{-2};
  std::thread t([&] {
    (void)setpriority(PRIO_PROCESS, pid_t(syscall(SYS_gettid)), 3);
    granted = kibitz::set_thread_slice(std::chrono::microseconds(100));
    errno = 0;
    nice = getpriority(PRIO_PROCESS, pid_t(syscall(SYS_gettid)));
    slice = reported_slice_ns();
  });
  t.join();
  EXPECT_TRUE(granted.load());
  EXPECT_EQ(nice.load(), 3);
  if (slice.load() != -1) {
    EXPECT_EQ(slice.load(), 100000);
  }
}
