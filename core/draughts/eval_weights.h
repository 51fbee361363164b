// The draughts evaluation's weights (core/draughts/eval_terms.h), {middlegame,
// endgame} in hundredths of a man. Written by `kibitz-tune tune --game draughts` (tools/tune).
// Tuned on 817373 positions, lambda 0.5, l2 1e-09, K 0.771975;
// validation loss 0.0300866 -> 0.0249318.
#pragma once

#include "draughts/eval_terms.h"

KIBITZ_NAMESPACE(draughts) {

// clang-format off
inline constexpr EvalWeights kEvalWeights = {
  .material = {
    {263, 78}, {399, 128},
  },
  .man_psq = {
    {3, -8}, {64, -2}, {0, 37}, {-57, 65}, {19, -8}, {0, 0}, {31, 11}, {34, -37},
    {18, -21}, {57, -17}, {49, 41}, {0, 0}, {39, 0}, {73, -23}, {15, 10}, {-1, 3},
    {45, -10}, {0, 0}, {32, 25}, {50, -25}, {45, 13}, {28, 50}, {-18, 73}, {7, 61},
    {51, 52}, {66, -46}, {41, -24}, {25, 39}, {-79, 70}, {-84, 57}, {29, 3}, {0, 0},
  },
  .king_psq = {
    {44, 18}, {19, -15}, {-2, -2}, {12, 13}, {2, -8}, {0, -23}, {-7, -18}, {32, 14},
    {-8, -19}, {4, -3}, {25, 16}, {3, -7}, {0, -11}, {-13, -23}, {21, 14}, {-7, -21},
    {2, -19}, {48, 9}, {21, 8}, {-4, -6}, {-10, 12}, {14, 27}, {-8, 1}, {-1, -8},
    {26, 4}, {12, -10}, {5, -3}, {-14, -1}, {2, 18}, {-16, 3}, {0, -14}, {64, -26},
  },
  .man_mobility = {5, -2},
  .king_mobility = {99, -27},
  .back_guard = {
    {13, -41}, {14, 23}, {44, 20}, {27, 28},
  },
  .runaway7 = {183, 32},
  .runaway6 = {52, 12},
  .backed_man = {1, -26},
  .flank_imbalance = {-4, -25},
  .threatened = {-36, -33},
  .first_king = {132, 66},
  .trade_man = {235, -27},
  .trade_king = {321, 159},
  .tempo = {4, 10},
};
// clang-format on

}  // KIBITZ_NAMESPACE(draughts)
