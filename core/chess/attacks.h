// Sliding-piece attacks by table lookup on the relevant occupancy: by magic
// multiplication in the generic variant, by PEXT in the bmi2 variant. Each
// square's entry names its slice of one shared table ("fancy" layout).
#pragma once

#include "chess/bitboard.h"

KIBITZ_NAMESPACE(chess) {

struct SliderEntry {
  Bitboard mask;   // relevant occupancy: the rays without their last square
  Bitboard magic;  // unused by the PEXT variant
  const Bitboard* attacks;
  unsigned shift;

  Bitboard index(Bitboard occupied) const {
#if KIBITZ_HAS_PEXT
    return bits::pext(occupied, mask);
#else
    return ((occupied & mask) * magic) >> shift;
#endif
  }
  Bitboard lookup(Bitboard occupied) const { return attacks[index(occupied)]; }
};

namespace detail {
extern SliderEntry rook_entries[kSquares];
extern SliderEntry bishop_entries[kSquares];
// Squares whose built-in magic failed and had to be searched for (tests
// expect 0).
extern int magic_searches;
}  // namespace detail

// Fills the slider tables; idempotent and thread-safe. The generic variant
// runs it during static initialisation; the bmi2 variant must not run any of
// its code before the CPU check, so core/engine calls it after the check.
void init_attacks();

inline Bitboard rook_attacks(Square s, Bitboard occupied) {
  return detail::rook_entries[s].lookup(occupied);
}
inline Bitboard bishop_attacks(Square s, Bitboard occupied) {
  return detail::bishop_entries[s].lookup(occupied);
}
inline Bitboard queen_attacks(Square s, Bitboard occupied) {
  return rook_attacks(s, occupied) | bishop_attacks(s, occupied);
}

template <PieceType Pt>
inline Bitboard attacks_bb(Square s, Bitboard occupied) {
  if constexpr (Pt == Knight) return knight_attacks(s);
  if constexpr (Pt == Bishop) return bishop_attacks(s, occupied);
  if constexpr (Pt == Rook) return rook_attacks(s, occupied);
  if constexpr (Pt == Queen) return queen_attacks(s, occupied);
  if constexpr (Pt == King) return king_attacks(s);
  return 0;
}

inline Bitboard attacks_bb(PieceType pt, Square s, Bitboard occupied) {
  switch (pt) {
    case Knight:
      return knight_attacks(s);
    case Bishop:
      return bishop_attacks(s, occupied);
    case Rook:
      return rook_attacks(s, occupied);
    case Queen:
      return queen_attacks(s, occupied);
    case King:
      return king_attacks(s);
    default:
      return 0;
  }
}

}  // KIBITZ_NAMESPACE(chess)
