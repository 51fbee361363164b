// Board constants and the occupancy-free tables: edge masks for the four
// diagonal steps, single steps and jumps per square, empty-board rays, ranks.
// All computed at compile time.
#pragma once

#include <bit>

#include "common/bits.h"
#include "draughts/types.h"

KIBITZ_NAMESPACE(draughts) {

using bits::lsb;
using bits::more_than_one;
using bits::pop_lsb;

// Population count. Without POPCNT, std::popcount becomes a call into
// libgcc; counting is on the hot path of perft, so the generic variant
// inlines the usual SWAR sum instead.
template <class T>
constexpr int popcount(T b) {
#if KIBITZ_HAS_PEXT
  return std::popcount(b);
#else
  if constexpr (sizeof(T) <= 4) {
    uint32_t x = b;
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    x = (x + (x >> 4)) & 0x0F0F0F0Fu;
    return int((x * 0x01010101u) >> 24);
  } else {
    uint64_t x = b;
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return int((x * 0x0101010101010101ULL) >> 56);
  }
#endif
}

constexpr Bitboard square_bb(Square s) { return Bitboard(1) << s; }

// The four diagonal directions. On the bit numbering a step is a rotate:
// up-left +1, up-right +7, down-right -1, down-left -7 (mod 32).
enum Direction : uint8_t { UpLeft, UpRight, DownRight, DownLeft };
constexpr int kDirections = 4;
constexpr Direction reverse(Direction d) { return Direction(d ^ 2); }
constexpr int kRotate[kDirections] = {1, 7, 31, 25};  // left-rotate amounts
constexpr int kFileStep[kDirections] = {-1, 1, 1, -1};
constexpr int kRankStep[kDirections] = {1, 1, -1, -1};

namespace detail {

constexpr Bitboard rank_mask(int rank) {
  Bitboard b = 0;
  for (int file = rank & 1; file < 8; file += 2) b |= Bitboard(1) << square_index(file, rank);
  return b;
}

// Squares from which `steps` steps in direction d stay on the board.
constexpr Bitboard step_mask(Direction d, int steps) {
  Bitboard b = 0;
  for (int s = 0; s < kSquares; ++s) {
    const int f = file_of(Square(s)) + steps * kFileStep[d];
    const int r = rank_of(Square(s)) + steps * kRankStep[d];
    if (is_dark(f, r)) b |= Bitboard(1) << s;
  }
  return b;
}

struct Tables {
  Bitboard rank[8]{};
  Bitboard step_from[kDirections]{};      // squares with a neighbour in direction d
  Bitboard jump_from[kDirections]{};      // squares with a square two steps away in d
  Bitboard jump_over[kSquares]{};         // the neighbours of s that a man on s could jump
  Bitboard ray[kDirections][kSquares]{};  // empty-board ray from s in d, s excluded
  Bitboard diagonal_a[kSquares]{};        // the up-left/down-right diagonal through s
  Bitboard diagonal_b[kSquares]{};        // the up-right/down-left diagonal through s
};

constexpr Tables make_tables() {
  Tables t;
  for (int r = 0; r < 8; ++r) t.rank[r] = rank_mask(r);
  for (int d = 0; d < kDirections; ++d) {
    t.step_from[d] = step_mask(Direction(d), 1);
    t.jump_from[d] = step_mask(Direction(d), 2);
    for (int s = 0; s < kSquares; ++s) {
      int f = file_of(Square(s)) + kFileStep[d], r = rank_of(Square(s)) + kRankStep[d];
      for (; is_dark(f, r); f += kFileStep[d], r += kRankStep[d])
        t.ray[d][s] |= Bitboard(1) << square_index(f, r);
    }
  }
  for (int s = 0; s < kSquares; ++s) {
    for (int d = 0; d < kDirections; ++d) {
      const int f = file_of(Square(s)), r = rank_of(Square(s));
      if (is_dark(f + 2 * kFileStep[d], r + 2 * kRankStep[d]))
        t.jump_over[s] |= Bitboard(1) << square_index(f + kFileStep[d], r + kRankStep[d]);
    }
    t.diagonal_a[s] = t.ray[UpLeft][s] | t.ray[DownRight][s] | (Bitboard(1) << s);
    t.diagonal_b[s] = t.ray[UpRight][s] | t.ray[DownLeft][s] | (Bitboard(1) << s);
  }
  return t;
}

inline constexpr Tables kTables = make_tables();

}  // namespace detail

constexpr Bitboard kAllSquares = ~Bitboard(0);
constexpr Bitboard rank_bb(int rank) { return detail::kTables.rank[rank]; }
// Rank as seen from c's side: 0 = own back rank, 7 = promotion rank.
constexpr Bitboard relative_rank_bb(Color c, int rank) {
  return rank_bb(c == White ? rank : 7 - rank);
}
constexpr Bitboard promotion_rank_bb(Color c) { return relative_rank_bb(c, 7); }
// The long diagonal a1-h8 ("bolshak", the main road).
constexpr Bitboard kLongDiagonal = detail::kTables.diagonal_b[A1];

constexpr Bitboard step_from(Direction d) { return detail::kTables.step_from[d]; }
constexpr Bitboard jump_from(Direction d) { return detail::kTables.jump_from[d]; }
constexpr Bitboard jump_over(Square s) { return detail::kTables.jump_over[s]; }
constexpr Bitboard ray_bb(Direction d, Square s) { return detail::kTables.ray[d][s]; }
constexpr Bitboard diagonal_a_bb(Square s) { return detail::kTables.diagonal_a[s]; }
constexpr Bitboard diagonal_b_bb(Square s) { return detail::kTables.diagonal_b[s]; }

// Moves every square of b `n` steps in direction D. Squares that would leave
// the board wrap around: callers mask with step_from / jump_from first.
template <Direction D>
constexpr Bitboard shift(Bitboard b, int n = 1) {
  return std::rotl(b, (kRotate[D] * n) & 31);
}
template <Direction D>
constexpr Bitboard step(Bitboard b) {
  return shift<D>(b & step_from(D));
}

// A white man steps up (up-left, up-right), a black man down.
constexpr Direction forward_left(Color c) { return c == White ? UpLeft : DownRight; }
constexpr Direction forward_right(Color c) { return c == White ? UpRight : DownLeft; }

}  // KIBITZ_NAMESPACE(draughts)
