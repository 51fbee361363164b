// Legal move generation. Capture is mandatory: when any piece can capture,
// only captures are generated (every complete sequence, free choice, no
// majority rule); otherwise men step forward and kings fly.
//
// Men's steps and the test for pending captures are bit-parallel (shifts
// and rotates of whole boards); kings use the diagonal lookups of
// attacks.h; capture sequences are searched piece by piece (captures.h).
// count_legal_moves() counts quiet moves by popcount without listing them,
// which perft uses at its last ply; captures are always listed, because
// duplicate paths must be merged before they are counted.
#pragma once

#include "draughts/captures.h"
#include "draughts/position.h"

KIBITZ_NAMESPACE(draughts) {

namespace detail {

// Squares of `from` pieces that can jump in direction D: an enemy next to
// them and an empty square behind it.
template <Direction D>
constexpr Bitboard jumpers(Bitboard from, Bitboard enemy, Bitboard empty) {
  constexpr Direction Back = reverse(D);
  return from & jump_from(D) & shift<Back>(enemy & shift<Back>(empty));
}

template <Direction D>
inline bool king_captures_along(Square s, Bitboard line, Bitboard enemy, Bitboard empty) {
  const Bitboard target = line & ray_bb(D, s) & enemy;
  return shift<D>(target & step_from(D)) & empty;
}

// Whether the king on s can capture.
inline bool king_can_capture(Square s, Bitboard occupied, Bitboard enemy, Bitboard empty) {
  const Bitboard a = diagonal_a_attacks(s, occupied), b = diagonal_b_attacks(s, occupied);
  return king_captures_along<UpLeft>(s, a, enemy, empty) ||
         king_captures_along<DownRight>(s, a, enemy, empty) ||
         king_captures_along<UpRight>(s, b, enemy, empty) ||
         king_captures_along<DownLeft>(s, b, enemy, empty);
}

// The pieces of the side to move that can capture.
struct Capturers {
  Bitboard men;
  Bitboard kings;
};

template <Color Us>
inline Capturers capturers(const Position& pos) {
  const Bitboard enemy = pos.pieces(~Us), empty = ~pos.pieces();
  const Bitboard men = pos.men(Us);
  Capturers c{jumpers<UpLeft>(men, enemy, empty) | jumpers<UpRight>(men, enemy, empty) |
                  jumpers<DownRight>(men, enemy, empty) | jumpers<DownLeft>(men, enemy, empty),
              0};
  for (Bitboard k = pos.kings(Us); k;) {
    const Square s = Square(pop_lsb(k));
    if (king_can_capture(s, ~empty, enemy, empty)) c.kings |= square_bb(s);
  }
  return c;
}

// Writes every capture of the pieces in c to list (at most up to end).
template <Color Us>
inline Move* generate_captures(const Position& pos, Capturers c, Move* list, Move* end) {
  CaptureSearch<Us> search{pos.pieces(~Us), 0, A1, list, list, end};
  for (Bitboard b = c.men; b;) {
    const Square s = Square(pop_lsb(b));
    search.from = s;
    search.empty = ~pos.pieces() | square_bb(s);
    search.first = search.cur;
    search.man(s, 0);
  }
  for (Bitboard b = c.kings; b;) {
    const Square s = Square(pop_lsb(b));
    search.from = s;
    search.empty = ~pos.pieces() | square_bb(s);
    search.first = search.cur;
    search.king(s);
  }
  return search.cur;
}

// Quiet steps in direction D onto `targets`: a step adds kRotate[D] (mod 32)
// to the square number.
template <Direction D>
inline Move* add_steps(Bitboard targets, Move* list) {
  while (targets) {
    const int to = pop_lsb(targets);
    *list++ = Move(Square((to - kRotate[D]) & 31), Square(to));
  }
  return list;
}

template <Color Us>
inline Move* generate(const Position& pos, Move* list) {
  const Capturers c = capturers<Us>(pos);
  if (c.men | c.kings) return generate_captures<Us>(pos, c, list, list + kMaxMoves);

  const Bitboard occupied = pos.pieces(), empty = ~occupied, men = pos.men(Us);
  constexpr Direction L = forward_left(Us), R = forward_right(Us);
  list = add_steps<L>(shift<L>(men & step_from(L)) & empty, list);
  list = add_steps<R>(shift<R>(men & step_from(R)) & empty, list);
  for (Bitboard k = pos.kings(Us); k;) {
    const Square s = Square(pop_lsb(k));
    for (Bitboard t = king_attacks(s, occupied) & empty; t;) *list++ = Move(s, Square(pop_lsb(t)));
  }
  return list;
}

template <Color Us>
inline uint64_t count_legal_moves(const Position& pos) {
  const Capturers c = capturers<Us>(pos);
  if (c.men | c.kings) {
    Move moves[kMaxMoves];
    return uint64_t(generate_captures<Us>(pos, c, moves, moves + kMaxMoves) - moves);
  }
  const Bitboard occupied = pos.pieces(), empty = ~occupied, men = pos.men(Us);
  constexpr Direction L = forward_left(Us), R = forward_right(Us);
  int n = popcount(shift<L>(men & step_from(L)) & empty) +
          popcount(shift<R>(men & step_from(R)) & empty);
  for (Bitboard k = pos.kings(Us); k;)
    n += popcount(king_attacks(Square(pop_lsb(k)), occupied) & empty);
  return uint64_t(n);
}

}  // namespace detail

// Writes the legal moves (each once) to `list`, which must hold kMaxMoves,
// and returns the end pointer.
inline Move* generate(const Position& pos, Move* list) {
  return pos.side_to_move() == White ? detail::generate<White>(pos, list)
                                     : detail::generate<Black>(pos, list);
}

// Number of legal moves, without listing the quiet ones.
inline uint64_t count_legal_moves(const Position& pos) {
  return pos.side_to_move() == White ? detail::count_legal_moves<White>(pos)
                                     : detail::count_legal_moves<Black>(pos);
}

// Whether the side to move must capture (the position is not quiet).
inline bool has_capture(const Position& pos) {
  const detail::Capturers c =
      pos.side_to_move() == White ? detail::capturers<White>(pos) : detail::capturers<Black>(pos);
  return (c.men | c.kings) != 0;
}

class MoveList {
 public:
  explicit MoveList(const Position& pos) : last_(generate(pos, moves_)) {}
  const Move* begin() const { return moves_; }
  const Move* end() const { return last_; }
  int size() const { return int(last_ - moves_); }
  bool empty() const { return last_ == moves_; }
  bool contains(Move m) const {
    for (Move x : *this)
      if (x == m) return true;
    return false;
  }

 private:
  Move moves_[kMaxMoves];
  Move* last_;
};

}  // KIBITZ_NAMESPACE(draughts)
