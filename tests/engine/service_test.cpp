// The service's lifetime: it may be destroyed while searches run on its
// threads. The pool joins before the tables go (a search writing to a freed
// table is a report in the AddressSanitizer build).
#include <gtest/gtest.h>

#include <atomic>

#include "support/service.h"

namespace kibitz::engine {
namespace {

TEST(Service, DestroyedWhileItsThreadsSearch) {
  for (int round = 0; round < 5; ++round) {
    auto service = test::make_service(2, 1);
    std::atomic<int> done{0};
    for (int i = 0; i < 2; ++i) {
      AnalysisRequest r;
      r.limits.nodes = 200'000;
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

}  // namespace
}  // namespace kibitz::engine
