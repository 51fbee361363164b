// Zobrist keys: one random 64-bit number per (piece, square), per castling-
// rights state, per en-passant file and for the side to move, drawn at compile
// time from a fixed-seed xorshift64*, so keys (and search node counts) are the
// same on every build.
#pragma once

#include "chess/types.h"
#include "common/prng.h"

KIBITZ_NAMESPACE(chess) {

struct ZobristKeys {
  Key piece_square[kPieces][kSquares]{};
  Key castling[kCastlingStates]{};
  Key ep_file[8]{};
  Key side = 0;
};

constexpr ZobristKeys make_zobrist_keys() {
  ZobristKeys z;
  Prng rng(0x4B69626974ULL);  // "Kibit"
  for (Piece p : {WPawn, WKnight, WBishop, WRook, WQueen, WKing, BPawn, BKnight, BBishop, BRook,
                  BQueen, BKing})
    for (int s = 0; s < kSquares; ++s) z.piece_square[p][s] = rng.next();
  // Each right has its own number and a state's key is the XOR of its rights,
  // so updating the key for lost rights is one XOR of two table entries.
  Key right_keys[4] = {rng.next(), rng.next(), rng.next(), rng.next()};
  for (int cr = 0; cr < kCastlingStates; ++cr)
    for (int i = 0; i < 4; ++i)
      if (cr & (1 << i)) z.castling[cr] ^= right_keys[i];
  for (Key& k : z.ep_file) k = rng.next();
  z.side = rng.next();
  return z;
}

inline constexpr ZobristKeys kZobrist = make_zobrist_keys();

}  // KIBITZ_NAMESPACE(chess)
