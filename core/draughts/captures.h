// Capture sequences of one piece, by depth-first search.
//
// While a sequence runs, the captured pieces stay on the board (Turkish
// strike): they block, and `captured` keeps them from being taken twice,
// which also means a piece never turns back 180 degrees. The moving piece's
// start square counts as empty, so a sequence may cross it or end on it.
// A man landing on its last rank is crowned and goes on as a king. A king
// must land where it can capture again if any landing square allows that.
// Paths with the same (from, to, captured) are one move: add() drops the
// duplicates.
#pragma once

#include <cassert>

#include "draughts/attacks.h"

KIBITZ_NAMESPACE(draughts) {

namespace detail {

template <Color Us>
struct CaptureSearch {
  Bitboard enemy;  // the opponent's pieces, captured ones included
  Bitboard empty;  // empty squares, the moving piece's start square included
  Square from;
  Move* first;  // the first move of this piece in the list
  Move* cur;
  Move* end;  // capacity of the list

  void add(Square to, Bitboard captured) {
    for (const Move* m = first; m != cur; ++m)
      if (m->to == to && m->captured == captured) return;
    // No proof bounds the captures of a position (see kMaxMoves in
    // types.h): past the end of the list a move is dropped, never written
    // past it. Debug builds (and the sanitizer and fuzzing builds) stop here
    // instead, so that a position that fills the list is found.
    assert(cur != end && "capture list full: moves would be lost (see kMaxMoves)");
    if (cur != end) [[likely]]
      *cur++ = Move(from, to, captured);
  }

  // A man on s, `captured` taken so far. Returns whether it could capture;
  // the moves it completes are added.
  bool man(Square s, Bitboard captured) {
    if (!(jump_over(s) & enemy & ~captured)) return false;  // the usual end of a sequence
    const bool a = man_step<UpLeft>(s, captured);
    const bool b = man_step<UpRight>(s, captured);
    const bool c = man_step<DownRight>(s, captured);
    const bool d = man_step<DownLeft>(s, captured);
    return a | b | c | d;
  }

  template <Direction D>
  bool man_step(Square s, Bitboard captured) {
    const Bitboard sb = square_bb(s) & jump_from(D);
    const Bitboard over = shift<D>(sb) & enemy & ~captured;
    const Bitboard land = shift<D>(over) & empty;
    if (!land) return false;
    const Square to = Square(lsb(land));
    captured |= over;
    const bool more =
        land & promotion_rank_bb(Us) ? king_on(to, captured, reverse(D)) : man(to, captured);
    if (!more) add(to, captured);
    return true;
  }

  // A king on s; `back` is the direction it came from (blocked by the piece
  // it just captured), skipped.
  bool king_on(Square s, Bitboard captured, Direction back) {
    const Bitboard occupied = ~empty;
    bool any = false;
    if (back != UpLeft) any |= king_step<UpLeft>(s, captured, occupied);
    if (back != UpRight) any |= king_step<UpRight>(s, captured, occupied);
    if (back != DownRight) any |= king_step<DownRight>(s, captured, occupied);
    if (back != DownLeft) any |= king_step<DownLeft>(s, captured, occupied);
    return any;
  }

  // The king start: all four directions.
  bool king(Square s) {
    const Bitboard occupied = ~empty;
    const bool a = king_step<UpLeft>(s, 0, occupied);
    const bool b = king_step<UpRight>(s, 0, occupied);
    const bool c = king_step<DownRight>(s, 0, occupied);
    const bool d = king_step<DownLeft>(s, 0, occupied);
    return a | b | c | d;
  }

  template <Direction D>
  bool king_step(Square s, Bitboard captured, Bitboard occupied) {
    // The first piece along D, if it is an enemy not yet captured...
    const Bitboard target = diagonal_attacks<D>(s, occupied) & ray_bb(D, s) & enemy & ~captured;
    if (!target) return false;
    // ...and the empty squares right behind it.
    const Square t = Square(lsb(target));
    const Bitboard land = diagonal_attacks<D>(t, occupied) & ray_bb(D, t) & empty;
    if (!land) return false;
    captured |= target;
    bool more = false;
    for (Bitboard b = land; b;) more |= king_on(Square(pop_lsb(b)), captured, reverse(D));
    if (!more)
      for (Bitboard b = land; b;) add(Square(pop_lsb(b)), captured);
    return true;
  }
};

}  // namespace detail

}  // KIBITZ_NAMESPACE(draughts)
