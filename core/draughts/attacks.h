// Flying-king moves by table lookup on the occupancy of one diagonal.
//
// Diagonals parallel to g1-a7 ("A" diagonals: up-left/down-right) are
// contiguous runs of bits, so their occupancy is one shift and a mask. The
// a1-h8 direction ("B" diagonals) has its squares 7 bits apart (mod 32): the
// occupancy is gathered by PEXT in the bmi2 variant and by a magic multiply
// in the generic one. Each square owns a slice of one table, indexed by the
// occupancy of its whole diagonal (its own bit included, so the index needs
// no per-square mask), holding the squares a king on it sees in both
// directions up to and including the first piece. The tables are built at
// compile time; nothing runs at start-up.
#pragma once

#include <array>
#include <cstddef>

#include "draughts/bitboard.h"

KIBITZ_NAMESPACE(draughts) {

namespace detail {

// The seven B diagonals, by their lowest-rank square, and a magic for each:
// ((occ & mask) * magic) >> (64 - length) maps the 2^length subsets of the
// diagonal one-to-one onto [0, 2^length). Found once by random trial (sparse
// 64-bit numbers); verify_b_magics() checks them at compile time.
struct BMagic {
  Square origin;
  uint64_t magic;
};
inline constexpr BMagic kBMagics[7] = {
    {A1, 0x10100500404001c4ULL}, {C1, 0x0202010400004841ULL}, {E1, 0x401118080b008894ULL},
    {G1, 0x0000202000000000ULL}, {A3, 0x1410401042002384ULL}, {A5, 0x0101808044010900ULL},
    {A7, 0x20021a4121800101ULL},
};

struct LineEntry {
  Bitboard mask;    // the diagonal through the square
  uint64_t magic;   // B diagonals, generic variant only
  uint16_t offset;  // the square's slice of kLineTable
  uint8_t shift;    // A: lowest bit of the run; B: 64 - length
  uint8_t length;

  constexpr unsigned index_a(Bitboard occupied) const {
    return (occupied >> shift) & ((1u << length) - 1);
  }
  constexpr unsigned index_b_soft(Bitboard occupied) const {
#if KIBITZ_HAS_PEXT
    return unsigned(bits::pext_soft(occupied, mask));
#else
    return unsigned((uint64_t(occupied & mask) * magic) >> shift);
#endif
  }
};

// Size of the shared table: the sum over squares of 2^length of both of
// their diagonals.
constexpr int line_table_size() {
  int n = 0;
  for (int s = 0; s < kSquares; ++s)
    n += (1 << popcount(kTables.diagonal_a[s])) + (1 << popcount(kTables.diagonal_b[s]));
  return n;
}
constexpr int kLineTableSize = line_table_size();

struct LineTables {
  LineEntry a[kSquares]{};
  LineEntry b[kSquares]{};
  std::array<Bitboard, kLineTableSize> attacks{};
};

// Squares a king on s sees in directions d1 and d2 with the given occupancy.
constexpr Bitboard slide(int s, Bitboard occupied, Direction d1, Direction d2) {
  Bitboard att = 0;
  for (Direction d : {d1, d2}) {
    int f = file_of(Square(s)) + kFileStep[d], r = rank_of(Square(s)) + kRankStep[d];
    for (; is_dark(f, r); f += kFileStep[d], r += kRankStep[d]) {
      const Bitboard b = Bitboard(1) << square_index(f, r);
      att |= b;
      if (occupied & b) break;
    }
  }
  return att;
}

constexpr LineTables make_line_tables() {
  LineTables t;
  int next = 0;
  for (int s = 0; s < kSquares; ++s) {
    // A diagonal: a contiguous run.
    LineEntry& a = t.a[s];
    a.mask = kTables.diagonal_a[s];
    a.shift = uint8_t(lsb(a.mask));
    a.length = uint8_t(popcount(a.mask));
    a.offset = uint16_t(next);
    Bitboard subset = 0;
    do {
      t.attacks[size_t(next) + a.index_a(subset)] = slide(s, subset, UpLeft, DownRight);
      subset = (subset - a.mask) & a.mask;
    } while (subset);
    next += 1 << a.length;

    // B diagonal: magic or PEXT index.
    LineEntry& b = t.b[s];
    b.mask = kTables.diagonal_b[s];
    b.length = uint8_t(popcount(b.mask));
    for (const BMagic& m : kBMagics)
      if (kTables.diagonal_b[m.origin] == b.mask) b.magic = m.magic;
    b.shift = uint8_t(64 - b.length);
    b.offset = uint16_t(next);
    subset = 0;
    do {
      t.attacks[size_t(next) + b.index_b_soft(subset)] = slide(s, subset, UpRight, DownLeft);
      subset = (subset - b.mask) & b.mask;
    } while (subset);
    next += 1 << b.length;
  }
  return t;
}

inline constexpr LineTables kLines = make_line_tables();

// The A diagonals must be contiguous runs and every B magic one-to-one.
constexpr bool verify_line_tables() {
  for (int s = 0; s < kSquares; ++s) {
    const LineEntry& a = kLines.a[s];
    if (a.mask != ((Bitboard(1) << a.length) - 1) << a.shift) return false;
  }
  for (const BMagic& m : kBMagics) {
    const Bitboard mask = kTables.diagonal_b[m.origin];
    const int length = popcount(mask);
    bool seen[256] = {};
    Bitboard subset = 0;
    do {
      const auto idx = (uint64_t(subset) * m.magic) >> (64 - length);
      if (seen[idx]) return false;
      seen[idx] = true;
      subset = (subset - mask) & mask;
    } while (subset);
  }
  return true;
}
static_assert(verify_line_tables(), "an A diagonal is not a bit run or a B magic collides");

}  // namespace detail

// Squares a king on s sees along its up-left/down-right diagonal, up to and
// including the first piece each way.
inline Bitboard diagonal_a_attacks(Square s, Bitboard occupied) {
  const detail::LineEntry& e = detail::kLines.a[s];
  return detail::kLines.attacks[e.offset + e.index_a(occupied)];
}

// The same along the up-right/down-left diagonal.
inline Bitboard diagonal_b_attacks(Square s, Bitboard occupied) {
  const detail::LineEntry& e = detail::kLines.b[s];
#if KIBITZ_HAS_PEXT
  const unsigned idx = bits::pext(occupied, e.mask);
#else
  const unsigned idx = unsigned((uint64_t(occupied & e.mask) * e.magic) >> e.shift);
#endif
  return detail::kLines.attacks[e.offset + idx];
}

inline Bitboard king_attacks(Square s, Bitboard occupied) {
  return diagonal_a_attacks(s, occupied) | diagonal_b_attacks(s, occupied);
}

// Along the diagonal of direction D.
template <Direction D>
inline Bitboard diagonal_attacks(Square s, Bitboard occupied) {
  if constexpr (D == UpLeft || D == DownRight)
    return diagonal_a_attacks(s, occupied);
  else
    return diagonal_b_attacks(s, occupied);
}

}  // KIBITZ_NAMESPACE(draughts)
