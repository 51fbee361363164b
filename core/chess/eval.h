// Static evaluation of a chess position, in centipawns from the side to
// move's point of view: material and piece-square tables tapered between
// middlegame and endgame by the non-pawn material left, plus mobility, king
// safety, pawn structure and passed pawns.
#pragma once

#include "chess/position.h"

KIBITZ_NAMESPACE(chess) {

int evaluate(const Position& pos);

// Material values used by SEE and move ordering (centipawns).
constexpr int kSeeValue[kPieceTypes] = {0, 100, 320, 330, 500, 950, 0};

// Game phase from 0 (bare kings and pawns) to 24 (all pieces on the board).
int game_phase(const Position& pos);

}  // KIBITZ_NAMESPACE(chess)
