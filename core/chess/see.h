// Static exchange evaluation: whether the exchange sequence started by a
// move on its destination square wins at least `threshold` centipawns, with
// both sides capturing with their least valuable attacker and free to stop.
#pragma once

#include "chess/eval.h"

KIBITZ_NAMESPACE(chess) {

inline bool see_ge(const Position& pos, Move m, int threshold) {
  if (m.kind() != MoveKind::Normal) return 0 >= threshold;
  const Square from = m.from(), to = m.to();
  int swap = kSeeValue[type_of(pos.piece_on(to))] - threshold;
  if (swap < 0) return false;
  swap = kSeeValue[type_of(pos.piece_on(from))] - swap;
  if (swap <= 0) return true;

  Bitboard occupied = pos.pieces() ^ square_bb(from) ^ square_bb(to);
  Color stm = pos.side_to_move();
  Bitboard attackers = pos.attackers_to(to, occupied);
  const Bitboard diagonal = pos.pieces(Bishop, Queen), straight = pos.pieces(Rook, Queen);
  int result = 1;
  for (;;) {
    stm = ~stm;
    attackers &= occupied;
    const Bitboard mine = attackers & pos.pieces(stm);
    if (!mine) break;
    result ^= 1;
    Bitboard b;
    if ((b = mine & pos.pieces(Pawn))) {
      if ((swap = kSeeValue[Pawn] - swap) < result) break;
      occupied ^= b & -b;
      attackers |= bishop_attacks(to, occupied) & diagonal;
    } else if ((b = mine & pos.pieces(Knight))) {
      if ((swap = kSeeValue[Knight] - swap) < result) break;
      occupied ^= b & -b;
    } else if ((b = mine & pos.pieces(Bishop))) {
      if ((swap = kSeeValue[Bishop] - swap) < result) break;
      occupied ^= b & -b;
      attackers |= bishop_attacks(to, occupied) & diagonal;
    } else if ((b = mine & pos.pieces(Rook))) {
      if ((swap = kSeeValue[Rook] - swap) < result) break;
      occupied ^= b & -b;
      attackers |= rook_attacks(to, occupied) & straight;
    } else if ((b = mine & pos.pieces(Queen))) {
      if ((swap = kSeeValue[Queen] - swap) < result) break;
      occupied ^= b & -b;
      attackers |=
          (bishop_attacks(to, occupied) & diagonal) | (rook_attacks(to, occupied) & straight);
    } else {
      // The king takes last, unless the other side still defends the square.
      return (attackers & ~pos.pieces(stm)) ? result ^ 1 : result;
    }
  }
  return result != 0;
}

}  // KIBITZ_NAMESPACE(chess)
