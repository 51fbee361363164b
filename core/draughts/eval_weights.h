// The draughts evaluation's weights (core/draughts/eval_terms.h), {middlegame,
// endgame} in hundredths of a man. Written by `kibitz-tune tune --game
// draughts` (tools/tune).
// The hand-written evaluation's values, before any tuning.
#pragma once

#include "draughts/eval_terms.h"

KIBITZ_NAMESPACE(draughts) {

// clang-format off
inline constexpr EvalWeights kEvalWeights = {
  .material = {
    {100, 100}, {300, 300},
  },
  .man_psq = {
    {0, 0}, {10, 10}, {18, 18}, {25, 25}, {32, 32}, {0, 0}, {0, 0}, {3, 3},
    {6, 6}, {22, 22}, {32, 32}, {0, 0}, {0, 0}, {3, 3}, {9, 9}, {13, 13},
    {15, 15}, {0, 0}, {0, 0}, {3, 3}, {9, 9}, {18, 18}, {23, 23}, {22, 22},
    {32, 32}, {3, 3}, {6, 6}, {18, 18}, {23, 23}, {25, 25}, {32, 32}, {0, 0},
  },
  .king_psq = {
    {20, 20}, {0, 0}, {0, 0}, {20, 20}, {0, 0}, {0, 0}, {0, 0}, {20, 20},
    {0, 0}, {0, 0}, {20, 20}, {0, 0}, {0, 0}, {0, 0}, {20, 20}, {0, 0},
    {0, 0}, {20, 20}, {0, 0}, {0, 0}, {0, 0}, {20, 20}, {0, 0}, {0, 0},
    {0, 0}, {0, 0}, {0, 0}, {0, 0}, {20, 20}, {0, 0}, {0, 0}, {0, 0},
  },
  .man_mobility = {2, 2},
  .king_mobility = {2, 2},
  .back_guard = {
    {0, 0}, {10, 10}, {10, 10}, {0, 0},
  },
  .runaway7 = {45, 45},
  .runaway6 = {20, 20},
  .backed_man = {0, 0},
  .flank_imbalance = {0, 0},
  .threatened = {0, 0},
  .first_king = {0, 0},
  .trade_man = {100, 100},
  .trade_king = {300, 300},
  .tempo = {0, 0},
};
// clang-format on

}  // KIBITZ_NAMESPACE(draughts)
