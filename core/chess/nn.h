// A small learned correction added to the hand-written evaluation: a
// network of one hidden layer over the pieces on their squares, trained by
// `kibitz-tune nn` (tools/tune) on positions scored by a stronger engine,
// to what the hand-written terms get wrong.
//
// Each side's view of the board is 768 inputs (12 pieces, own first, times
// 64 squares, flipped for Black) feeding kNnHidden units; the two views'
// units, clipped to [0, 1] and the side to move's first, make the output.
#pragma once

#include <cstdint>

#include "chess/types.h"

KIBITZ_NAMESPACE(chess) {

constexpr int kNnInputs = 768;
constexpr int kNnHidden = 64;
constexpr int kNnQuant = 256;    // w1 and b1 are stored times this
constexpr int kNnOutQuant = 32;  // w2 is stored in centipawns times this

struct alignas(64) NnWeights {
  int16_t w1[kNnInputs][kNnHidden];
  int16_t b1[kNnHidden];
  // The output in centipawns is b2 + w2 . units, the units clipped to
  // [0, 1]: the side to move's, then the other side's.
  int16_t w2[2 * kNnHidden];
  int32_t b2;
};

// The input of `piece` (of colour c and type pt, on s) seen from `view`.
constexpr int nn_input(Color view, Color c, PieceType pt, Square s) {
  return ((c == view ? 0 : 6) + pt - 1) * 64 + (view == White ? int(s) : int(s) ^ 56);
}

class Position;

// The hidden units of both views before clipping, times kNnQuant: the
// biases plus the rows of the pieces on the board.
struct NnAccumulator {
  alignas(32) int16_t v[kColors][kNnHidden];
};

// The correction in centipawns, from the side to move's point of view: from
// the position's own accumulator when it keeps one (Position::nn_track),
// else summed afresh.
int nn_correction(const Position& pos);
// The correction given both views' units, the side to move's first.
int nn_output(const int16_t* us, const int16_t* them);
// A piece put on s, taken off s, or moved from one square to another: its
// rows added to or taken from both views (a move in one pass).
void nn_add(NnAccumulator& acc, Piece pc, Square s);
void nn_remove(NnAccumulator& acc, Piece pc, Square s);
void nn_move(NnAccumulator& acc, Piece pc, Square from, Square to);
// Both views summed afresh from the pieces on the board.
void nn_refresh(NnAccumulator& acc, const Position& pos);

}  // KIBITZ_NAMESPACE(chess)
