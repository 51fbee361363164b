// The timer thread of bounded waits (server/api/timer_thread.h).
#include "server/api/timer_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace kibitz::server {
namespace {

using Clock = TimerThread::Clock;
using std::chrono::milliseconds;

TEST(TimerThread, CallsInTheOrderOfTheirTimes) {
  TimerThread t;
  std::mutex m;
  std::vector<int> order;
  std::promise<void> all;
  auto add = [&](int i) {
    return [&, i] {
      std::lock_guard lock(m);
      order.push_back(i);
      if (order.size() == 3) all.set_value();
    };
  };
  const auto now = Clock::now();
  t.at(now + milliseconds(60), add(2));
  t.at(now + milliseconds(20), add(1));
  t.at(now - milliseconds(5), add(0));  // due already: at once
  all.get_future().wait();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(t.waiting(), 0u);
}

TEST(TimerThread, CloseCallsEveryWaitingCallAtOnce) {
  TimerThread t;
  std::atomic<int> called{0};
  t.at(Clock::now() + std::chrono::hours(1), [&] { ++called; });
  t.at(Clock::now() + std::chrono::hours(2), [&] { ++called; });
  EXPECT_EQ(t.waiting(), 2u);
  t.close();  // does not wait for the hour
  EXPECT_EQ(called.load(), 2);
  EXPECT_EQ(t.waiting(), 0u);
  t.close();  // idempotent
  EXPECT_EQ(called.load(), 2);
}

TEST(TimerThread, NothingIsCalledAfterClose) {
  TimerThread t;
  t.close();
  bool called = false;
  t.at(Clock::now(), [&] { called = true; });
  EXPECT_FALSE(called);
  EXPECT_EQ(t.waiting(), 0u);
}

TEST(TimerThread, ACallThatThrowsDoesNotStopTheOthers) {
  TimerThread t;
  std::promise<void> second;
  t.at(Clock::now(), [] { throw std::runtime_error("boom"); });
  t.at(Clock::now() + milliseconds(10), [&] { second.set_value(); });
  EXPECT_EQ(second.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
}

}  // namespace
}  // namespace kibitz::server
