// Game review: judgments from known blunders, quiet moves left alone, the
// annotated record readable again with evaluations matching the JSON.
#include "review/review.h"

#include <gtest/gtest.h>

#include <mutex>

#include "support/service.h"

namespace kibitz::review {
namespace {

using engine::Score;
using engine::ScoreKind;

Score cp(int v) { return {ScoreKind::cp, v}; }
Score mate(int v) { return {ScoreKind::mate, v}; }

TEST(ReviewRules, WinningChancesAndThresholds) {
  EXPECT_DOUBLE_EQ(winning_chances(GameKind::chess, cp(0)), 0.0);
  EXPECT_NEAR(winning_chances(GameKind::chess, cp(100)), 0.182, 0.002);
  EXPECT_DOUBLE_EQ(winning_chances(GameKind::chess, mate(3)), 1.0);
  EXPECT_DOUBLE_EQ(winning_chances(GameKind::chess, mate(-2)), -1.0);
  const Thresholds t;
  EXPECT_EQ(judge(GameKind::chess, cp(20), cp(0), t), Judgment::none);
  EXPECT_EQ(judge(GameKind::chess, cp(50), cp(-30), t), Judgment::inaccuracy);  // drop 0.145
  EXPECT_EQ(judge(GameKind::chess, cp(100), cp(-50), t), Judgment::mistake);    // drop 0.273
  EXPECT_EQ(judge(GameKind::chess, cp(100), cp(-300), t), Judgment::blunder);
  // Mates: losing a mate, walking into one.
  EXPECT_EQ(judge(GameKind::chess, mate(2), cp(900), t), Judgment::inaccuracy);
  EXPECT_EQ(judge(GameKind::chess, mate(2), cp(150), t), Judgment::mistake);
  EXPECT_EQ(judge(GameKind::chess, mate(2), cp(-150), t), Judgment::blunder);
  EXPECT_EQ(judge(GameKind::chess, mate(5), mate(3), t), Judgment::none);
  EXPECT_EQ(judge(GameKind::chess, cp(0), mate(-2), t), Judgment::blunder);
  EXPECT_EQ(judge(GameKind::chess, cp(-2000), mate(-2), t), Judgment::inaccuracy);
  EXPECT_EQ(judge(GameKind::chess, mate(-4), mate(-2), t), Judgment::none);
  // Thresholds are the caller's.
  EXPECT_EQ(judge(GameKind::chess, cp(50), cp(-30), Thresholds{0.2, 0.3, 0.4}), Judgment::none);
}

Expected<Review, Error> run_review(const std::string& text, GameKind game, int depth) {
  auto service = test::make_service(2, 16);
  auto games = record::read(text);
  if (!games) return Unexpected(Error{"invalid_request", games.error().message});
  Options o;
  o.limits.depth = depth;
  std::optional<Expected<Review, Error>> outcome;
  int last_done = 0, last_total = 0;
  std::mutex m;
  Callbacks cb;
  cb.on_progress = [&](int done, int total) {
    std::lock_guard lock(m);
    EXPECT_GE(done, last_done);
    EXPECT_LE(done, total);
    last_done = std::max(last_done, done);
    last_total = total;
  };
  cb.on_done = [&](const Expected<Review, Error>& r) { outcome = r; };
  auto h = start(*service, game, (*games)[0], o, cb);
  if (!h) return Unexpected(h.error());
  (*h)->wait();
  EXPECT_EQ(last_done, int((*games)[0].main.moves.size())) << "every ply reported done";
  EXPECT_EQ(last_total, last_done);
  return *outcome;
}

TEST(Review, HungQueenIsABlunderAndQuietMovesAreNotJudged) {
  auto r = run_review("1. e4 e5 2. Nf3 Qh4 3. Nxh4 Nf6 *", GameKind::chess, 10);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->plies.size(), 6u);
  EXPECT_EQ(r->plies[3].san, "Qh4");
  EXPECT_EQ(r->plies[3].judgment, Judgment::blunder);
  EXPECT_GT(r->plies[3].loss, 500);
  for (int i : {0, 1, 2, 4})
    EXPECT_EQ(r->plies[size_t(i)].judgment, Judgment::none) << r->plies[size_t(i)].san;
  EXPECT_EQ(r->black.blunders, 1);
  EXPECT_EQ(r->white.blunders + r->white.mistakes, 0);
  EXPECT_GT(r->white.accuracy, r->black.accuracy);
  // The annotated game: the blunder carries ?? and the best line.
  EXPECT_NE(r->annotated.find("Qh4 $4"), std::string::npos) << r->annotated;
  EXPECT_NE(r->annotated.find("[%eval"), std::string::npos);
  EXPECT_NE(r->annotated.find("[Annotator \"Kibitz\"]"), std::string::npos);
}

TEST(Review, WalkingIntoMateAndMissingMate) {
  // 3... Nf6?? allows Qxf7#; then White misses the mate with 4. Qh3.
  auto r = run_review("1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qh3 Nd4 *", GameKind::chess, 6);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->plies[5].judgment, Judgment::blunder) << "Nf6 allows mate";
  EXPECT_EQ(r->plies[5].eval_after.kind, ScoreKind::mate);
  EXPECT_GT(r->plies[5].eval_after.value, 0) << "White's view: White mates";
  EXPECT_NE(r->plies[6].judgment, Judgment::none) << "Qh3 misses Qxf7#";
  EXPECT_EQ(r->plies[6].best_line_san.at(0), "Qxf7#");
}

TEST(Review, MateOnTheBoardEndsTheReview) {
  auto r = run_review("1. f3 e5 2. g4 Qh4# 0-1", GameKind::chess, 4);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->plies.size(), 4u);
  EXPECT_TRUE(r->plies[3].terminal_after);
  EXPECT_EQ(r->plies[3].judgment, Judgment::none);
  EXPECT_EQ(r->plies[2].judgment, Judgment::blunder) << "g4 allows mate in one";
}

TEST(Review, AnnotatedRecordReadsBackWithTheSameEvaluations) {
  const char* pgn = "[White \"A\"]\n[Black \"B\"]\n1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. Bg5 Be7 *";
  auto r = run_review(pgn, GameKind::chess, 6);
  ASSERT_TRUE(r) << r.error().message;
  auto again = record::read(r->annotated);
  ASSERT_TRUE(again) << again.error().message << "\n" << r->annotated;
  const auto& moves = (*again)[0].main.moves;
  ASSERT_EQ(moves.size(), r->plies.size());
  for (size_t i = 0; i < moves.size(); ++i) {
    EXPECT_EQ(moves[i].move, r->plies[i].san);
    ASSERT_FALSE(moves[i].comments.empty());
    char expected[32];
    std::snprintf(expected, sizeof expected, "[%%eval %.2f]", r->plies[i].eval_after.value / 100.0);
    EXPECT_EQ(moves[i].comments[0], expected);
  }
  EXPECT_EQ(*(*again)[0].tag("White"), "A");
}

TEST(Review, DraughtsMoveThatAllowsAShotIsABlunder) {
  // 1...b6-c5?? allows 2.c3-b4! a5:c3 3.d2:b4:d6, two men for one.
  const char* pdn =
      "[GameType \"25\"]\n[FEN \"B:Wa3,c3,d2,e1,g1:Ba5,b6,f8,h8\"]\n"
      "1... b6-c5 2. c3-b4 a5:c3 3. d2:b4:d6 h8-g7 *";
  auto r = run_review(pdn, GameKind::draughts, 8);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->plies.size(), 5u);
  EXPECT_FALSE(r->plies[0].white);
  EXPECT_EQ(r->plies[0].move, "b6-c5");
  EXPECT_EQ(r->plies[0].judgment, Judgment::blunder);
  EXPECT_EQ(r->plies[1].judgment, Judgment::none) << "the shot itself is the best move";
  EXPECT_EQ(r->black.blunders, 1);
  auto again = record::read(r->annotated);
  ASSERT_TRUE(again) << r->annotated;
  EXPECT_EQ((*again)[0].main.moves[0].move, "b6-c5");
  EXPECT_EQ((*again)[0].main.moves[0].nags, std::vector<int>{4});
  EXPECT_NE(r->annotated.find("1... b6-c5 $4"), std::string::npos) << r->annotated;
}

TEST(Review, BadRecordsAreErrorsNamingThePly) {
  auto r = run_review("1. e4 e5 2. Ke3 *", GameKind::chess, 2);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "illegal_move");
  EXPECT_NE(r.error().message.find("ply 3"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("Ke3"), std::string::npos);
  auto bad_fen = run_review("[FEN \"garbage\"]\n1. e4 *", GameKind::chess, 2);
  ASSERT_FALSE(bad_fen);
  EXPECT_EQ(bad_fen.error().code, "invalid_fen");
}

TEST(Review, StopEndsWithCancelled) {
  auto service = test::make_service(1, 16);
  auto games = record::read("1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 *");
  ASSERT_TRUE(games);
  Options o;
  o.limits.infinite = true;  // never ends on its own
  std::optional<Expected<Review, Error>> outcome;
  auto h = start(*service, GameKind::chess, (*games)[0], o,
                 {nullptr, [&](const auto& r) { outcome = r; }});
  ASSERT_TRUE(h);
  (*h)->stop();
  (*h)->wait();
  ASSERT_TRUE(outcome);
  ASSERT_FALSE(*outcome);
  EXPECT_EQ(outcome->error().code, "cancelled");
}

}  // namespace
}  // namespace kibitz::review
