// The terms of the chess evaluation, as one struct of arrays: with T = Score
// it holds the weights (eval_weights.h, written by tools/tune), with T =
// float it holds how often each term applies in one position, White's count
// minus Black's (the tuner's trace). Every member is T or an array of T, so
// either struct can be read as a flat array of T.
#pragma once

#include "chess/types.h"
#include "common/tapered_score.h"

KIBITZ_NAMESPACE(chess) {

using eval::Score;

template <class T>
struct EvalTerms {
  T material[kPieceTypes];       // by piece type; King's is unused
  T psq[kPieceTypes][kSquares];  // from White's side, a1 = 0
  T knight_mobility[9];          // by squares reached in the mobility area
  T bishop_mobility[14];
  T rook_mobility[15];
  T queen_mobility[28];
  T bishop_pair;
  T rook_open_file;
  T rook_semi_open_file;
  T rook_on_seventh;  // with their king on the eighth or pawns on the seventh
  T knight_outpost;   // ranks 4-6, pawn-defended, no enemy pawn can chase it
  T bishop_outpost;
  T doubled_pawn;
  T isolated_pawn;
  T connected_pawn[8];             // by relative rank
  T passed[8];                     // by relative rank
  T passed_their_king[8];          // times the enemy king's distance to the stop square
  T passed_our_king[8];            // times our king's distance to the stop square
  T passed_free[8];                // the stop square is empty
  T threat_by_pawn[kPieceTypes];   // their piece of this type attacked by our pawn
  T threat_by_minor[kPieceTypes];  // ... by our knight or bishop (minors: if not pawn-defended)
  T threat_by_rook[kPieceTypes];   // ... by our rook (minors: if not pawn-defended)
  T hanging;                       // their piece attacked and not defended at all
  T king_attack[kPieceTypes];      // per attacker of the king zone, scaled by their number
  T safe_check[kPieceTypes];       // checks our pieces can give on squares they do not guard
  T shelter_missing_open;          // no pawn of ours in front of our king on a file, nor theirs
  T shelter_missing_semi;          // no pawn of ours there, one of theirs
  T shelter_pawn[8];               // our nearest pawn on the file, by ranks from the king
  T tempo;                         // the side to move
  T backward_pawn;      // not isolated, no pawn of ours beside or behind, stop square hit by theirs
  T storm_pawn[8];      // their nearest pawn on a file by our king, by ranks from the king
  T bishop_pawns;       // per bishop, our pawns on squares of its colour
  T minor_behind_pawn;  // a knight or bishop with a pawn (either side's) just in front
  T king_pawn_distance;  // times our king's distance to our nearest pawn
  T space;               // safe central squares on our side of the board, behind pawns twice
  T threat_by_push;      // their pieces a safe push of one of our pawns would attack
};

constexpr int kEvalTermCount = eval::term_count<EvalTerms>();

using EvalWeights = EvalTerms<Score>;
using EvalTrace = EvalTerms<float>;

}  // KIBITZ_NAMESPACE(chess)
