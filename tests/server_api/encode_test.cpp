// Results as the wire contract writes them: points of view, draughts wins,
// positions without a legal move, moves and perft.
#include <gtest/gtest.h>

#include <algorithm>

#include "api_test_support.h"

namespace kibitz::server::test {
namespace {

class Encode : public ::testing::Test {
 protected:
  std::unique_ptr<engine::Service> service = small_service(1);
  Config config = test_config();
  std::unique_ptr<Api> api = make_api(config, *service);
};

// Black to move mates at once (fool's mate): the score is fixed, whatever
// the table holds.
const json kFoolsMate = {{"moves", {"f2f3", "e7e5", "g2g4"}}, {"limits", {{"depth", 3}}}};

TEST_F(Encode, ScoresAreFromWhitesSideByDefault) {
  Reply r = analyze(*api, kFoolsMate);
  ASSERT_EQ(r.status, 200) << r.body.dump();
  const json& b = r.body;
  EXPECT_EQ(b["pov"], "white");
  EXPECT_EQ(b["side_to_move"], "black");
  EXPECT_EQ(b["bestmove"], "d8h4");
  EXPECT_EQ(b["lines"][0]["score"], json({{"mate", -1}}));
  EXPECT_EQ(b["lines"][0]["wdl"], json({0, 0, 1000}));
  EXPECT_EQ(b["lines"][0]["san"][0], "Qh4#");
  EXPECT_EQ(b["status"], "ongoing");
  EXPECT_EQ(b["engine"]["name"], "Kibitz");
  EXPECT_TRUE(b["engine"]["version"].is_string());
  for (const char* key : {"game", "fen", "limits", "depth", "seldepth", "nodes", "nps", "time_ms",
                          "hashfull", "bestmove", "lines"})
    EXPECT_TRUE(b.contains(key)) << key;
  for (const char* key : {"multipv", "moves", "san", "score", "bound", "wdl", "depth"})
    EXPECT_TRUE(b["lines"][0].contains(key)) << key;
}

TEST_F(Encode, SideToMovePointOfViewKeepsTheEngineScore) {
  json request = kFoolsMate;
  request["pov"] = "side_to_move";
  Reply r = analyze(*api, request);
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["lines"][0]["score"], json({{"mate", 1}}));
  EXPECT_EQ(r.body["lines"][0]["wdl"], json({1000, 0, 0}));
}

TEST_F(Encode, DraughtsForcedWinIsAWinScore) {
  // Black takes both white men at once.
  const json request = {{"game", "draughts"}, {"fen", "B:WC3,E5:BF6"}, {"limits", {{"depth", 4}}}};
  Reply r = analyze(*api, request);
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["bestmove"], "f6:d4:b2");
  EXPECT_EQ(r.body["lines"][0]["score"], json({{"win", -1}}));
  EXPECT_FALSE(r.body["lines"][0].contains("san"));
  json stm = request;
  stm["pov"] = "side_to_move";
  Reply s = analyze(*api, stm);
  EXPECT_EQ(s.body["lines"][0]["score"], json({{"win", 1}}));
}

TEST_F(Encode, NoLegalMoveAnswersWithTheStatus) {
  Reply mate = analyze(*api, {{"moves", {"f2f3", "e7e5", "g2g4", "d8h4"}}});
  ASSERT_EQ(mate.status, 200) << mate.body.dump();
  EXPECT_EQ(mate.body["bestmove"], nullptr);
  EXPECT_EQ(mate.body["lines"], json::array());
  EXPECT_EQ(mate.body["status"], "checkmate");
  Reply stalemate = analyze(*api, {{"fen", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"}});
  EXPECT_EQ(stalemate.body["status"], "stalemate");
  EXPECT_EQ(stalemate.body["bestmove"], nullptr);
  Reply loss = analyze(*api, {{"game", "draughts"}, {"fen", "W:WA1:BB2,C3"}});
  ASSERT_EQ(loss.status, 200) << loss.body.dump();
  EXPECT_EQ(loss.body["status"], "loss");
  EXPECT_EQ(loss.body["bestmove"], nullptr);
}

TEST_F(Encode, MovesListsLegalMovesAndStatus) {
  Reply r = moves(*api, {{"moves", {"e2e4"}}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["side_to_move"], "black");
  EXPECT_EQ(r.body["status"], "ongoing");
  EXPECT_EQ(r.body["legal_moves"].size(), 20u);
  EXPECT_TRUE(r.body["legal_moves"][0].contains("uci"));
  EXPECT_TRUE(r.body["legal_moves"][0].contains("san"));
  Reply d = moves(*api, {{"game", "draughts"}, {"fen", "B:WC3,E5:BF6"}});
  ASSERT_EQ(d.status, 200) << d.body.dump();
  ASSERT_EQ(d.body["legal_moves"].size(), 1u);
  EXPECT_EQ(d.body["legal_moves"][0]["move"], "f6:d4:b2");
  auto captured = d.body["legal_moves"][0]["captured"].get<std::vector<std::string>>();
  std::sort(captured.begin(), captured.end());
  EXPECT_EQ(captured, (std::vector<std::string>{"c3", "e5"}));
  Reply bad = moves(*api, {{"moves", {"e2e5"}}});
  EXPECT_EQ(bad.body["error"]["code"], "illegal_move");
}

TEST_F(Encode, PerftCountsAndCapsTheDepth) {
  Reply r = perft(*api, {{"depth", 3}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["nodes"], 8902);
  EXPECT_EQ(r.body["depth"], 3);
  Config c = test_config();
  c.max_perft_depth_draughts = 2;
  auto a = make_api(c, *service);
  Reply capped = perft(*a, {{"game", "draughts"}, {"depth", 99}});
  ASSERT_EQ(capped.status, 200) << capped.body.dump();
  EXPECT_EQ(capped.body["depth"], 2);
  EXPECT_EQ(capped.body["nodes"], 49);
  EXPECT_EQ(perft(*api, {}).body["error"]["code"], "invalid_request");
  EXPECT_EQ(perft(*api, {{"depth", 1}, {"fen", "x"}}).body["error"]["code"], "invalid_fen");
}

TEST_F(Encode, InfoListsGamesAndLimits) {
  Reply r = api->info();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body["games"], json({"chess", "draughts"}));
  EXPECT_EQ(r.body["limits"]["max_depth"], config.max_depth);
  EXPECT_EQ(r.body["threads"], 1);
}

}  // namespace
}  // namespace kibitz::server::test
