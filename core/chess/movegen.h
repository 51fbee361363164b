// Legal move generation. Checkers come from the position (do_move computes
// them), pins are computed once per call; in double check only king moves are
// generated, in single check only moves that capture the checker or block.
//
// The generator is written once over a Sink: MoveWriter stores moves, and
// MoveCounter only adds up target-set sizes, which perft uses at its last ply
// (bulk counting: the moves are legal by construction, so counting the
// targets is counting the moves).
#pragma once

#include <cassert>

#include "chess/position.h"

KIBITZ_NAMESPACE(chess) {

// Legal = Captures + Quiets, disjoint. Captures holds every capture and the
// queen promotions; Quiets holds the other moves, under-promotions included.
enum class GenType { Legal, Captures, Quiets };

// The capacity of every chess move list (this header's MoveList, perft,
// the search's move and capture arrays, the service's root lists). It holds
// for every position Position::from_fen accepts, and so for every position
// reached from one by legal moves or the search's null move (a move adds no
// piece but what a promotion trades for a pawn, so the counts below still
// hold after it, and leaves the side that moved out of check; the null move
// is made only out of check):
//
// - Not in check. from_fen accepts one king a side, at most 16 pieces and 8
//   pawns a side, no pawn on rank 1 or 8, the side not to move not in check,
//   and no more pieces beyond the starting set than missing pawns (fen.cpp,
//   check_material; bishops are counted per square colour, which refuses a
//   superset of what counting bishops past 2 together refuses). Within
//   exactly those constraints, with the side to move not in check either,
//   Tobs40 (2024) proved by mixed-integer programming that no placement
//   has more than 218 moves for the side to move; his model relaxes the
//   move rules (it ignores pins, allows castling and en passant more freely)
//   and leaves reachability out, so it over-counts, never under-counts
//   (github.com/Tobs40/chess218, chess_milp.py: ENFORCE_ANY_COUNTS,
//   KINGS_NOT_IN_CHECK both colours; lichess.org/@/Tobs40/blog). 218 is
//   reached: R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1.
// - In check, by our own count: in double check only the king moves (at
//   most 8). In single check every other move ends on one of the at most 6
//   squares between the king and the checker or on the checker (7 squares),
//   or is an en-passant capture of a checking pawn (at most 2). A square is reached
//   by at most one piece along each of its 8 rays (the first on the ray:
//   sliders, pawn pushes and pawn or king steps all come along a ray) and
//   from at most 8 knight squares; only a square on the last rank takes
//   promotions, from at most 3 pawns, 4 moves each (3 more each). So at most
//   7 * (8 + 8 + 9) + 8 + 2 = 185.
//
// So no accepted position has more than 218 < 256 legal moves. Every write
// asserts the capacity (debug builds), the fuzzers check the count against
// kMaxLegalMoves (kMaxLegalMovesInCheck in check) and generate into heap
// buffers of exactly kMaxMoves, and tests/chess/fen_test.cpp has the
// 218-move position.
constexpr int kMaxLegalMoves = 218;
constexpr int kMaxLegalMovesInCheck = 185;
constexpr int kMaxMoves = 256;
static_assert(kMaxLegalMoves <= kMaxMoves && kMaxLegalMovesInCheck <= kMaxLegalMoves);

// Writes moves to a list that holds kMaxMoves from `list` on.
struct MoveWriter {
  Move* cur;
#ifndef NDEBUG
  Move* end;
  explicit MoveWriter(Move* list, Move* list_end = nullptr)
      : cur(list), end(list_end ? list_end : list + kMaxMoves) {}
  void put(Move m) {
    assert(cur < end && "move list capacity exceeded (see kMaxMoves)");
    *cur++ = m;
  }
#else
  explicit MoveWriter(Move* list, Move* = nullptr) : cur(list) {}
  void put(Move m) { *cur++ = m; }
#endif

  void add(Move m) { put(m); }
  void add(Square from, Bitboard targets) {
    while (targets) put(Move(from, Square(pop_lsb(targets))));
  }
  template <Direction D>
  void pawn(Bitboard targets) {
    while (targets) {
      const Square to = Square(pop_lsb(targets));
      put(Move(to - D, to));
    }
  }
  template <Direction D, GenType T>
  void promotions(Bitboard targets) {
    while (targets) {
      const Square to = Square(pop_lsb(targets)), from = to - D;
      if constexpr (T != GenType::Quiets) put(Move(from, to, MoveKind::Promotion, Queen));
      if constexpr (T != GenType::Captures) {
        put(Move(from, to, MoveKind::Promotion, Rook));
        put(Move(from, to, MoveKind::Promotion, Bishop));
        put(Move(from, to, MoveKind::Promotion, Knight));
      }
    }
  }
};

struct MoveCounter {
  uint64_t count = 0;

  void add(Move) { ++count; }
  void add(Square, Bitboard targets) { count += unsigned(popcount(targets)); }
  template <Direction D>
  void pawn(Bitboard targets) {
    count += unsigned(popcount(targets));
  }
  template <Direction D, GenType T>
  void promotions(Bitboard targets) {
    constexpr unsigned kPerSquare = T == GenType::Legal ? 4 : T == GenType::Captures ? 1 : 3;
    count += kPerSquare * unsigned(popcount(targets));
  }
};

namespace detail {

// Pawn pushes, captures and promotions of `pawns`, restricted to `allowed`
// destination squares (the check mask, and the pin line for a pinned pawn).
template <Color Us, GenType T, class Sink>
inline void pawn_moves(Sink& sink, Bitboard pawns, Bitboard them, Bitboard empty,
                       Bitboard allowed) {
  constexpr Direction Up = pawn_push(Us);
  constexpr Direction CaptureW = Us == White ? NorthWest : SouthWest;
  constexpr Direction CaptureE = Us == White ? NorthEast : SouthEast;
  constexpr Bitboard Rank7 = relative_rank_bb(Us, 6), Rank3 = relative_rank_bb(Us, 2);

  const Bitboard plain = pawns & ~Rank7, promoting = pawns & Rank7;
  if constexpr (T != GenType::Captures) {
    const Bitboard one = shift<Up>(plain) & empty;
    const Bitboard two = shift<Up>(one & Rank3) & empty;
    sink.template pawn<Up>(one & allowed);
    sink.template pawn<Direction(Up + Up)>(two & allowed);
  }
  if constexpr (T != GenType::Quiets) {
    sink.template pawn<CaptureW>(shift<CaptureW>(plain) & them & allowed);
    sink.template pawn<CaptureE>(shift<CaptureE>(plain) & them & allowed);
  }
  if (promoting) {
    sink.template promotions<Up, T>(shift<Up>(promoting) & empty & allowed);
    sink.template promotions<CaptureW, T>(shift<CaptureW>(promoting) & them & allowed);
    sink.template promotions<CaptureE, T>(shift<CaptureE>(promoting) & them & allowed);
  }
}

template <Color Us, GenType T, class Sink>
inline void generate(const Position& pos, Sink& sink) {
  constexpr Color Them = ~Us;
  const Square ksq = pos.king_square(Us);
  const Bitboard us = pos.pieces(Us), them = pos.pieces(Them), occupied = us | them;
  const Bitboard checkers = pos.checkers();

  // King: the squares it may step to, minus those attacked once it has left
  // its square (so it cannot step back along a checking ray).
  Bitboard king_to = king_attacks(ksq) & (T == GenType::Captures ? them
                                          : T == GenType::Quiets ? ~occupied
                                                                 : ~us);
  if (king_to) {
    const Bitboard without_king = occupied ^ square_bb(ksq);
    for (Bitboard b = king_to; b;) {
      const Square s = Square(pop_lsb(b));
      if (pos.attacked_by(Them, s, without_king)) king_to ^= square_bb(s);
    }
    sink.add(ksq, king_to);
  }
  if (more_than_one(checkers)) return;

  const Bitboard check_mask =
      checkers ? between_bb(ksq, Square(lsb(checkers))) | checkers : ~Bitboard(0);
  const Bitboard target = check_mask & (T == GenType::Captures ? them
                                        : T == GenType::Quiets ? ~occupied
                                                               : ~us);

  // Pins: our pieces alone between our king and an enemy slider.
  Bitboard pinned = 0;
  Bitboard snipers = (rook_pseudo_attacks(ksq) & pos.pieces(Them, Rook, Queen)) |
                     (bishop_pseudo_attacks(ksq) & pos.pieces(Them, Bishop, Queen));
  while (snipers) {
    const Bitboard b = between_bb(ksq, Square(pop_lsb(snipers))) & occupied;
    if (!more_than_one(b)) pinned |= b & us;
  }

  // A pinned knight never moves; a pinned slider stays on its pin line.
  for (Bitboard b = pos.pieces(Us, Knight) & ~pinned; b;) {
    const Square s = Square(pop_lsb(b));
    sink.add(s, knight_attacks(s) & target);
  }
  for (Bitboard b = pos.pieces(Us, Bishop, Queen); b;) {
    const Square s = Square(pop_lsb(b));
    Bitboard a = bishop_attacks(s, occupied) & target;
    if (pinned & square_bb(s)) a &= line_bb(ksq, s);
    sink.add(s, a);
  }
  for (Bitboard b = pos.pieces(Us, Rook, Queen); b;) {
    const Square s = Square(pop_lsb(b));
    Bitboard a = rook_attacks(s, occupied) & target;
    if (pinned & square_bb(s)) a &= line_bb(ksq, s);
    sink.add(s, a);
  }

  const Bitboard pawns = pos.pieces(Us, Pawn);
  pawn_moves<Us, T>(sink, pawns & ~pinned, them, ~occupied, check_mask);
  // A pinned piece can never resolve a check, so pinned pawns move only when
  // not in check, and only along the pin line.
  if (!checkers) {
    for (Bitboard b = pawns & pinned; b;) {
      const Square s = Square(pop_lsb(b));
      pawn_moves<Us, T>(sink, square_bb(s), them, ~occupied, line_bb(ksq, s));
    }
  }

  if constexpr (T != GenType::Quiets) {
    if (const Square ep = pos.ep_square(); ep != NoSquare) {
      const Square captured = ep - pawn_push(Us);
      if (check_mask & (square_bb(ep) | square_bb(captured))) {
        for (Bitboard b = pawn_attacks(Them, ep) & pawns; b;) {
          const Square from = Square(pop_lsb(b));
          if (pos.ep_capture_safe(from, ep)) sink.add(Move(from, ep, MoveKind::EnPassant));
        }
      }
    }
  }

  if constexpr (T != GenType::Captures) {
    if (!checkers &&
        (pos.castling_rights() & (Us == White ? WhiteOO | WhiteOOO : BlackOO | BlackOOO))) {
      // Every square between king and rook and their destinations empty but
      // for the two, and no square the king crosses or lands on attacked
      // (its own square is not: no castling out of check).
      for (const bool king_side : {true, false}) {
        const CastlingRights cr = castling_right(Us, king_side);
        if (!pos.can_castle(cr) || (occupied & pos.castling_path(cr))) continue;
        bool attacked = false;
        for (Bitboard b = pos.castling_king_path(cr); b && !attacked;)
          attacked = pos.attacked_by(Them, Square(pop_lsb(b)), occupied);
        if (attacked) continue;
        const Square kto = relative_square(Us, king_side ? G1 : C1);
        if (!pos.is_chess960()) {
          sink.add(Move(ksq, kto, MoveKind::Castling));
          continue;
        }
        // In Chess960 the castling rook may be what screens the king's
        // destination from a rook or queen along the back rank (queen a1,
        // rook b1, king c1: after O-O-O the king stays on c1, the rook is
        // on d1, and the queen gives check).
        const Square rsq = pos.castling_rook_square(cr);
        if (rook_attacks(kto, occupied ^ square_bb(rsq)) & pos.pieces(Them, Rook, Queen)) continue;
        sink.add(Move(ksq, rsq, MoveKind::Castling));
      }
    }
  }
}

}  // namespace detail

// Writes the legal moves of type T to `list` and returns the end pointer.
// The list must hold kMaxMoves from `list` on, or up to `list_end` when
// given (a list filled in parts: list_end is its real end).
template <GenType T = GenType::Legal>
inline Move* generate(const Position& pos, Move* list, Move* list_end = nullptr) {
  MoveWriter w{list, list_end};
  if (pos.side_to_move() == White)
    detail::generate<White, T>(pos, w);
  else
    detail::generate<Black, T>(pos, w);
  return w.cur;
}

// Number of legal moves, without writing them.
inline uint64_t count_legal_moves(const Position& pos) {
  MoveCounter c;
  if (pos.side_to_move() == White)
    detail::generate<White, GenType::Legal>(pos, c);
  else
    detail::generate<Black, GenType::Legal>(pos, c);
  return c.count;
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

// Whether the side to move has any legal move (cheaper than counting them all
// in the usual case: the king or a single piece usually has one).
inline bool has_legal_move(const Position& pos) { return count_legal_moves(pos) != 0; }

enum class GameStatus {
  ongoing,
  checkmate,
  stalemate,
  fifty_move_rule,
  threefold_repetition,
  insufficient_material,
};

// The status of the game at this position, by the rules: a mate delivered on
// the hundredth quiet ply wins rather than draws.
inline GameStatus game_status(const Position& pos) {
  if (!has_legal_move(pos)) return pos.in_check() ? GameStatus::checkmate : GameStatus::stalemate;
  if (pos.has_insufficient_material()) return GameStatus::insufficient_material;
  if (pos.fifty_move_rule()) return GameStatus::fifty_move_rule;
  if (pos.is_threefold_repetition()) return GameStatus::threefold_repetition;
  return GameStatus::ongoing;
}

}  // KIBITZ_NAMESPACE(chess)
