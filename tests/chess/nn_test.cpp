#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "chess/eval.h"
#include "chess/movegen.h"
#include "chess/nn.h"
#include "chess/nn_weights.h"
#include "common/score.h"

namespace kibitz::chess {
namespace {

TEST(ChessNn, EachViewNumbersThePiecesOnceAndTheViewsMirror) {
  for (const Color view : {White, Black}) {
    std::set<int> seen;
    for (const Color c : {White, Black})
      for (int pt = Pawn; pt <= King; ++pt)
        for (int s = 0; s < 64; ++s) {
          const int i = nn_input(view, c, PieceType(pt), Square(s));
          ASSERT_GE(i, 0);
          ASSERT_LT(i, kNnInputs);
          seen.insert(i);
          // Black's view of a piece is White's view of its mirror image.
          ASSERT_EQ(i, nn_input(Color(view ^ 1), Color(c ^ 1), PieceType(pt), Square(s ^ 56)));
        }
    EXPECT_EQ(seen.size(), size_t(kNnInputs));
  }
  // Our own pieces come first, a1 first: White's pawn on a1 seen by White.
  EXPECT_EQ(nn_input(White, White, Pawn, Square(0)), 0);
  EXPECT_EQ(nn_input(Black, White, King, Square(0)), 11 * 64 + 56);
}

// The network written out the long way, in doubles, from the weights alone.
double reference(const Position& pos) {
  const NnWeights& w = kNnWeights;
  double out = 0;
  const Color us = pos.side_to_move();
  for (int half = 0; half < 2; ++half) {
    const Color view = half == 0 ? us : Color(us ^ 1);
    for (int j = 0; j < kNnHidden; ++j) {
      double a = w.b1[j];
      for (int s = 0; s < 64; ++s) {
        const Piece p = pos.piece_on(Square(s));
        if (p != NoPiece) a += w.w1[nn_input(view, color_of(p), type_of(p), Square(s))][j];
      }
      out += w.w2[half * kNnHidden + j] * std::clamp(a, 0.0, double(kNnQuant)) / kNnQuant;
    }
  }
  return w.b2 + out / kNnOutQuant;
}

// Along random games, with every kind of move (captures, castling, en
// passant, promotion): the accumulator a tracked position keeps move by
// move, made and unmade, gives what the network computes afresh.
TEST(ChessNn, CorrectionIsTheNetworkOverThePieces) {
  std::mt19937_64 rng(5);
  int checked = 0;
  for (int g = 0; g < 20; ++g) {
    Position pos;
    pos.nn_track();
    ASSERT_NE(pos.nn_accumulator(), nullptr);
    for (int ply = 0; ply < 160; ++ply) {
      MoveList legal(pos);
      if (legal.empty()) break;
      const Move m = legal.begin()[rng() % legal.size()];
      const Position before = pos;
      pos.do_move(m);
      const auto fresh = Position::from_fen(pos.fen());
      ASSERT_TRUE(fresh);
      ASSERT_EQ(fresh->nn_accumulator(), nullptr);
      ASSERT_NEAR(nn_correction(*fresh), reference(pos), 1.0) << pos.fen();
      ASSERT_EQ(nn_correction(pos), nn_correction(*fresh)) << pos.fen();
      pos.undo_move(m);
      ASSERT_EQ(nn_correction(pos), nn_correction(before)) << pos.fen();
      pos.do_move(m);
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000);
}

// The evaluation, correction included, stays inside its limit, which is far
// from the mate scores, even with the most material the FEN parser accepts
// (nine queens and the rest of the set against a bare king) piled up.
TEST(ChessNn, EvaluationStaysInsideItsLimitFarFromMateScores) {
  static_assert(kEvalLimit + 1000 < search::kValueMateInMaxPly);
  for (const char* fen :
       {"QQQQQQQQ/QRRBBNNK/8/8/8/8/8/7k b - - 0 1", "K7/8/8/8/8/8/qqqqqqqq/kqrrbbnn w - - 0 1",
        "RRBBNNQK/QQQQQQQQ/8/8/8/8/pppppppp/7k w - - 0 1",
        "k7/PPPPPPPP/8/8/7K/8/pppppppp/8 b - - 0 1"}) {
    auto pos = Position::from_fen(fen);
    ASSERT_TRUE(pos) << fen;
    const int v = evaluate(*pos);
    EXPECT_LE(std::abs(v), kEvalLimit) << fen;
    pos->nn_track();
    EXPECT_EQ(evaluate(*pos), v) << fen;
  }
}

}  // namespace
}  // namespace kibitz::chess
