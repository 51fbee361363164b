// The draughts evaluation: symmetric between the colours, and exactly the
// linear sum of its weights over the trace the tuner fits (tools/tune).
#include "draughts/eval.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/prng.h"
#include "draughts/eval_weights.h"
#include "draughts/movegen.h"

namespace kibitz::draughts {
namespace {

// Positions from random games: they run through every stage down to king
// endings, since captures are compulsory.
std::vector<Position> random_positions(int games, uint64_t seed) {
  Prng rng(seed);
  std::vector<Position> out;
  for (int g = 0; g < games; ++g) {
    Position pos;
    for (int ply = 0; ply < 200; ++ply) {
      const MoveList moves(pos);
      if (moves.empty()) break;
      pos.do_move(*(moves.begin() + rng.next() % unsigned(moves.size())));
      out.push_back(pos);
    }
  }
  return out;
}

std::string square_name(Square s) { return {char('a' + file_of(s)), char('1' + rank_of(s))}; }

// The same position with the colours swapped and the board turned half a turn.
std::string mirror_fen(const Position& pos) {
  std::string side[kColors];
  for (int i = 0; i < kSquares; ++i) {
    const Square s = Square(i);
    const Piece p = pos.piece_on(s);
    if (p == Piece::none) continue;
    const Color c = p == Piece::white_man || p == Piece::white_king ? White : Black;
    const bool king = p == Piece::white_king || p == Piece::black_king;
    std::string& list = side[~c];
    list +=
        (list.empty() ? "" : ",") + std::string(king ? "K" : "") + square_name(rotate_square(s));
  }
  return std::string(pos.side_to_move() == White ? "B" : "W") + ":W" + side[White] + ":B" +
         side[Black];
}

TEST(DraughtsEval, IsTheSameForBothColours) {
  int checked = 0;
  for (const Position& pos : random_positions(60, 7)) {
    const auto mirrored = Position::from_fen(mirror_fen(pos));
    ASSERT_TRUE(mirrored) << pos.fen() << " -> " << mirror_fen(pos);
    ASSERT_EQ(evaluate(pos), evaluate(*mirrored)) << pos.fen() << " -> " << mirror_fen(pos);
    ++checked;
  }
  EXPECT_GT(checked, 2000);
}

TEST(DraughtsEval, IsTheLinearSumOfItsWeightsOverTheTrace) {
  const auto* w = reinterpret_cast<const Score*>(&kEvalWeights);
  int checked = 0, scaled = 0;
  for (const Position& pos : random_positions(60, 11)) {
    const EvalTraceResult t = evaluate_with_trace(pos);
    const float* c = reinterpret_cast<const float*>(&t.trace);
    double mg = 0, eg = 0;
    for (int i = 0; i < kEvalTermCount; ++i)
      mg += double(c[i]) * w[i].mg, eg += double(c[i]) * w[i].eg;
    const double linear = t.scale * (mg * t.phase + eg * (24 - t.phase)) / 24;
    const int white = pos.side_to_move() == White ? evaluate(pos) : -evaluate(pos);
    ASSERT_EQ(t.white_eval, white) << pos.fen();
    // Integer division in the blend, the trade-down term and the scale.
    ASSERT_NEAR(linear, white, 3.0) << pos.fen();
    ++checked, scaled += t.scale != 1.0;
  }
  EXPECT_GT(checked, 2000);
  EXPECT_GT(scaled, 0);  // the hard-to-win endings were among them
}

TEST(DraughtsEval, AManUpIsGoodAndAKingIsWorthMoreThanAMan) {
  // White to move a man up, then Black to move a man down: both from the
  // side to move's point of view.
  const auto up = Position::from_fen("W:Wc3,e3,g3:Bb6,d6");
  const auto down = Position::from_fen("B:Wc3,e3,g3:Bb6,d6");
  ASSERT_TRUE(up && down);
  EXPECT_GT(evaluate(*up), 50);
  EXPECT_LT(evaluate(*down), -50);
  const auto king = Position::from_fen("W:WKc3,e3:Bb6,d6");
  const auto man = Position::from_fen("W:Wc3,e3:Bb6,d6");
  ASSERT_TRUE(king && man);
  EXPECT_GT(evaluate(*king), evaluate(*man) + 100);
}

}  // namespace
}  // namespace kibitz::draughts
