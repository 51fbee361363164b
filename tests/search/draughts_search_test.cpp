// The search on Russian draughts positions with known answers: shots, wins,
// losses, repetition draws, MultiPV.
#include <gtest/gtest.h>

#include <set>

#include "support/service.h"
#include "support/table_hygiene.h"

namespace kibitz::test {
namespace {

using engine::AnalysisRequest;
using engine::ScoreKind;

AnalysisRequest draughts(const std::string& fen, int depth) {
  AnalysisRequest r;
  r.game = GameKind::draughts;
  r.fen = fen;
  r.limits.depth = depth;
  return r;
}

engine::Result search(const AnalysisRequest& r) {
  auto service = make_service(1);
  auto a = analyze(*service, r);
  EXPECT_TRUE(a) << (a ? "" : a.error().message);
  return a ? a->result : engine::Result{};
}

TEST(DraughtsSearch, ShotFoundAtDepthOne) {
  // 1.c3-b4! a5:c3 2.d2:b4:d6: one man given, two taken.
  const auto r = search(draughts("W:Wa3,c3,d2,e1,g1:Ba5,c5,f8,h8", 1));
  EXPECT_EQ(r.bestmove.value_or(""), "c3-b4");
  ASSERT_FALSE(r.lines.empty());
  EXPECT_GT(r.lines[0].score.value, 150);
  EXPECT_EQ(r.lines[0].moves, (std::vector<std::string>{"c3-b4", "a5:c3", "d2:b4:d6"}));
}

TEST(DraughtsSearch, TheSameSacrificeIsRefusedWhenItFails) {
  // Without the man on e1, 1.c3-b4 a5:c3:e1 crowns a black king.
  const auto r = search(draughts("W:Wa3,c3,d2,g1:Ba5,c5,f8,h8", 4));
  ASSERT_TRUE(r.bestmove);
  EXPECT_NE(*r.bestmove, "c3-b4");
}

TEST(DraughtsSearch, TakingTheLastPieceWins) {
  const auto r = search(draughts("W:Wc3,g1:Bd4", 2));
  ASSERT_FALSE(r.lines.empty());
  EXPECT_EQ(r.lines[0].score, (engine::Score{ScoreKind::mate, 1}));
  EXPECT_EQ(r.bestmove.value_or(""), "c3:e5");
}

TEST(DraughtsSearch, NoLegalMoveIsALoss) {
  // The black man on a3 can neither step to b2 nor take it (c1 is occupied).
  const auto r = search(draughts("B:Wb2,c1:Ba3", 3));
  EXPECT_EQ(r.status, "loss");
  EXPECT_FALSE(r.bestmove);
  EXPECT_TRUE(r.lines.empty());
}

TEST(DraughtsSearch, ThreefoldRepetitionIsScoredAsADraw) {
  // White, a king against two kings and two men (a lost ending), completes
  // a third repetition with Kc1-d2; without that history the position is
  // lost.
  AnalysisRequest r = draughts("B:WKd2:BKd8,Kh4,a7,c7", 6);
  r.moves = {"d8-e7", "d2-c1", "e7-d8", "c1-d2", "d8-e7", "d2-c1", "e7-d8"};
  const auto drawn = search(r);
  EXPECT_EQ(drawn.bestmove.value_or(""), "c1-d2");
  EXPECT_EQ(drawn.lines.at(0).score, (engine::Score{ScoreKind::cp, 0}));
  const auto lost = search(draughts("W:WKc1:BKd8,Kh4,a7,c7", 6));
  EXPECT_LT(lost.lines.at(0).score.value, -100);
}

TEST(DraughtsSearch, MultiPvAndSearchmoves) {
  AnalysisRequest r = draughts("", 6);
  r.multipv = 3;
  const auto result = search(r);
  ASSERT_EQ(result.lines.size(), 3u);
  std::set<std::string> firsts;
  for (const auto& l : result.lines) firsts.insert(l.moves.at(0));
  EXPECT_EQ(firsts.size(), 3u);
  EXPECT_GE(result.lines[0].score.value, result.lines[2].score.value);
  r.multipv = 1;
  r.searchmoves = {"a3-b4"};
  EXPECT_EQ(search(r).bestmove.value_or(""), "a3-b4");
  r.searchmoves = {"a3-a4"};
  auto service = make_service();
  auto bad = analyze(*service, r);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "illegal_move");
}

TEST(DraughtsSearch, FixedDepthIsReproducibleAndReachesItsDepth) {
  const auto a = search(draughts("", 9));
  const auto b = search(draughts("", 9));
  EXPECT_EQ(a.depth, 9);
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.lines.at(0).moves, b.lines.at(0).moves);
  EXPECT_EQ(a.fen, "W:Wa1,a3,b2,c1,c3,d2,e1,e3,f2,g1,g3,h2:Ba7,b6,b8,c7,d6,d8,e7,f6,f8,g7,h6,h8");
}

TEST(DraughtsSearch, BadInputIsAnError) {
  auto service = make_service();
  auto bad_fen = analyze(*service, draughts("W:Wa2", 3));
  ASSERT_FALSE(bad_fen);
  EXPECT_EQ(bad_fen.error().code, "invalid_fen");
  AnalysisRequest r = draughts("", 3);
  r.moves = {"c3-d4", "f6-e5", "d4-c5"};
  auto bad_move = analyze(*service, r);
  ASSERT_FALSE(bad_move);
  EXPECT_EQ(bad_move.error().code, "illegal_move");
  EXPECT_NE(bad_move.error().message.find("moves[2]"), std::string::npos);
}

TEST(DraughtsSearchTable, SearchmovesStoreNoRootValueButKeepTheEntriesBelow) {
  check_searchmoves_store_no_root_value<DraughtsGame>("", "a3-b4", 8);
}

TEST(DraughtsSearchTable, MultiPvLinesAfterTheFirstStoreNoRootValue) {
  // 1.c3-b4! wins a man (see ShotFoundAtDepthOne): far ahead of the others.
  check_multipv_stores_the_first_line_only<DraughtsGame>("W:Wa3,c3,d2,e1,g1:Ba5,c5,f8,h8", 3, 8);
}

}  // namespace
}  // namespace kibitz::test
