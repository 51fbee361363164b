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

#include <cassert>

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

// The kings of Us that can capture.
template <Color Us>
inline Bitboard king_capturers(const Board& b) {
  const Bitboard enemy = b.pieces(~Us), occupied = b.pieces(), empty = ~occupied;
  Bitboard out = 0;
  for (Bitboard k = b.kings_of(Us); k;) {
    const Square s = Square(pop_lsb(k));
    const Bitboard da = diagonal_a_attacks(s, occupied), db = diagonal_b_attacks(s, occupied);
    if (king_captures_along<UpLeft>(s, da, enemy, empty) ||
        king_captures_along<DownRight>(s, da, enemy, empty) ||
        king_captures_along<UpRight>(s, db, enemy, empty) ||
        king_captures_along<DownLeft>(s, db, enemy, empty))
      out |= square_bb(s);
  }
  return out;
}

// The jumps of the men of the side to move. Most are "simple": a single
// jump after which the man can take nothing more and is not crowned. These
// are handled a whole board at a time, by direction (listed from `land`, or
// counted by popcount). The men with any other jump (`searched`) go through
// the capture search, all their jumps together, so that duplicate paths
// meet in one place.
struct MenJumps {
  Bitboard land[kDirections];  // landing squares of simple jumps
  Bitboard searched;
};

// The squares among `land` (reached by jumps in direction D) from which the
// man can jump again: in any direction but back over the piece it took. Its
// start square still counts as occupied, which only matters for a jump
// straight back, so not here.
template <Direction D>
inline Bitboard can_go_on(Bitboard land, Bitboard enemy, Bitboard empty) {
  Bitboard b = 0;
  if constexpr (D != DownRight) b |= jumpers<UpLeft>(land, enemy, empty);
  if constexpr (D != DownLeft) b |= jumpers<UpRight>(land, enemy, empty);
  if constexpr (D != UpLeft) b |= jumpers<DownRight>(land, enemy, empty);
  if constexpr (D != UpRight) b |= jumpers<DownLeft>(land, enemy, empty);
  return b;
}

template <Color Us, Direction D>
inline void sort_jumps(MenJumps& j, Bitboard from, Bitboard enemy, Bitboard empty) {
  const Bitboard land = shift<D>(from, 2);
  j.land[D] = land;
  if (land) {
    const Bitboard hard = land & (can_go_on<D>(land, enemy, empty) | promotion_rank_bb(Us));
    j.searched |= shift<reverse(D)>(hard, 2);
  }
}

// Fills j and returns whether any man can capture.
template <Color Us>
inline bool men_jumps(const Board& b, MenJumps& j) {
  const Bitboard enemy = b.pieces(~Us), empty = ~b.pieces(), men = b.men(Us);
  const Bitboard ul = jumpers<UpLeft>(men, enemy, empty), ur = jumpers<UpRight>(men, enemy, empty);
  const Bitboard dr = jumpers<DownRight>(men, enemy, empty);
  const Bitboard dl = jumpers<DownLeft>(men, enemy, empty);
  if (!(ul | ur | dr | dl)) return false;
  j.searched = 0;
  sort_jumps<Us, UpLeft>(j, ul, enemy, empty);
  sort_jumps<Us, UpRight>(j, ur, enemy, empty);
  sort_jumps<Us, DownRight>(j, dr, enemy, empty);
  sort_jumps<Us, DownLeft>(j, dl, enemy, empty);
  if (j.searched) {
    j.land[UpLeft] &= ~shift<UpLeft>(j.searched, 2);
    j.land[UpRight] &= ~shift<UpRight>(j.searched, 2);
    j.land[DownRight] &= ~shift<DownRight>(j.searched, 2);
    j.land[DownLeft] &= ~shift<DownLeft>(j.searched, 2);
  }
  return true;
}

// Writes the captures of the given men and kings to list, never past end.
template <Color Us>
inline Move* search_captures(const Board& b, Bitboard men, Bitboard kings, Move* list, Move* end) {
  CaptureSearch<Us> search{b.pieces(~Us), 0, A1, list, list, end};
  for (; men; men &= men - 1) {
    const Square s = Square(lsb(men));
    search.from = s;
    search.empty = ~b.pieces() | square_bb(s);
    search.first = search.cur;
    search.man(s, 0);
  }
  for (; kings; kings &= kings - 1) {
    const Square s = Square(lsb(kings));
    search.from = s;
    search.empty = ~b.pieces() | square_bb(s);
    search.first = search.cur;
    search.king(s);
  }
  return search.cur;
}

// One write to a move list that ends at `end`. Simple jumps (at most 4 per
// man, 48) and quiet moves (at most 96) provably fit (see kMaxMoves in
// types.h); the assertion checks it in debug builds.
inline void put(Move*& list, [[maybe_unused]] const Move* end, Move m) {
  assert(list < end && "move list capacity exceeded (see kMaxMoves)");
  *list++ = m;
}

// Simple jumps in direction D onto `land`: a step adds kRotate[D] (mod 32)
// to the square number.
template <Direction D>
inline Move* add_jumps(Bitboard land, Move* list, const Move* end) {
  while (land) {
    const int to = pop_lsb(land);
    put(list, end,
        Move(Square((to - 2 * kRotate[D]) & 31), Square(to),
             Bitboard(1) << ((to - kRotate[D]) & 31)));
  }
  return list;
}

// Quiet steps in direction D onto `targets`.
template <Direction D>
inline Move* add_steps(Bitboard targets, Move* list, const Move* end) {
  while (targets) {
    const int to = pop_lsb(targets);
    put(list, end, Move(Square((to - kRotate[D]) & 31), Square(to)));
  }
  return list;
}

template <Color Us>
inline Move* generate(const Board& b, Move* list) {
  Move* const end = list + kMaxMoves;
  MenJumps j;
  const bool men_capture = men_jumps<Us>(b, j);
  const Bitboard kings = b.kings_of(Us) ? king_capturers<Us>(b) : 0;
  if (men_capture | (kings != 0)) {
    if (men_capture) {
      list = add_jumps<UpLeft>(j.land[UpLeft], list, end);
      list = add_jumps<UpRight>(j.land[UpRight], list, end);
      list = add_jumps<DownRight>(j.land[DownRight], list, end);
      list = add_jumps<DownLeft>(j.land[DownLeft], list, end);
    }
    const Bitboard men = men_capture ? j.searched : 0;
    return men | kings ? search_captures<Us>(b, men, kings, list, end) : list;
  }
  const Bitboard occupied = b.pieces(), empty = ~occupied, men = b.men(Us);
  constexpr Direction L = forward_left(Us), R = forward_right(Us);
  list = add_steps<L>(shift<L>(men & step_from(L)) & empty, list, end);
  list = add_steps<R>(shift<R>(men & step_from(R)) & empty, list, end);
  for (Bitboard k = b.kings_of(Us); k;) {
    const Square s = Square(pop_lsb(k));
    for (Bitboard t = king_attacks(s, occupied) & empty; t;)
      put(list, end, Move(s, Square(pop_lsb(t))));
  }
  return list;
}

// The number of captures of the given men and kings. Kept out of line, so
// that count_legal_moves() needs no move list of its own and stays cheap to
// call in the usual case.
template <Color Us>
[[gnu::noinline]] int count_searched_captures(const Board& b, Bitboard men, Bitboard kings) {
  Move moves[kMaxMoves];
  return int(search_captures<Us>(b, men, kings, moves, moves + kMaxMoves) - moves);
}

// popcount(a) + popcount(b) in one 64-bit count (one instruction with
// POPCNT, half the work without).
constexpr int popcount2(Bitboard a, Bitboard b) { return popcount(a | uint64_t(b) << 32); }

template <Color Us>
inline uint64_t count_legal_moves(const Board& b) {
  MenJumps j;
  const bool men_capture = men_jumps<Us>(b, j);
  const Bitboard kings = b.kings_of(Us) ? king_capturers<Us>(b) : 0;
  if (men_capture | (kings != 0)) {
    int n = 0;
    if (men_capture) n = popcount2(j.land[0], j.land[1]) + popcount2(j.land[2], j.land[3]);
    if (const Bitboard men = men_capture ? j.searched : 0; men | kings)
      n += count_searched_captures<Us>(b, men, kings);
    return uint64_t(n);
  }
  const Bitboard occupied = b.pieces(), empty = ~occupied, men = b.men(Us);
  constexpr Direction L = forward_left(Us), R = forward_right(Us);
  int n = popcount2(shift<L>(men & step_from(L)) & empty, shift<R>(men & step_from(R)) & empty);
  for (Bitboard k = b.kings_of(Us); k;)
    n += popcount(king_attacks(Square(pop_lsb(k)), occupied) & empty);
  return uint64_t(n);
}

template <Color Us>
inline bool has_capture(const Board& b) {
  const Bitboard enemy = b.pieces(~Us), empty = ~b.pieces(), men = b.men(Us);
  return jumpers<UpLeft>(men, enemy, empty) | jumpers<UpRight>(men, enemy, empty) |
             jumpers<DownRight>(men, enemy, empty) | jumpers<DownLeft>(men, enemy, empty) ||
         (b.kings_of(Us) && king_capturers<Us>(b));
}

}  // namespace detail

// Whether the side to move must capture (the position is not quiet).
inline bool has_capture(const Position& pos) {
  return pos.side_to_move() == White ? detail::has_capture<White>(pos.board())
                                     : detail::has_capture<Black>(pos.board());
}

// Legal = Captures + Quiets, disjoint. Capture being mandatory, a position
// has legal captures or legal quiet moves, never both: Captures lists the
// legal moves when they are captures (else nothing), Quiets when they are
// not.
enum class GenType { Legal, Captures, Quiets };

// Writes the legal moves of type T (each once) to `list`, which must hold
// kMaxMoves, and returns the end pointer.
template <GenType T = GenType::Legal>
inline Move* generate(const Position& pos, Move* list) {
  if constexpr (T != GenType::Legal) {
    if (has_capture(pos) != (T == GenType::Captures)) return list;
  }
  return pos.side_to_move() == White ? detail::generate<White>(pos.board(), list)
                                     : detail::generate<Black>(pos.board(), list);
}

// Number of legal moves, without listing the quiet ones.
inline uint64_t count_legal_moves(const Position& pos) {
  return pos.side_to_move() == White ? detail::count_legal_moves<White>(pos.board())
                                     : detail::count_legal_moves<Black>(pos.board());
}

// The first legal move whose code() is `code`, or Move::none().
inline Move move_from_code(const Position& pos, uint16_t code) {
  Move moves[kMaxMoves];
  const Move* last = generate(pos, moves);
  for (const Move* m = moves; m != last; ++m)
    if (m->code() == code) return *m;
  return Move::none();
}

template <GenType T = GenType::Legal>
class MoveList {
 public:
  explicit MoveList(const Position& pos) : last_(generate<T>(pos, moves_)) {}
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
