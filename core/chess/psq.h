// Material plus piece-square value of every piece on every square, from the
// tuned weights (eval_weights.h): the part of the evaluation a Position keeps
// up to date as pieces move (Position::psq()).
#pragma once

#include "chess/eval_weights.h"

KIBITZ_NAMESPACE(chess) {

// kPsq.v[piece][square], {middlegame, endgame}, positive for White's pieces
// and negative for Black's, so a position's value is the plain sum.
struct PsqTables {
  Score v[kPieces][kSquares];
};

constexpr PsqTables make_psq() {
  PsqTables t{};
  const EvalWeights& w = kEvalWeights;
  for (int pt = Pawn; pt <= King; ++pt)
    for (int s = 0; s < kSquares; ++s) {
      t.v[make_piece(White, PieceType(pt))][s] = w.material[pt] + w.psq[pt][s];
      t.v[make_piece(Black, PieceType(pt))][s] = Score() - (w.material[pt] + w.psq[pt][s ^ 56]);
    }
  return t;
}
inline constexpr PsqTables kPsq = make_psq();

}  // KIBITZ_NAMESPACE(chess)
