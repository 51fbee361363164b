// The network's inference (nnue_network.h has the architecture): each
// perspective's accumulator kept up to date as pieces are placed, removed
// and moved (Position does it once nn_track() finds a network selected),
// refreshed from scratch when that side's king crosses into another bucket
// or to the other half of the board, and the output computed from the two
// accumulators. Integer arithmetic throughout, so the AVX2 (bmi2 variant),
// SSE2 (generic variant) and scalar paths give the same numbers.
#pragma once

#include <cstdint>

#include "chess/nnue_network.h"
#include "chess/types.h"

KIBITZ_NAMESPACE(chess) {

class Position;

struct NnueAccumulator {
  alignas(64) int16_t v[kColors][nnue::kHidden];
  // Per perspective: king bucket * 2 + 1 when the board is mirrored.
  uint8_t king_key[kColors];
};

// The king key of perspective `view` with its king on ksq.
int nnue_king_key(const nnue::Network& net, Color view, Square ksq);

void nnue_add(const nnue::Network& net, NnueAccumulator& acc, Piece pc, Square s);
void nnue_remove(const nnue::Network& net, NnueAccumulator& acc, Piece pc, Square s);
void nnue_move(const nnue::Network& net, NnueAccumulator& acc, Piece pc, Square from, Square to);
// One perspective summed afresh from the pieces on the board.
void nnue_refresh(const nnue::Network& net, NnueAccumulator& acc, const Position& pos, Color view);
// After a king of colour c moved: its perspective refreshed if its king key
// changed (the updates made on the way used the old rows, and are replaced).
void nnue_king_moved(const nnue::Network& net, NnueAccumulator& acc, const Position& pos, Color c);

// Centipawns from the side to move's point of view.
int nnue_output(const nnue::Network& net, const NnueAccumulator& acc, const Position& pos);
// The same by plain loops (tests compare the SIMD paths with it).
int nnue_output_scalar(const nnue::Network& net, const NnueAccumulator& acc, const Position& pos);
// From the position's own accumulator when it keeps one for `net`, else
// summed afresh.
int nnue_evaluate(const nnue::Network& net, const Position& pos);

}  // KIBITZ_NAMESPACE(chess)
