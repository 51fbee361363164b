// Request decoding: each error code names what was wrong; caps are applied
// and echoed.
#include <gtest/gtest.h>

#include <future>

#include "api_test_support.h"

namespace kibitz::server::test {
namespace {

class Decode : public ::testing::Test {
 protected:
  std::unique_ptr<engine::Service> service = small_service(1);
  Config config = test_config();
  std::unique_ptr<Api> api = make_api(config, *service);

  // The error of a request that must fail: checks status and code, returns the message.
  std::string error_of(const json& request, const std::string& code) {
    Reply r = analyze(*api, request);
    EXPECT_EQ(r.status, 400) << r.body.dump();
    EXPECT_EQ(r.body["error"]["code"], code) << r.body.dump();
    return r.body["error"].value("message", "");
  }
};

TEST_F(Decode, ParseBodyReportsTheOffsetOfBadJson) {
  auto r = parse_body(R"({"game": "chess",})", config);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().status, 400);
  EXPECT_EQ(r.error().body["error"]["code"], "invalid_json");
  EXPECT_NE(r.error().body["error"]["message"].get<std::string>().find("offset"),
            std::string::npos);
  EXPECT_FALSE(parse_body("", config));
  EXPECT_FALSE(parse_body("\xff", config));
}

TEST_F(Decode, ParseBodyCapsTheNesting) {
  std::string deep(40, '[');
  deep += std::string(40, ']');
  auto r = parse_body(deep, config);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().body["error"]["code"], "invalid_json");
  EXPECT_NE(r.error().body["error"]["message"].get<std::string>().find("32"), std::string::npos);
  std::string ok(30, '[');
  ok += std::string(30, ']');
  EXPECT_TRUE(parse_body(ok, config));
  auto value = parse_body(R"({"a": [1, {"b": null}]})", config);
  ASSERT_TRUE(value);
  EXPECT_EQ((*value)["a"][1]["b"], nullptr);
}

TEST_F(Decode, ErrorsNameTheField) {
  EXPECT_NE(error_of(json::array(), "invalid_request").find("object"), std::string::npos);
  EXPECT_NE(error_of({{"game", "go"}}, "invalid_request").find("'game'"), std::string::npos);
  EXPECT_NE(error_of({{"fen", 3}}, "invalid_request").find("'fen'"), std::string::npos);
  EXPECT_NE(error_of({{"moves", "e2e4"}}, "invalid_request").find("'moves'"), std::string::npos);
  EXPECT_NE(error_of({{"moves", {"e2e4", 5}}}, "invalid_request").find("moves[1]"),
            std::string::npos);
  EXPECT_NE(error_of({{"limits", {{"depth", "deep"}}}}, "invalid_request").find("limits.depth"),
            std::string::npos);
  EXPECT_NE(error_of({{"limits", {{"depth", 0}}}}, "invalid_request").find("limits.depth"),
            std::string::npos);
  EXPECT_NE(error_of({{"limits", {{"nodes", -5}}}}, "invalid_request").find("limits.nodes"),
            std::string::npos);
  EXPECT_NE(error_of({{"limits", {{"time", 5}}}}, "invalid_request").find("limits.time"),
            std::string::npos);
  EXPECT_NE(error_of({{"limits", {{"infinite", true}}}}, "invalid_request").find("infinite"),
            std::string::npos);
  EXPECT_NE(error_of({{"multipv", 0}}, "invalid_request").find("multipv"), std::string::npos);
  EXPECT_NE(error_of({{"threads", 1.5}}, "invalid_request").find("threads"), std::string::npos);
  EXPECT_NE(error_of({{"pov", "black"}}, "invalid_request").find("pov"), std::string::npos);
}

TEST_F(Decode, TooManyMovesIsRefused) {
  Config c = test_config();
  c.max_moves = 2;
  auto a = make_api(c, *service);
  Reply r = analyze(*a, {{"moves", {"e2e4", "e7e5", "g1f3"}}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["error"]["code"], "invalid_request");
  EXPECT_NE(r.body["error"]["message"].get<std::string>().find("at most 2"), std::string::npos);
}

TEST_F(Decode, BadFenAndIllegalMoveHaveTheirCodes) {
  error_of({{"fen", "not a position"}}, "invalid_fen");
  error_of({{"game", "draughts"}, {"fen", "W:Wz9:B"}}, "invalid_fen");
  const std::string m = error_of({{"moves", {"e2e4", "e2e4"}}}, "illegal_move");
  EXPECT_NE(m.find("moves[1]"), std::string::npos) << m;
  EXPECT_NE(m.find("e2e4"), std::string::npos) << m;
  error_of({{"game", "draughts"}, {"moves", {"a1-b2"}}}, "illegal_move");
}

// An illegal searchmove is the client's error before any queue: in a
// position without moves, as a job, and when the queue is full.
TEST_F(Decode, IllegalSearchmovesAreRefusedBeforeAnyQueue) {
  const std::string m = error_of({{"searchmoves", {"e2e4", "a1a1"}}}, "illegal_move");
  EXPECT_NE(m.find("searchmoves[1]"), std::string::npos) << m;
  error_of({{"fen", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"}, {"searchmoves", {"a1a1"}}}, "illegal_move");
  Config c = test_config();
  c.queue_size = 0;
  auto a = make_api(c, *service);
  Reply job = a->submit_job({{"limits", {{"depth", 1}}}, {"searchmoves", {"a1a1"}}}, {});
  EXPECT_EQ(job.status, 400) << job.body.dump();
  EXPECT_EQ(job.body["error"]["code"], "illegal_move");
}

// README, fixed limits: searchmoves <= 256 entries. 256 (repeats of two
// legal moves) are taken; one more is refused, naming the field and the cap.
TEST_F(Decode, SearchmovesTakeAtMost256Entries) {
  json moves = json::array();
  for (int i = 0; i < 256; ++i) moves.push_back(i % 2 ? "d2d4" : "e2e4");
  Reply r = analyze(*api, {{"searchmoves", moves}, {"limits", {{"depth", 2}}}});
  ASSERT_EQ(r.status, 200) << r.body.dump().substr(0, 300);
  EXPECT_TRUE(r.body["bestmove"] == "e2e4" || r.body["bestmove"] == "d2d4") << r.body["bestmove"];
  moves.push_back("e2e4");
  const std::string m =
      error_of({{"searchmoves", moves}, {"limits", {{"depth", 2}}}}, "invalid_request");
  EXPECT_NE(m.find("searchmoves"), std::string::npos) << m;
  EXPECT_NE(m.find("at most 256"), std::string::npos) << m;
}

TEST_F(Decode, InfiniteIsAllowedOverTheWebSocketOnly) {
  auto promise = std::make_shared<std::promise<Reply>>();
  Reporter cb;
  cb.on_done = [promise](Reply r) { promise->set_value(std::move(r)); };
  auto ticket =
      api->analyze({{"limits", {{"infinite", true}}}}, Caller{"", Priority::interactive, true}, cb);
  ticket->cancel();
  Reply r = promise->get_future().get();
  EXPECT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["limits"]["infinite"], true);
  EXPECT_EQ(r.body["stopped"], true);
}

TEST_F(Decode, CapsAreAppliedAndEchoed) {
  Reply r = analyze(
      *api, {{"limits", {{"depth", 1000}, {"nodes", 1e15}}}, {"multipv", 50}, {"threads", 64}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["limits"]["depth"], config.max_depth);
  EXPECT_EQ(r.body["limits"]["nodes"], config.max_nodes);
  EXPECT_EQ(r.body["multipv"], config.max_multipv);
  EXPECT_EQ(r.body["lines"].size(), size_t(config.max_multipv));
  EXPECT_LE(r.body["depth"].get<int>(), config.max_depth);
}

TEST_F(Decode, NoLimitMeansTheDefaultMovetime) {
  Reply r = analyze(*api, {{"fen", "8/8/8/4k3/8/8/8/4K2R w K - 0 1"}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["limits"], json({{"movetime_ms", config.default_movetime_ms}}));
  Config c = test_config();
  c.max_movetime_ms = 60;
  auto a = make_api(c, *service);
  Reply capped = analyze(
      *a, {{"fen", "8/8/8/4k3/8/8/8/4K2R w K - 0 1"}, {"limits", {{"movetime_ms", 10'000'000}}}});
  ASSERT_EQ(capped.status, 200);
  EXPECT_EQ(capped.body["limits"], json({{"movetime_ms", 60}}));
}

}  // namespace
}  // namespace kibitz::server::test
