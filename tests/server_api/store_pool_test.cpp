// The store's own threads (server/store/store_pool.h): tasks run off the
// caller's thread, the queue is bounded (a task over it is refused at
// once, not kept), and close() answers what still waits with run=false and
// lets what runs finish. Gates, not sleeps: a task blocks on a latch the
// test opens.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "server/store/store_pool.h"

namespace kibitz::server::store {
namespace {

class Latch {
 public:
  void open() {
    std::lock_guard lock(m_);
    open_ = true;
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool open_ = false;
};

TEST(StorePool, RunsTasksOffTheCallersThread) {
  StorePool pool(2, 8);
  Latch done;
  std::thread::id ran_on;
  bool ran = false;
  ASSERT_TRUE(pool.post([&](bool run) {
    ran = run;
    ran_on = std::this_thread::get_id();
    done.open();
  }));
  done.wait();
  EXPECT_TRUE(ran);
  EXPECT_NE(ran_on, std::this_thread::get_id());
}

TEST(StorePool, AFullQueueRefusesAtOnceAndCloseAnswersTheWaitingOnes) {
  StorePool pool(1, 2);
  Latch started, release;
  std::atomic<int> ran{0}, dropped{0};
  ASSERT_TRUE(pool.post([&](bool run) {
    started.open();
    release.wait();  // holds the only thread, as a stalled store call would
    ran += run;
  }));
  started.wait();
  EXPECT_EQ(pool.running(), 1u);
  const auto waiting = [&](bool run) { (run ? ran : dropped) += 1; };
  EXPECT_TRUE(pool.post(waiting));
  EXPECT_TRUE(pool.post(waiting));
  EXPECT_EQ(pool.queued(), 2u);
  bool refused_called = false;
  EXPECT_FALSE(pool.post([&](bool) { refused_called = true; }));  // full: refused, not kept
  EXPECT_FALSE(refused_called);
  std::thread closer([&] { pool.close(); });
  // close() answers the two waiting tasks with false before it joins the
  // thread that still runs; then the running one finishes.
  while (dropped.load() < 2) std::this_thread::yield();
  EXPECT_EQ(ran.load(), 0);
  EXPECT_FALSE(pool.post(waiting));  // closed
  release.open();
  closer.join();
  EXPECT_EQ(ran.load(), 1);
  EXPECT_EQ(dropped.load(), 2);
  EXPECT_EQ(pool.running(), 0u);
}

TEST(StorePool, ATaskThatThrowsLeavesThePoolWorking) {
  StorePool pool(1, 4);
  ASSERT_TRUE(pool.post([](bool) { throw std::runtime_error("boom"); }));
  Latch done;
  ASSERT_TRUE(pool.post([&](bool run) {
    if (run) done.open();
  }));
  done.wait();
}

}  // namespace
}  // namespace kibitz::server::store
