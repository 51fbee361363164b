// Bitboard constants and the tables that do not depend on occupancy: leaper
// attacks, empty-board slider rays, squares between and lines through two
// squares. All computed at compile time.
#pragma once

#include <array>

#include "chess/types.h"
#include "common/bits.h"

KIBITZ_NAMESPACE(chess) {

using bits::lsb;
using bits::more_than_one;
using bits::pop_lsb;
using bits::popcount;

constexpr Bitboard kFileA = 0x0101010101010101ULL;
constexpr Bitboard kFileH = kFileA << 7;
constexpr Bitboard kRank1 = 0xFFULL;
constexpr Bitboard kRank8 = kRank1 << 56;
constexpr Bitboard kDarkSquares = 0xAA55AA55AA55AA55ULL;

constexpr Bitboard square_bb(Square s) { return Bitboard(1) << s; }
constexpr Bitboard file_bb(int file) { return kFileA << file; }
constexpr Bitboard rank_bb(int rank) { return kRank1 << (8 * rank); }
constexpr Bitboard relative_rank_bb(Color c, int rank) {
  return rank_bb(c == White ? rank : 7 - rank);
}

template <Direction D>
constexpr Bitboard shift(Bitboard b) {
  if constexpr (D == North) return b << 8;
  if constexpr (D == South) return b >> 8;
  if constexpr (D == East) return (b & ~kFileH) << 1;
  if constexpr (D == West) return (b & ~kFileA) >> 1;
  if constexpr (D == NorthEast) return (b & ~kFileH) << 9;
  if constexpr (D == NorthWest) return (b & ~kFileA) << 7;
  if constexpr (D == SouthEast) return (b & ~kFileH) >> 7;
  if constexpr (D == SouthWest) return (b & ~kFileA) >> 9;
  return 0;
}

template <Color C>
constexpr Bitboard pawn_attacks_bb(Bitboard b) {
  return C == White ? shift<NorthWest>(b) | shift<NorthEast>(b)
                    : shift<SouthWest>(b) | shift<SouthEast>(b);
}

namespace detail {

constexpr int distance(int a, int b) {
  const int df = (a & 7) - (b & 7), dr = (a >> 3) - (b >> 3);
  const int af = df < 0 ? -df : df, ar = dr < 0 ? -dr : dr;
  return af > ar ? af : ar;
}

// Steps from s by d; empty when that leaves the board (wraps a file).
constexpr Bitboard safe_step(int s, int d) {
  const int to = s + d;
  return (to >= 0 && to < 64 && distance(s, to) <= 2) ? Bitboard(1) << to : 0;
}

// Ray attacks from s in the given directions, stopping at (and including) the
// first occupied square.
constexpr Bitboard ray_attacks(int s, Bitboard occupied, const int (&dirs)[4]) {
  Bitboard attacks = 0;
  for (int d : dirs) {
    int sq = s;
    while (safe_step(sq, d)) {
      sq += d;
      attacks |= Bitboard(1) << sq;
      if (occupied & (Bitboard(1) << sq)) break;
    }
  }
  return attacks;
}

inline constexpr int kRookDirs[4] = {8, -8, 1, -1};
inline constexpr int kBishopDirs[4] = {9, 7, -7, -9};

struct Tables {
  Bitboard knight[64]{};
  Bitboard king[64]{};
  Bitboard pawn[2][64]{};
  Bitboard rook_pseudo[64]{};
  Bitboard bishop_pseudo[64]{};
  Bitboard between[64][64]{};  // squares strictly between a and b on a line, else 0
  Bitboard line[64][64]{};     // the whole line through a and b, else 0
};

constexpr Tables make_tables() {
  Tables t;
  for (int s = 0; s < 64; ++s) {
    for (int d : {17, 15, 10, 6, -6, -10, -15, -17}) t.knight[s] |= safe_step(s, d);
    for (int d : {9, 8, 7, 1, -1, -7, -8, -9}) t.king[s] |= safe_step(s, d);
    t.pawn[White][s] = safe_step(s, 7) | safe_step(s, 9);
    t.pawn[Black][s] = safe_step(s, -7) | safe_step(s, -9);
    t.rook_pseudo[s] = ray_attacks(s, 0, kRookDirs);
    t.bishop_pseudo[s] = ray_attacks(s, 0, kBishopDirs);
  }
  // Walk each ray from each square once: every square b met on it gets the
  // squares passed so far (between) and the whole line through a and b.
  for (int a = 0; a < 64; ++a) {
    for (const auto* dirs : {&kRookDirs, &kBishopDirs}) {
      for (int d : *dirs) {
        const Bitboard line = ray_attacks(a, 0, {d, d, d, d}) |
                              ray_attacks(a, 0, {-d, -d, -d, -d}) | (Bitboard(1) << a);
        Bitboard passed = 0;
        for (int sq = a; safe_step(sq, d); passed |= Bitboard(1) << sq) {
          sq += d;
          t.line[a][sq] = line;
          t.between[a][sq] = passed;
        }
      }
    }
  }
  return t;
}

inline constexpr Tables kTables = make_tables();

}  // namespace detail

constexpr Bitboard knight_attacks(Square s) { return detail::kTables.knight[s]; }
constexpr Bitboard king_attacks(Square s) { return detail::kTables.king[s]; }
constexpr Bitboard pawn_attacks(Color c, Square s) { return detail::kTables.pawn[c][s]; }
constexpr Bitboard rook_pseudo_attacks(Square s) { return detail::kTables.rook_pseudo[s]; }
constexpr Bitboard bishop_pseudo_attacks(Square s) { return detail::kTables.bishop_pseudo[s]; }
constexpr Bitboard between_bb(Square a, Square b) { return detail::kTables.between[a][b]; }
constexpr Bitboard line_bb(Square a, Square b) { return detail::kTables.line[a][b]; }
constexpr bool aligned(Square a, Square b, Square c) { return line_bb(a, b) & square_bb(c); }

}  // KIBITZ_NAMESPACE(chess)
