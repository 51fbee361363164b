// The evaluation: symmetric between the colours, and exactly the linear sum
// of its weights over the trace the tuner fits (tools/tune).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <random>
#include <string>
#include <vector>

#include "chess/eval.h"
#include "chess/eval_weights.h"
#include "chess/movegen.h"
#include "chess/nn.h"

namespace kibitz::chess {
namespace {

// Positions from random games: every kind of material and king placement.
std::vector<Position> random_positions(int games, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Position> out;
  for (int g = 0; g < games; ++g) {
    Position pos;
    for (int ply = 0; ply < 200; ++ply) {
      MoveList legal(pos);
      if (legal.empty() || pos.has_insufficient_material()) break;
      // Captures are likelier, so games reach endings.
      std::vector<Move> caps;
      for (Move m : legal)
        if (pos.is_capture(m)) caps.push_back(m);
      const bool take = !caps.empty() && rng() % 2;
      const Move m = take ? caps[rng() % caps.size()] : legal.begin()[rng() % legal.size()];
      pos.do_move(m);
      out.push_back(pos);
    }
  }
  return out;
}

// The same position with the colours swapped and the board turned round.
std::string mirror_fen(const std::string& fen) {
  std::vector<std::string> f;
  size_t start = 0;
  for (size_t i = 0; i <= fen.size(); ++i)
    if (i == fen.size() || fen[i] == ' ') f.push_back(fen.substr(start, i - start)), start = i + 1;
  std::vector<std::string> ranks;
  start = 0;
  for (size_t i = 0; i <= f[0].size(); ++i)
    if (i == f[0].size() || f[0][i] == '/')
      ranks.push_back(f[0].substr(start, i - start)), start = i + 1;
  std::reverse(ranks.begin(), ranks.end());
  std::string board;
  for (const auto& r : ranks) board += (board.empty() ? "" : "/") + r;
  const auto swap_case = [](std::string s) {
    for (char& c : s) c = std::isupper(c) ? char(std::tolower(c)) : char(std::toupper(c));
    return s;
  };
  std::string castling = f[2] == "-" ? "-" : swap_case(f[2]);
  std::sort(castling.begin(), castling.end());  // "KQkq" order: upper case first
  std::string ep = f[3] == "-" ? "-" : std::string{f[3][0], f[3][1] == '3' ? '6' : '3'};
  return swap_case(board) + (f[1] == "w" ? " b " : " w ") + castling + " " + ep + " " + f[4] + " " +
         f[5];
}

TEST(ChessEval, IsTheSameForBothColours) {
  int checked = 0;
  for (const Position& pos : random_positions(40, 7)) {
    const auto mirrored = Position::from_fen(mirror_fen(pos.fen()));
    ASSERT_TRUE(mirrored) << pos.fen() << " -> " << mirror_fen(pos.fen());
    ASSERT_EQ(evaluate(pos), evaluate(*mirrored)) << pos.fen();
    ++checked;
  }
  EXPECT_GT(checked, 2000);
}

TEST(ChessEval, IsTheLinearSumOfItsWeightsOverTheTrace) {
  const auto* w = reinterpret_cast<const Score*>(&kEvalWeights);
  int checked = 0, scaled = 0;
  for (const Position& pos : random_positions(40, 11)) {
    const EvalTraceResult t = evaluate_with_trace(pos);
    const float* c = reinterpret_cast<const float*>(&t.trace);
    double mg = 0, eg = 0;
    for (int i = 0; i < kEvalTermCount; ++i)
      mg += double(c[i]) * w[i].mg, eg += double(c[i]) * w[i].eg;
    const double linear = t.scale * (mg * t.phase + eg * (24 - t.phase)) / 24;
    // The hand-written part: evaluate() adds the learned correction (nn.h).
    const int hand = evaluate(pos) - nn_correction(pos);
    const int white = pos.side_to_move() == White ? hand : -hand;
    ASSERT_EQ(t.white_eval, white) << pos.fen();
    // Integer division in the blend and in the king attack's scaling.
    ASSERT_NEAR(linear, white, 2.0) << pos.fen();
    ++checked, scaled += t.scale != 1.0;
  }
  EXPECT_GT(checked, 2000);
  EXPECT_GT(scaled, 0);  // the hard-to-win endings were among them
}

// Each term of the trace counts what its comment says (White's count minus
// Black's), in positions built to show one.
EvalTrace trace_of(const char* fen) {
  const auto pos = Position::from_fen(fen);
  EXPECT_TRUE(pos) << fen;
  return pos ? evaluate_with_trace(*pos).trace : EvalTrace{};
}

TEST(ChessEval, PawnTermsCountWhatTheySay) {
  // d3 cannot be guarded by c4 or e4, and e5 hits d4; e5 is isolated, not backward.
  EXPECT_EQ(trace_of("4k3/8/8/4p3/2P1P3/3P4/8/4K3 w - - 0 1").backward_pawn, 1.f);
  // g4 storms White's king three ranks away; f2 and g2 storm Black's six away.
  const EvalTrace storm = trace_of("6k1/8/8/8/6p1/8/5PP1/6K1 w - - 0 1");
  EXPECT_EQ(storm.storm_pawn[3], 1.f);
  EXPECT_EQ(storm.storm_pawn[6], -2.f);
  // b2, d2 and f2 stand on the dark squares of the bishop on c1.
  EXPECT_EQ(trace_of("4k3/8/8/8/8/8/1P1P1P2/2B1K3 w - - 0 1").bishop_pawns, 3.f);
  // The knight on d4 stands behind Black's pawn on d5.
  EXPECT_EQ(trace_of("4k3/8/8/3p4/3N4/8/8/4K3 w - - 0 1").minor_behind_pawn, 1.f);
  // e1 to a2: four squares; Black has no pawn.
  EXPECT_EQ(trace_of("4k3/8/8/8/8/8/P7/4K3 w - - 0 1").king_pawn_distance, 4.f);
  // White: 10 safe squares on c-f, ranks 2-4, 4 of them behind d4 and e4 (14);
  // Black: 12 less c5, d5, e5 and f5, hit by White's pawns (8).
  EXPECT_EQ(trace_of("4k3/8/8/8/3PP3/8/8/4K3 w - - 0 1").space, 6.f);
  // e4-e5 is safe and would hit the knight on d6.
  EXPECT_EQ(trace_of("4k3/8/3n4/8/4P3/8/8/4K3 w - - 0 1").threat_by_push, 1.f);
}

}  // namespace
}  // namespace kibitz::chess
