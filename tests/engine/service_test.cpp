// The service's lifetime: it may be destroyed while searches run on its
// threads. The pool joins before the tables go (a search writing to a freed
// table is a report in the AddressSanitizer build).
#include <gtest/gtest.h>

#include <sched.h>

#include <atomic>
#include <future>
#include <mutex>
#include <set>

#include "support/service.h"

namespace kibitz::engine {
namespace {

TEST(Service, DestroyedWhileItsThreadsSearch) {
  for (int round = 0; round < 5; ++round) {
    auto service = test::make_service(2, 1);
    std::atomic<int> done{0};
    for (int i = 0; i < 2; ++i) {
      AnalysisRequest r;
      // Still searching when reset() comes a moment after (tens of
      // milliseconds of work in a release build, a second under TSan).
      r.limits.nodes = 50'000;
      r.threads = 1;
      Callbacks cb;
      cb.on_done = [&](const Result&) { done++; };
      ASSERT_TRUE(service->analyze(r, std::move(cb)));
    }
    service.reset();  // joins the searches, then frees the tables
    EXPECT_EQ(done.load(), 2);
  }
}

TEST(Service, PreparedPositionsCarryTheirHistory) {
  auto service = test::make_service(1, 1);
  auto a = service->prepare(GameKind::chess, "",
                            {"e2e4", "e7e5", "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6"});
  auto b = service->prepare(GameKind::chess, "",
                            {"e2e4", "e7e5", "g1f3", "g8f6", "b1c3", "b8c6", "c3b1", "c6b8"});
  ASSERT_TRUE(a && b);
  EXPECT_EQ((*a)->info().fen, (*b)->info().fen);
  EXPECT_EQ((*a)->info().key, (*b)->info().key);
  EXPECT_NE((*a)->info().history_key, (*b)->info().history_key);
  auto bad = service->prepare(GameKind::chess, "", {"e2e4", "e2e4"});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "illegal_move");
}

#ifdef __linux__
// The scheduling policies of the threads that searched `background` requests
// (read on the search thread itself, in its progress reports).
std::set<int> policies_of(Service& service, bool background) {
  auto seen = std::make_shared<std::pair<std::mutex, std::set<int>>>();
  AnalysisRequest r;
  r.limits.depth = 6;
  r.threads = 2;
  r.background = background;
  Callbacks cb;
  cb.on_progress = [seen](const Progress&) {
    std::lock_guard lock(seen->first);
    seen->second.insert(sched_getscheduler(0));
  };
  auto done = std::make_shared<std::promise<void>>();
  auto finished = done->get_future();
  cb.on_done = [done](const Result&) { done->set_value(); };
  EXPECT_TRUE(service.analyze(r, std::move(cb)));
  finished.wait();
  std::lock_guard lock(seen->first);
  return seen->second;
}

TEST(Service, BackgroundRequestsSearchUnderSchedIdleWhenAsked) {
  ServiceOptions o;
  o.threads = 2;
  o.hash_mib[0] = o.hash_mib[1] = 4;
  o.background_idle_policy = true;
  auto service = test::make_service(o);
  EXPECT_EQ(policies_of(*service, true), std::set<int>{SCHED_IDLE});
  EXPECT_EQ(policies_of(*service, false), std::set<int>{SCHED_OTHER});
  o.background_idle_policy = false;  // one set of threads: the flag is ignored
  auto plain = test::make_service(o);
  EXPECT_EQ(policies_of(*plain, true), std::set<int>{SCHED_OTHER});
}
#endif

}  // namespace
}  // namespace kibitz::engine
