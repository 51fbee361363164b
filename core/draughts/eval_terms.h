// The terms of the draughts evaluation, as one struct of arrays: with T =
// Score it holds the weights (eval_weights.h, written by tools/tune), with
// T = float it holds how often each term applies in one position, White's
// count minus Black's (the tuner's trace). Every member is T or an array of
// T, so either struct can be read as a flat array of T.
//
// Squares "from the owner's side" are White's squares for White's pieces and
// the squares turned half a turn (a1 <-> h8) for Black's (relative_square()).
#pragma once

#include <array>
#include <cstddef>

#include "common/tapered_score.h"
#include "draughts/types.h"

KIBITZ_NAMESPACE(draughts) {

using eval::Score;

template <class T>
struct EvalTerms {
  T material[2];         // a man, a king
  T man_psq[kSquares];   // by square from the owner's side
  T king_psq[kSquares];  // by square from the owner's side
  T man_mobility;        // per free square a man can step to
  T king_mobility;       // per empty square a king sees
  T back_guard[4];       // a man on a1, c1, e1, g1 (owner's side) while they have men, no king
  T runaway7;            // per free step to the last rank from the seventh
  T runaway6;            // per free two-step path to the last rank from the sixth
  T backed_man;          // a man whose two squares behind are own pieces or off the board
  T flank_imbalance;     // |men on files a-d - men on files e-h|
  T threatened;          // pieces of the side to move that an enemy man can take
  T first_king;          // a king against none
  T trade_man;           // man difference times (24 - pieces on the board) / 48
  T trade_king;          // king difference times (24 - pieces on the board) / 48
  T tempo;               // the side to move
};

constexpr int kEvalTermCount = eval::term_count<EvalTerms>();

using EvalWeights = EvalTerms<Score>;
using EvalTrace = EvalTerms<float>;

namespace detail {
constexpr auto kRotated = [] {
  std::array<Square, kSquares> t{};
  for (int s = 0; s < kSquares; ++s)
    t[std::size_t(s)] = make_square(7 - file_of(Square(s)), 7 - rank_of(Square(s)));
  return t;
}();
}  // namespace detail

// The square turned half a turn: a1 <-> h8, c1 <-> f8 (a table: the
// evaluation asks for it for every black piece).
constexpr Square rotate_square(Square s) { return detail::kRotated[s]; }
constexpr Square relative_square(Color c, Square s) { return c == White ? s : rotate_square(s); }

}  // KIBITZ_NAMESPACE(draughts)
