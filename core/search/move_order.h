// Move ordering's picking and sorting: a node's moves, scored, come out best
// first, the first few by selection and the rest sorted once.
#pragma once

#include <algorithm>
#include <cassert>
#include <utility>

#include "common/isa.h"

KIBITZ_NAMESPACE(search) {

namespace detail {

// One step of a selection sort: brings the best-scored of moves[picked..count)
// to `picked` (the first of equal scores wins) and returns it.
template <class Move>
Move pick_best(Move* moves, int* scores, int picked, int count) {
  int b = picked, best = scores[picked];
  for (int i = picked + 1; i < count; ++i) {
    // Both kept in registers, chosen without a branch (conditional moves).
    const bool better = scores[i] > best;
    b = better ? i : b;
    best = better ? scores[i] : best;
  }
  std::swap(moves[picked], moves[b]);
  std::swap(scores[picked], scores[b]);
  return moves[picked];
}

// Brings moves[at] to `picked` as pick_best does when it is the best.
template <class Move>
Move pick_at(Move* moves, int* scores, int picked, int at) {
  std::swap(moves[picked], moves[at]);
  std::swap(scores[picked], scores[at]);
  return moves[picked];
}

// Moves picked one by one before the rest are sorted (chess).
constexpr int kPickedBeforeSort = 3;

// Sorts moves[from..count) once by score, best first, equal scores in their
// present order (the rest of a node's moves after the first few picks: a
// selection step per move costs a pass over all of them, which at an all-node
// made picking alone about a sixth of the search's time). By rank: each move
// goes to the number of moves that come before it, counted without a branch
// (loops the compiler vectorises), where a comparison sort of these 20-30
// moves mispredicted about every other comparison.
template <class Move, int kMax>
void sort_rest(Move* moves, int* scores, int from, int count) {
  const int n = count - from;
  assert(count <= kMax);
  Move copy[kMax];
  int copy_scores[kMax];
  std::copy(moves + from, moves + count, copy);
  std::copy(scores + from, scores + count, copy_scores);
  for (int i = 0; i < n; ++i) {
    const int s = copy_scores[i];
    int rank = 0;
    for (int j = 0; j < i; ++j) rank += copy_scores[j] >= s;
    for (int j = i + 1; j < n; ++j) rank += copy_scores[j] > s;
    moves[from + rank] = copy[i];
    scores[from + rank] = s;
  }
}

}  // namespace detail

}  // KIBITZ_NAMESPACE(search)
