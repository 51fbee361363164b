// Zobrist keys: one random 64-bit number per (piece, square), per castling
// right (by colour and the file of its rook, so that Chess960 rights with
// rooks on other files key differently), per en-passant file, for the side to
// move and for Chess960, drawn at compile time from a fixed-seed xorshift64*,
// so keys (and search node counts) are the same on every build. The numbers
// added for Chess960 are drawn after the others: a standard position keys as
// it did before Chess960 was added.
#pragma once

#include "chess/types.h"
#include "common/prng.h"

KIBITZ_NAMESPACE(chess) {

struct ZobristKeys {
  Key piece_square[kPieces][kSquares]{};
  // A right's key is that of its rook's colour and file; a position's
  // castling key is the XOR of its rights' keys (Position::castling_key).
  // A rook of an h-file right stands right of its king, of an a-file right
  // left of it, so the file tells the side too.
  Key castling_rook[kColors][8]{};
  Key ep_file[8]{};
  Key side = 0;
  // XORed into the key of every Chess960 position: a Chess960 position and a
  // standard one with the same FEN write castling differently (e1h1, e1g1)
  // and must not share table entries.
  Key chess960 = 0;
};

constexpr ZobristKeys make_zobrist_keys() {
  ZobristKeys z;
  Prng rng(0x4B69626974ULL);  // "Kibit"
  for (Piece p : {WPawn, WKnight, WBishop, WRook, WQueen, WKing, BPawn, BKnight, BBishop, BRook,
                  BQueen, BKing})
    for (int s = 0; s < kSquares; ++s) z.piece_square[p][s] = rng.next();
  // The standard rights (h and a files) first, in the order they always had.
  z.castling_rook[White][7] = rng.next();
  z.castling_rook[White][0] = rng.next();
  z.castling_rook[Black][7] = rng.next();
  z.castling_rook[Black][0] = rng.next();
  for (Key& k : z.ep_file) k = rng.next();
  z.side = rng.next();
  for (int c = 0; c < kColors; ++c)
    for (int f = 1; f < 7; ++f) z.castling_rook[c][f] = rng.next();
  z.chess960 = rng.next();
  return z;
}

inline constexpr ZobristKeys kZobrist = make_zobrist_keys();

}  // KIBITZ_NAMESPACE(chess)
