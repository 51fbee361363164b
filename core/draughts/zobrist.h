// Zobrist keys: one random 64-bit number per (colour, man or king, square)
// and one for Black to move, drawn at compile time from a fixed-seed
// xorshift64*, so keys (and search node counts) are the same on every build.
// The draw-rule counters are not part of the key.
#pragma once

#include "common/prng.h"
#include "draughts/types.h"

KIBITZ_NAMESPACE(draughts) {

struct ZobristKeys {
  Key piece[kColors][2][kSquares]{};  // [colour][0 = man, 1 = king][square]
  Key side = 0;                       // Black to move
};

constexpr ZobristKeys make_zobrist_keys() {
  ZobristKeys z;
  Prng rng(0x5368617368ULL);  // "Shash"
  for (int king = 0; king < 2; ++king)
    for (int c = 0; c < kColors; ++c)
      for (int s = 0; s < kSquares; ++s) z.piece[c][king][s] = rng.next();
  z.side = rng.next();
  return z;
}

inline constexpr ZobristKeys kZobrist = make_zobrist_keys();

}  // KIBITZ_NAMESPACE(draughts)
