// Perft: the number of leaf nodes of the legal move tree to a fixed depth,
// counting each unique move (from, to, captured set) once. No hash table:
// every node is visited.
//
// The last ply is counted without making its moves (count_legal_moves:
// quiet moves and simple jumps by popcount, other captures listed with
// duplicate paths merged); every other ply is generated, made and unmade
// with Position::do_move/undo_move.
#pragma once

#include <vector>

#include "draughts/movegen.h"

KIBITZ_NAMESPACE(draughts) {

namespace detail {

template <Color Us>
uint64_t perft(Position& pos, int depth) {
  if (depth <= 1) return count_legal_moves<Us>(pos.board());
  // Holds every position's moves: see kMaxMoves (types.h).
  Move moves[kMaxMoves];
  const Move* last = generate<Us>(pos.board(), moves);
  uint64_t nodes = 0;
  for (const Move* m = moves; m != last; ++m) {
    pos.template do_move<Us>(*m);
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

// Perft under each root move, in generation order; depth >= 1.
inline std::vector<DivideEntry> perft_divide(Position& pos, int depth) {
  std::vector<DivideEntry> out;
  for (Move m : MoveList(pos)) {
    pos.do_move(m);
    out.push_back({m, perft(pos, depth - 1)});
    pos.undo_move(m);
  }
  return out;
}

}  // KIBITZ_NAMESPACE(draughts)
