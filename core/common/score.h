// Search scores, bounds and depths: the vocabulary of the games' evaluations,
// the transposition table and the search, so it sits below all three (its
// namespace is still the search's, where every score is read).
#pragma once

#include <cstdint>

#include "common/isa.h"

KIBITZ_NAMESPACE(search) {

using Value = int;
using Depth = int;

constexpr int kMaxPly = 246;

constexpr Value kValueZero = 0;
constexpr Value kValueDraw = 0;
constexpr Value kValueMate = 32000;
constexpr Value kValueInfinite = 32001;
constexpr Value kValueNone = 32002;
// Scores beyond these are mates (chess) or forced wins (draughts) in N plies.
constexpr Value kValueMateInMaxPly = kValueMate - kMaxPly;
constexpr Value kValueMatedInMaxPly = -kValueMateInMaxPly;

// Tablebase wins (chess, Syzygy): below every mate, above every
// evaluation; a win found N plies from the root is kValueTbWin - N.
constexpr Value kValueTbWin = kValueMateInMaxPly - 1;
constexpr Value kValueTbWinInMaxPly = kValueTbWin - kMaxPly;
constexpr Value kValueTbLossInMaxPly = -kValueTbWinInMaxPly;
constexpr Value mate_in(int ply) { return kValueMate - ply; }
constexpr Value mated_in(int ply) { return -kValueMate + ply; }
constexpr bool is_mate_score(Value v) {
  return v >= kValueMateInMaxPly || v <= kValueMatedInMaxPly;
}
constexpr bool is_tb_score(Value v) {
  return !is_mate_score(v) && (v >= kValueTbWinInMaxPly || v <= kValueTbLossInMaxPly);
}

// Plies to mate (positive: the side to move mates) from a mate score.
constexpr int mate_plies(Value v) { return v > 0 ? kValueMate - v : -(kValueMate + v); }

enum Bound : uint8_t { BoundNone = 0, BoundUpper = 1, BoundLower = 2, BoundExact = 3 };

// Depth of quiescence-search entries in the transposition table.
constexpr Depth kDepthQs = 0;
constexpr Depth kDepthNone = -6;

}  // KIBITZ_NAMESPACE(search)
