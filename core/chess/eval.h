// Static evaluation of a chess position, in centipawns from the side to
// move's point of view: material and piece-square tables tapered between
// middlegame and endgame by the non-pawn material left, plus mobility, king
// safety, pawn structure and passed pawns; then the learned correction
// (nn.h) added. Or, when a network is selected (nnue_network.h: the
// `eval_file` setting), the network's output, blended with the hand-written
// evaluation (without the correction) when the network file gives that a
// share.
#pragma once

#include "chess/eval_terms.h"
#include "chess/position.h"

KIBITZ_NAMESPACE(chess) {

// evaluate() never leaves [-kEvalLimit, kEvalLimit], far inside the
// search's mate scores (32000 less the ply). The learned correction alone is
// bounded only by its weights (about 17,700 cp for those in nn_weights.h);
// no position comes near, and the clamp makes it certain for any weights.
constexpr int kEvalLimit = 20000;

int evaluate(const Position& pos);

// For the tuner (tools/tune): how often each term applied (White minus
// Black), and what the blend made of them. The hand-written part of
// evaluate() (without nn_correction), from White's side, is white_eval =
// scale * (sum over terms of trace * (mg * phase + eg * (24 - phase)) / 24),
// up to rounding.
struct EvalTraceResult {
  EvalTrace trace;
  int white_eval;  // evaluate() less nn_correction(), from White's side
  int phase;       // 0..24
  double scale;    // 1, or 1/4 in a hard-to-win ending
};
EvalTraceResult evaluate_with_trace(const Position& pos);

// Material values used by SEE and move ordering (centipawns).
constexpr int kSeeValue[kPieceTypes] = {0, 100, 320, 330, 500, 950, 0};

// Game phase from 0 (bare kings and pawns) to 24 (all pieces on the board).
int game_phase(const Position& pos);

}  // KIBITZ_NAMESPACE(chess)
