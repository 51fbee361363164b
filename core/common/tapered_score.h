// A middlegame and an endgame value, added up separately and blended by the
// game phase: the weights of the chess and the draughts evaluations, and
// what both evaluations share about their terms.
#pragma once

#include "common/isa.h"

KIBITZ_NAMESPACE(eval) {

struct Score {
  int mg = 0, eg = 0;
  constexpr Score() = default;
  constexpr Score(int m, int e) : mg(m), eg(e) {}
  constexpr Score& operator+=(Score o) { return mg += o.mg, eg += o.eg, *this; }
  constexpr Score& operator-=(Score o) { return mg -= o.mg, eg -= o.eg, *this; }
  friend constexpr Score operator+(Score a, Score b) { return a += b; }
  friend constexpr Score operator-(Score a, Score b) { return a -= b; }
  friend constexpr Score operator*(Score a, int k) { return {a.mg * k, a.eg * k}; }
  friend constexpr Score operator/(Score a, int k) { return {a.mg / k, a.eg / k}; }
};

// An evaluation's terms are one struct template of T (chess/eval_terms.h,
// draughts/eval_terms.h): with T = Score the weights, with T = float the
// tuner's trace. Both read as flat arrays of T: this is their length, checked
// to be the same either way.
template <template <class> class Terms>
constexpr int term_count() {
  constexpr int n = int(sizeof(Terms<float>) / sizeof(float));
  static_assert(sizeof(Terms<float>) == n * sizeof(float));
  static_assert(sizeof(Terms<Score>) == n * sizeof(Score));
  return n;
}

}  // KIBITZ_NAMESPACE(eval)

// In an evaluation of side Us: adds n times the weight W.field to the score
// s and, with a trace (kTrace), n to trace->field, negated for Black. Reads
// `field` twice: it must have no side effects.
#define KIBITZ_EVAL_TERM(field, n)                                               \
  do {                                                                           \
    const int count_ = (n);                                                      \
    s += W.field * count_;                                                       \
    if constexpr (kTrace) trace->field += float(Us == White ? count_ : -count_); \
  } while (0)
