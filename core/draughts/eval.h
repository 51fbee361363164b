// Static evaluation of a Russian draughts position, in hundredths of a man
// from the side to move's point of view: material, men and kings by square,
// mobility, the back-rank guard, runaway men, men backed from behind, the
// balance of the flanks, men en prise, trading down when ahead, blended
// between a middlegame and an endgame value by the pieces left, and scaled
// down in endings that are known to be hard to win. The weights are fitted
// to self-play games (eval_weights.h, tools/tune).
#pragma once

#include "draughts/eval_terms.h"
#include "draughts/position.h"

KIBITZ_NAMESPACE(draughts) {

int evaluate(const Position& pos);

// For the tuner (tools/tune): how often each term applied (White minus
// Black), and what the blend made of them. evaluate() from White's side is
// white_eval = scale * (sum over terms of trace * (mg * phase + eg * (24 -
// phase)) / 24), up to rounding.
struct EvalTraceResult {
  EvalTrace trace;
  int white_eval;  // evaluate() from White's side
  int phase;       // 0..24: the pieces on the board
  double scale;    // 1, or 1/8 in a hard-to-win ending (1/64 when both sides are)
};
EvalTraceResult evaluate_with_trace(const Position& pos);

}  // KIBITZ_NAMESPACE(draughts)
