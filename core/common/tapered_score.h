// A middlegame and an endgame value, added up separately and blended by the
// game phase: the weights of the chess and the draughts evaluations.
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

}  // KIBITZ_NAMESPACE(eval)
