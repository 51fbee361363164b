// Deadlines on work that runs, as README.md promises them: a synchronous
// analysis asking only for a depth or a node count is held to
// max_movetime_ms; past job_deadline_ms a running analysis job reports its
// best result so far, a running review fails with deadline_exceeded, and a
// running perft is answered 503 deadline_exceeded.
//
// Each limit asked for here takes far longer than the deadline that cuts
// it (depth 64, 10^8 nodes, a 50-ply game at 5*10^7 nodes a position,
// perft 6 of Kiwipete): without the cut a test ends at the support's hang
// guard, not on a time it asserts.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "api_test_support.h"

namespace kibitz::server::test {
namespace {

const char* kMiddle = "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 9";
const char* kKiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
const char* kGame =
    "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O "
    "9. h3 Nb8 10. d4 Nbd7 11. c4 c6 12. cxb5 axb5 13. Nc3 Bb7 14. Bg5 b4 15. Nb1 h6 "
    "16. Bh4 c5 17. dxe5 Nxe4 18. Bxe7 Qxe7 19. exd6 Qf6 20. Nbd2 Nxd6 21. Nc4 Nxc4 "
    "22. Bxc4 Nb6 23. Ne5 Rae8 24. Bxf7+ Rxf7 25. Nxf7 *";

TEST(Deadlines, ASynchronousDepthOnlyAnalysisIsCutAtMaxMovetime) {
  auto service = small_service(1);
  Config c = test_config();
  c.max_depth = 64;
  c.max_movetime_ms = 300;
  auto api = make_api(c, *service);
  Reply r = analyze(*api, {{"fen", kMiddle}, {"limits", {{"depth", 64}}}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["limits"], json({{"depth", 64}}));
  EXPECT_LT(r.body["depth"].get<int>(), 64);
  EXPECT_TRUE(r.body["bestmove"].is_string()) << r.body.dump();
  EXPECT_EQ(r.body["stopped"], true) << "short of its limits: " << r.body.dump();
}

// A movetime is never above the cap (decode lowers it): the search's own
// limit ends it, and the answer is not "stopped" (the cap's deadline, set a
// moment before the search starts, would otherwise come just before it).
TEST(Deadlines, AMovetimeAtTheCapEndsTheSearchItself) {
  auto service = small_service(1);
  Config c = test_config();
  c.max_movetime_ms = 300;
  auto api = make_api(c, *service);
  Reply r = analyze(*api, {{"fen", kMiddle}, {"limits", {{"movetime_ms", 5000}}}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["limits"], json({{"movetime_ms", 300}}));
  EXPECT_EQ(r.body["stopped"], false) << r.body.dump();
  EXPECT_GE(r.body["time_ms"].get<int64_t>(), 300) << r.body.dump();
}

TEST(Deadlines, ASynchronousNodeOnlyAnalysisIsCutAtMaxMovetime) {
  auto service = small_service(1);
  Config c = test_config();
  c.max_depth = 64;
  c.max_movetime_ms = 300;
  auto api = make_api(c, *service);
  Reply r = analyze(*api, {{"fen", kMiddle}, {"limits", {{"nodes", 100'000'000}}}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["limits"], json({{"nodes", 100'000'000}}));
  EXPECT_LT(r.body["nodes"].get<uint64_t>(), 100'000'000u);
  EXPECT_TRUE(r.body["bestmove"].is_string()) << r.body.dump();
  EXPECT_EQ(r.body["stopped"], true) << "short of its limits: " << r.body.dump();
}

TEST(Deadlines, ARunningAnalysisJobPastItsDeadlineReportsItsBestSoFar) {
  auto service = small_service(1);
  Config c = test_config();
  c.max_depth = 64;
  c.max_movetime_ms = 600'000;
  c.job_deadline_ms = 500;
  auto api = make_api(c, *service);
  Reply job = api->submit_job({{"fen", kMiddle}, {"limits", {{"depth", 64}}}}, Caller{"me"});
  ASSERT_EQ(job.status, 202) << job.body.dump();
  Reply end = wait_job(*api, job.body["id"].get<std::string>());
  const json& j = end.body;
  ASSERT_EQ(j["status"], "done") << j.dump();
  EXPECT_FALSE(j["progress"].is_null()) << "it ran: iterations were reported";
  const json& result = j["result"];
  ASSERT_TRUE(result.is_object()) << j.dump();
  EXPECT_TRUE(result["bestmove"].is_string()) << result.dump();
  EXPECT_FALSE(result["lines"].empty()) << result.dump();
  EXPECT_LT(result["depth"].get<int>(), 64);
  EXPECT_EQ(result["stopped"], true) << "short of its limits: " << result.dump();
}

TEST(Deadlines, ARunningReviewPastItsDeadlineFailsWithDeadlineExceeded) {
  auto service = small_service(2);
  Config c = test_config();
  c.max_nodes = 50'000'000;
  c.max_movetime_ms = 600'000;
  c.job_deadline_ms = 500;
  auto api = make_api(c, *service);
  Reply job =
      api->annotate({{"pgn", kGame}, {"limits", {{"nodes", 50'000'000}}}}, Caller{"reviewer"});
  ASSERT_EQ(job.status, 202) << job.body.dump();
  Reply end = wait_job(*api, job.body["id"].get<std::string>());
  const json& j = end.body;
  ASSERT_EQ(j["status"], "failed") << j.dump();
  EXPECT_EQ(j["error"]["code"], "deadline_exceeded") << j.dump();
  // It was running: positions were finished (cut by the deadline), not all.
  ASSERT_TRUE(j["progress"].is_object()) << j.dump();
  EXPECT_GE(j["progress"]["ply"].get<int>(), 1) << j.dump();
  EXPECT_LT(j["progress"]["ply"].get<int>(), j["progress"]["plies"].get<int>()) << j.dump();
}

TEST(Deadlines, ARunningPerftPastTheJobDeadlineIs503) {
  auto service = small_service(1);
  Config c = test_config();
  c.max_perft_depth_chess = 6;
  c.max_movetime_ms = 600'000;  // the job deadline cuts it, not the movetime cap
  c.job_deadline_ms = 300;
  auto api = make_api(c, *service);
  auto done = std::make_shared<std::promise<Reply>>();
  Reporter reporter;
  reporter.on_done = [done](Reply r) { done->set_value(std::move(r)); };
  auto answer = done->get_future();
  // 8,031,647,685 leaves: minutes of counting.
  auto ticket = api->perft({{"fen", kKiwipete}, {"depth", 6}}, Caller{}, std::move(reporter));
  bool seen_running = false;
  // A hang guard only (60 s): the answer comes at the deadline.
  for (int i = 0; i < 60'000; ++i) {
    if (answer.wait_for(std::chrono::milliseconds(1)) == std::future_status::ready) break;
    seen_running = seen_running || metric(*api, "kibitz_jobs_running") == 1;
  }
  ASSERT_EQ(answer.wait_for(std::chrono::seconds(0)), std::future_status::ready)
      << "no answer within 60 s";
  Reply r = answer.get();
  EXPECT_TRUE(seen_running) << "the perft never ran";
  EXPECT_EQ(r.status, 503) << r.body.dump();
  EXPECT_EQ(r.body["error"]["code"], "deadline_exceeded") << r.body.dump();
}

}  // namespace
}  // namespace kibitz::server::test
