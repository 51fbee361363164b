#include "draughts/eval.h"

#include <algorithm>

KIBITZ_NAMESPACE(draughts) {

namespace {

// Men: a bonus for each rank advanced (relative rank 0 = own back rank).
constexpr int kAdvance[8] = {0, 3, 6, 10, 15, 22, 32, 0};
// The four central squares, and the ring around them.
constexpr Bitboard kCentre = square_bb(C5) | square_bb(D4) | square_bb(E5) | square_bb(F4);
constexpr Bitboard kInnerRing =
    square_bb(C3) | square_bb(E3) | square_bb(D6) | square_bb(F6) | square_bb(B4) | square_bb(G5);
// Back-rank squares whose men stop the opponent's men from crowning.
constexpr Bitboard kGuard[kColors] = {square_bb(C1) | square_bb(E1), square_bb(D8) | square_bb(F8)};

constexpr int kCentreBonus = 8, kRingBonus = 3, kGuardBonus = 10, kMobility = 2;
constexpr int kMainRoadKing = 20, kRunaway7 = 45, kRunaway6 = 20;

// Forward directions of each colour's men.
constexpr Direction kForward[kColors][2] = {{UpLeft, UpRight}, {DownLeft, DownRight}};

template <Direction D>
Bitboard steps(Bitboard men, Bitboard empty) {
  return shift<D>(men & step_from(D)) & empty;
}

// Empty squares a king on s sees in all four directions.
int king_mobility(Square s, Bitboard occupied) {
  return popcount(king_attacks(s, occupied) & ~occupied);
}

template <Color Us>
int evaluate_side(const Position& pos) {
  constexpr Color Them = ~Us;
  const Bitboard men = pos.men(Us), kings = pos.kings(Us);
  const Bitboard occupied = pos.pieces(), empty = ~occupied;
  int s = kManValue * popcount(men) + kKingValue * popcount(kings);

  for (int r = 1; r < 7; ++r) s += kAdvance[r] * popcount(men & relative_rank_bb(Us, r));
  s += kCentreBonus * popcount(men & kCentre) + kRingBonus * popcount(men & kInnerRing);
  if (pos.men(Them) && !pos.kings(Them)) s += kGuardBonus * popcount(men & kGuard[Us]);

  // Mobility: quiet steps of men, flights of kings.
  int mobility =
      popcount(steps<kForward[Us][0]>(men, empty)) + popcount(steps<kForward[Us][1]>(men, empty));
  for (Bitboard b = kings; b;) mobility += king_mobility(Square(pop_lsb(b)), occupied);
  s += kMobility * mobility;

  // Runaway men: one step from the last rank with a free square to step to,
  // or two steps with a free path.
  const Bitboard seventh = men & relative_rank_bb(Us, 6);
  if (seventh) {
    const Bitboard to =
        steps<kForward[Us][0]>(seventh, empty) | steps<kForward[Us][1]>(seventh, empty);
    s += kRunaway7 * popcount(to);
  }
  const Bitboard sixth = men & relative_rank_bb(Us, 5);
  if (sixth) {
    const Bitboard next =
        steps<kForward[Us][0]>(sixth, empty) | steps<kForward[Us][1]>(sixth, empty);
    const Bitboard after =
        steps<kForward[Us][0]>(next, empty) | steps<kForward[Us][1]>(next, empty);
    s += kRunaway6 * popcount(after & promotion_rank_bb(Us));
  }
  if (kings) s += kMainRoadKing * popcount(kings & kLongDiagonal);
  return s;
}

}  // namespace

int evaluate(const Position& pos) {
  int v = evaluate_side<White>(pos) - evaluate_side<Black>(pos);

  // Trade down when ahead: the same lead counts for more with fewer pieces.
  const int total = pos.count(White) + pos.count(Black);
  const int material = kManValue * (pos.count_men(White) - pos.count_men(Black)) +
                       kKingValue * (pos.count_kings(White) - pos.count_kings(Black));
  v += material * std::max(0, 24 - total) / 48;

  // Endings that are hard or impossible to win: a lone king against fewer
  // than three kings (men count as future kings), or one holding the main
  // road against three pieces.
  for (Color weak : {White, Black}) {
    const Color strong = ~weak;
    if (pos.count(weak) != 1 || !pos.kings(weak)) continue;
    const bool on_road = pos.kings(weak) & kLongDiagonal;
    if (pos.count(strong) < 3 || (on_road && pos.count(strong) <= 3)) v /= 8;
  }
  return pos.side_to_move() == White ? v : -v;
}

}  // KIBITZ_NAMESPACE(draughts)
