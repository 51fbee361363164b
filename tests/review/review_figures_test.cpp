// Game review as README.md ("Game review") states it, checked from a real
// review's own evaluations: each move's loss (mates as +-1000, capped at
// 1000) and accuracy (Lichess's formula), each player's means and counts;
// the annotated record's NAGs ($6, $2), "Best was ..." comments with the best
// line as a variation, the game's own variations dropped, and no [%eval] on
// the last move of a finished game.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "review/review.h"
#include "support/service.h"

namespace kibitz::review {
namespace {

using engine::Score;
using engine::ScoreKind;

Expected<Review, Error> review_of(const std::string& text, GameKind game, int depth,
                                  Thresholds t = {}) {
  auto service = test::make_service(2, 16);
  auto games = record::read(text);
  if (!games) return Unexpected(Error{"invalid_request", games.error().message});
  Options o;
  o.limits.depth = depth;
  o.thresholds = t;
  std::optional<Expected<Review, Error>> outcome;
  Callbacks cb;
  cb.on_done = [&](const Expected<Review, Error>& r) { outcome = r; };
  auto h = start(*service, game, (*games)[0], o, cb);
  if (!h) return Unexpected(h.error());
  (*h)->wait();
  return *outcome;
}

// The README's figures, written from its text.
Score mover_view(const PlyReview& p, Score white_view) {
  return p.white ? white_view : Score{white_view.kind, -white_view.value};
}
int loss_cp(Score s) {  // mates count as +-1000
  if (s.kind == ScoreKind::mate) return s.value > 0 ? 1000 : -1000;
  return std::clamp(s.value, -1000, 1000);
}
double win_percent(GameKind g, Score s) {  // p = 50 + 50 W
  const double k = g == GameKind::chess ? 0.00368208 : 0.006;
  const double w =
      s.kind == ScoreKind::mate ? (s.value > 0 ? 1.0 : -1.0) : 2 / (1 + std::exp(-k * s.value)) - 1;
  return 50 + 50 * w;
}

// Every ply's loss and accuracy, and each player's means, recomputed; the
// number of plies where a mate score entered a loss below the cap (where
// counting the mate as 1000 shows).
int expect_readme_figures(const Review& r, GameKind g) {
  int mate_losses = 0;
  PlayerSummary want[2];
  for (const PlyReview& p : r.plies) {
    SCOPED_TRACE("ply " + std::to_string(p.ply) + " " + p.move);
    const Score before = mover_view(p, p.eval_before), after = mover_view(p, p.eval_after);
    const bool best = p.best_move == p.move;  // the engine's own move is not judged
    const int loss = best ? 0 : std::clamp(loss_cp(before) - loss_cp(after), 0, 1000);
    const double accuracy =
        best
            ? 100
            : std::clamp(
                  103.1668 * std::exp(-0.04354 * (win_percent(g, before) - win_percent(g, after))) -
                      3.1669,
                  0.0, 100.0);
    EXPECT_EQ(p.loss, loss);
    EXPECT_NEAR(p.accuracy, accuracy, 1e-3);
    if (!best && (before.kind == ScoreKind::mate || after.kind == ScoreKind::mate) && loss > 0 &&
        loss < 1000)
      ++mate_losses;
    PlayerSummary& s = want[p.white ? 0 : 1];
    ++s.moves;
    s.average_loss += p.loss;
    s.accuracy += p.accuracy;
    s.inaccuracies += p.judgment == Judgment::inaccuracy;
    s.mistakes += p.judgment == Judgment::mistake;
    s.blunders += p.judgment == Judgment::blunder;
  }
  for (int side = 0; side < 2; ++side) {
    const PlayerSummary& got = side == 0 ? r.white : r.black;
    PlayerSummary& s = want[side];
    SCOPED_TRACE(side == 0 ? "White" : "Black");
    EXPECT_GT(s.moves, 0);
    if (s.moves == 0) continue;
    EXPECT_EQ(got.moves, s.moves);
    EXPECT_NEAR(got.average_loss, s.average_loss / s.moves, 1e-9);
    EXPECT_NEAR(got.accuracy, s.accuracy / s.moves, 1e-9);
    EXPECT_EQ(got.inaccuracies, s.inaccuracies);
    EXPECT_EQ(got.mistakes, s.mistakes);
    EXPECT_EQ(got.blunders, s.blunders);
  }
  return mate_losses;
}

TEST(ReviewFigures, LossAccuracyAndMeansFollowTheReadme) {
  // A rook up for White: 1... Nb6 and 2... a6 allow Re8#, 2. h3 misses it.
  // Each loss is a mate (1000) against a few pawns: under the cap.
  auto m = review_of("[FEN \"6k1/pp1n1ppp/8/8/8/2N5/PP3PPP/4R1K1 b - - 0 1\"]\n1... Nb6 2. h3 a6 *",
                     GameKind::chess, 6);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_GE(expect_readme_figures(*m, GameKind::chess), 2) << "losses from a mate score";
  // 3... Nf6?? allows Qxf7#; 4. Qh3 misses it (losses at the cap).
  auto r = review_of("1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qh3 Nd4 *", GameKind::chess, 6);
  ASSERT_TRUE(r) << r.error().message;
  expect_readme_figures(*r, GameKind::chess);
  // A hung queen: a loss without mates, an accuracy well inside 0..100.
  auto q = review_of("1. e4 e5 2. Nf3 Qh4 3. Nxh4 Nf6 *", GameKind::chess, 8);
  ASSERT_TRUE(q) << q.error().message;
  expect_readme_figures(*q, GameKind::chess);
  EXPECT_GT(q->plies[3].loss, 0);
  // Draughts, its own curve (k = 0.006).
  auto d = review_of(
      "[GameType \"25\"]\n[FEN \"B:Wa3,c3,d2,e1,g1:Ba5,b6,f8,h8\"]\n"
      "1... b6-c5 2. c3-b4 a5:c3 3. d2:b4:d6 h8-g7 *",
      GameKind::draughts, 8);
  ASSERT_TRUE(d) << d.error().message;
  expect_readme_figures(*d, GameKind::draughts);
}

std::string eval_text(Score white_view) {
  if (white_view.kind == ScoreKind::mate) return "#" + std::to_string(white_view.value);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", white_view.value / 100.0);
  return buf;
}

// The hung queen (2... Qh4) judged as an inaccuracy or a mistake by the
// thresholds given: its NAG, its comment and the best line after it.
void expect_judged_queen(const Thresholds& t, Judgment judgment, int nag, const char* word) {
  auto r = review_of("1. e4 e5 2. Nf3 Qh4 3. Nxh4 Nf6 *", GameKind::chess, 8, t);
  ASSERT_TRUE(r) << r.error().message;
  const PlyReview& p = r->plies.at(3);
  ASSERT_EQ(p.san, "Qh4");
  ASSERT_EQ(p.judgment, judgment) << "drop thresholds " << t.inaccuracy << "/" << t.mistake;
  auto again = record::read(r->annotated);
  ASSERT_TRUE(again) << r->annotated;
  const record::Node& node = (*again)[0].main.moves.at(3);
  EXPECT_EQ(node.move, "Qh4");
  EXPECT_EQ(node.nags, std::vector<int>{nag}) << r->annotated;
  ASSERT_FALSE(p.best_line_san.empty());
  const std::string comment = "(" + eval_text(p.eval_before) + " → " + eval_text(p.eval_after) +
                              ") " + word + ". Best was " + p.best_line_san[0] + ".";
  EXPECT_NE(std::find(node.comments.begin(), node.comments.end(), comment), node.comments.end())
      << "no comment \"" << comment << "\" in\n"
      << r->annotated;
  ASSERT_EQ(node.variations.size(), 1u) << r->annotated;
  std::vector<std::string> line;
  for (const auto& m : node.variations[0].moves) line.push_back(m.move);
  EXPECT_EQ(line, p.best_line_san);
}

TEST(ReviewAnnotation, AnInaccuracyIsDollarSixWithBestWasAndTheBestLine) {
  expect_judged_queen({0.1, 1.9, 2.0}, Judgment::inaccuracy, 6, "Inaccuracy");
}

TEST(ReviewAnnotation, AMistakeIsDollarTwoWithBestWasAndTheBestLine) {
  expect_judged_queen({0.1, 0.2, 2.0}, Judgment::mistake, 2, "Mistake");
}

TEST(ReviewAnnotation, TheGamesOwnVariationsAreDroppedAndItsCommentsKept) {
  // Thresholds no drop reaches: no judgment, so no variation of the engine.
  auto r = review_of(
      "1. e4 {the king's pawn} (1. d4 d5 2. c4) 1... e5 2. Nf3 (2. f4 exf4 (2... d5)) 2... Nc6 *",
      GameKind::chess, 4, {2.0, 2.0, 2.0});
  ASSERT_TRUE(r) << r.error().message;
  for (const PlyReview& p : r->plies) ASSERT_EQ(p.judgment, Judgment::none) << p.move;
  EXPECT_EQ(r->annotated.find("d4"), std::string::npos) << r->annotated;
  EXPECT_EQ(r->annotated.find("f4"), std::string::npos) << r->annotated;
  EXPECT_EQ(r->annotated.find('('), std::string::npos) << r->annotated;
  auto again = record::read(r->annotated);
  ASSERT_TRUE(again) << r->annotated;
  const auto& moves = (*again)[0].main.moves;
  ASSERT_EQ(moves.size(), 4u);
  for (const auto& m : moves) EXPECT_TRUE(m.variations.empty()) << m.move;
  const auto& first = moves[0].comments;
  EXPECT_NE(std::find(first.begin(), first.end(), "the king's pawn"), first.end()) << r->annotated;
}

TEST(ReviewAnnotation, TheLastMoveOfAFinishedGameHasNoEval) {
  auto mated = review_of("1. f3 e5 2. g4 Qh4# 0-1", GameKind::chess, 4);
  ASSERT_TRUE(mated) << mated.error().message;
  auto again = record::read(mated->annotated);
  ASSERT_TRUE(again) << mated->annotated;
  const auto& moves = (*again)[0].main.moves;
  ASSERT_EQ(moves.size(), 4u);
  const auto has_eval = [](const record::Node& n) {
    return std::any_of(n.comments.begin(), n.comments.end(),
                       [](const std::string& c) { return c.find("[%eval") != std::string::npos; });
  };
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(has_eval(moves[i])) << moves[i].move;
  EXPECT_FALSE(has_eval(moves[3])) << mated->annotated;
  // A game that goes on: its last move has one.
  auto open = review_of("1. f3 e5 2. g4 *", GameKind::chess, 4);
  ASSERT_TRUE(open) << open.error().message;
  auto open_again = record::read(open->annotated);
  ASSERT_TRUE(open_again) << open->annotated;
  EXPECT_TRUE(has_eval((*open_again)[0].main.moves.at(2))) << open->annotated;
}

TEST(ReviewAnnotation, AResultGivenOnlyByItsTagEndsTheAnnotatedGame) {
  auto r = review_of("[Result \"0-1\"]\n\n1. f3 e5 2. g4", GameKind::chess, 4);
  ASSERT_TRUE(r) << r.error().message;
  auto again = record::read(r->annotated);
  ASSERT_TRUE(again) << r->annotated;
  EXPECT_EQ((*again)[0].result, "0-1") << r->annotated;
  EXPECT_EQ(*(*again)[0].tag("Result"), "0-1") << r->annotated;
}

}  // namespace
}  // namespace kibitz::review
