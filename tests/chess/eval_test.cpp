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
    const int white = pos.side_to_move() == White ? evaluate(pos) : -evaluate(pos);
    ASSERT_EQ(t.white_eval, white) << pos.fen();
    // Integer division in the blend and in the king attack's scaling.
    ASSERT_NEAR(linear, white, 2.0) << pos.fen();
    ++checked, scaled += t.scale != 1.0;
  }
  EXPECT_GT(checked, 2000);
  EXPECT_GT(scaled, 0);  // the hard-to-win endings were among them
}

}  // namespace
}  // namespace kibitz::chess
