// Perft: the number of leaf nodes of the legal move tree to a fixed depth.
// The last ply is bulk-counted (MoveCounter); every other ply is generated,
// made and unmade. No hash table: every node is visited.
#pragma once

#include <vector>

#include "chess/movegen.h"

KIBITZ_NAMESPACE(chess) {

namespace detail {

template <Color Us>
uint64_t perft(Position& pos, int depth) {
  MoveCounter counter;
  if (depth <= 1) {
    detail::generate<Us, GenType::Legal>(pos, counter);
    return counter.count;
  }
  // Holds every position's moves: see kMaxMoves (movegen.h).
  Move moves[kMaxMoves];
  MoveWriter w{moves};
  detail::generate<Us, GenType::Legal>(pos, w);
  uint64_t nodes = 0;
  for (const Move* m = moves; m != w.cur; ++m) {
    pos.do_move(*m);
    nodes += perft<~Us>(pos, depth - 1);
    pos.undo_move(*m);
  }
  return nodes;
}

}  // namespace detail

inline uint64_t perft(Position& pos, int depth) {
  if (depth <= 0) return 1;
  return pos.side_to_move() == White ? detail::perft<White>(pos, depth)
                                     : detail::perft<Black>(pos, depth);
}

struct DivideEntry {
  Move move;
  uint64_t nodes;
};

inline std::vector<DivideEntry> perft_divide(Position& pos, int depth) {
  std::vector<DivideEntry> out;
  for (Move m : MoveList(pos)) {
    pos.do_move(m);
    out.push_back({m, perft(pos, depth - 1)});
    pos.undo_move(m);
  }
  return out;
}

}  // KIBITZ_NAMESPACE(chess)
