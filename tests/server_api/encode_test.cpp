// Results as the wire contract writes them: points of view, draughts wins,
// positions without a legal move, moves and perft.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

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
  EXPECT_EQ(b["engine"]["eval"], "classical");  // the default: no network selected
  for (const char* key : {"game", "fen", "limits", "depth", "seldepth", "nodes", "tbhits", "nps",
                          "time_ms", "hashfull", "bestmove", "lines"})
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

// README, "Each line also has wdl": win = 1 / (1 + exp((150 - cp) / s)),
// loss the same with -cp, draw the rest, per mille, from the score's point
// of view; s = 65 for chess, 50 for draughts. Computed here from each
// line's reported score (rounded either way: within one per mille).
void expect_wdl_curve(const json& body, double s, int* checked) {
  for (const json& line : body["lines"]) {
    if (!line["score"].contains("cp")) continue;  // mates and wins: 1000/0/0
    const double cp = line["score"]["cp"].get<int>();
    const auto curve = [s](double x) { return 1000.0 / (1.0 + std::exp((150.0 - x) / s)); };
    const std::vector<int> wdl = line["wdl"].get<std::vector<int>>();
    ASSERT_EQ(wdl.size(), 3u) << line.dump();
    EXPECT_NEAR(wdl[0], curve(cp), 1.0) << "win at cp " << cp << ": " << line.dump();
    EXPECT_NEAR(wdl[2], curve(-cp), 1.0) << "loss at cp " << cp << ": " << line.dump();
    EXPECT_EQ(wdl[0] + wdl[1] + wdl[2], 1000) << line.dump();
    ++*checked;
  }
}

TEST_F(Encode, WdlOfNonMateScoresFollowsTheReadmeCurve) {
  Config c = test_config();
  c.max_multipv = 4;
  auto a = make_api(c, *service);
  int checked = 0;
  // Black to move, both points of view; a level position and one where
  // Black is up in material (scores away from 0); in draughts the start and
  // a man down for White.
  for (const char* fen : {"r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 3",
                          "r3k2r/pppq1ppp/2n5/3p4/3P4/8/PPP2PPP/RN1QK1N1 b Qkq - 0 9"})
    for (const char* pov : {"white", "side_to_move"}) {
      Reply r =
          analyze(*a, {{"fen", fen}, {"limits", {{"depth", 5}}}, {"multipv", 4}, {"pov", pov}});
      ASSERT_EQ(r.status, 200) << r.body.dump();
      expect_wdl_curve(r.body, 65, &checked);
    }
  for (const char* fen :
       {"W:Wa1,a3,b2,c1,c3,d2,e1,e3,f2,g1,g3,h2:Ba7,b6,b8,c7,d6,d8,e7,f6,f8,g7,h6,h8",
        "B:Wa1,a3,b2,c1,c3,d2,e1,e3,f2,g1,g3:Ba7,b6,b8,c7,d6,d8,e7,f6,f8,g7,h6,h8"})
    for (const char* pov : {"white", "side_to_move"}) {
      Reply r = analyze(*a, {{"game", "draughts"},
                             {"fen", fen},
                             {"limits", {{"depth", 6}}},
                             {"multipv", 4},
                             {"pov", pov}});
      ASSERT_EQ(r.status, 200) << r.body.dump();
      expect_wdl_curve(r.body, 50, &checked);
    }
  EXPECT_GE(checked, 24) << "lines with a centipawn score";
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
