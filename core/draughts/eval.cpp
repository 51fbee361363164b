#include "draughts/eval.h"

#include <algorithm>
#include <cstdlib>

#include "draughts/eval_weights.h"

KIBITZ_NAMESPACE(draughts) {

namespace {

constexpr const EvalWeights& W = kEvalWeights;
constexpr int kMaxPhase = 24;

// Forward directions of each colour's men.
constexpr Direction kForward[kColors][2] = {{UpLeft, UpRight}, {DownLeft, DownRight}};

constexpr Bitboard files_bb(int first, int last) {
  Bitboard b = 0;
  for (int s = 0; s < kSquares; ++s)
    if (file_of(Square(s)) >= first && file_of(Square(s)) <= last) b |= square_bb(Square(s));
  return b;
}
constexpr Bitboard kQueenSide = files_bb(0, 3), kKingSide = files_bb(4, 7);
// The back-rank squares a1, c1, e1, g1 from each side.
constexpr Square kBackRank[4] = {A1, C1, E1, G1};

template <Direction D>
Bitboard steps(Bitboard men, Bitboard empty) {
  return shift<D>(men & step_from(D)) & empty;
}

// Squares of `victims` that a man of `men` can jump (all four directions:
// men capture backwards too).
template <Direction D>
Bitboard jumped(Bitboard men, Bitboard victims, Bitboard empty) {
  constexpr Direction Back = reverse(D);
  return shift<D>(men & jump_from(D) & shift<Back>(victims & shift<Back>(empty)));
}
Bitboard en_prise(Bitboard men, Bitboard victims, Bitboard empty) {
  return jumped<UpLeft>(men, victims, empty) | jumped<UpRight>(men, victims, empty) |
         jumped<DownRight>(men, victims, empty) | jumped<DownLeft>(men, victims, empty);
}

template <Color Us, bool kTrace>
Score evaluate_side(const Position& pos, EvalTrace* trace) {
  constexpr Color Them = ~Us;
  constexpr Direction L = kForward[Us][0], R = kForward[Us][1];
  // The squares behind a man: reached from it by the reverse steps.
  constexpr Direction BackL = reverse(R), BackR = reverse(L);
  const Bitboard men = pos.men(Us), kings = pos.kings(Us), own = pos.pieces(Us);
  const Bitboard occupied = pos.pieces(), empty = ~occupied;
  Score s;

  KIBITZ_EVAL_TERM(material[0], popcount(men));
  KIBITZ_EVAL_TERM(material[1], popcount(kings));
  for (Bitboard b = men; b;) {
    const Square sq = relative_square(Us, Square(pop_lsb(b)));  // the macro reads its field twice
    KIBITZ_EVAL_TERM(man_psq[sq], 1);
  }
  int king_mobility = 0;
  for (Bitboard b = kings; b;) {
    const Square sq = Square(pop_lsb(b));
    KIBITZ_EVAL_TERM(king_psq[relative_square(Us, sq)], 1);
    king_mobility += popcount(king_attacks(sq, occupied) & empty);
  }
  KIBITZ_EVAL_TERM(king_mobility, king_mobility);
  KIBITZ_EVAL_TERM(man_mobility, popcount(steps<L>(men, empty)) + popcount(steps<R>(men, empty)));

  if (pos.men(Them) && !pos.kings(Them))
    for (int i = 0; i < 4; ++i)
      if (men & square_bb(relative_square(Us, kBackRank[i]))) KIBITZ_EVAL_TERM(back_guard[i], 1);

  // Runaway men: one step from the last rank with a free square to step to,
  // or two steps with a free path.
  if (const Bitboard seventh = men & relative_rank_bb(Us, 6))
    KIBITZ_EVAL_TERM(runaway7, popcount(steps<L>(seventh, empty) | steps<R>(seventh, empty)));
  if (const Bitboard sixth = men & relative_rank_bb(Us, 5)) {
    const Bitboard next = steps<L>(sixth, empty) | steps<R>(sixth, empty);
    const Bitboard after = steps<L>(next, empty) | steps<R>(next, empty);
    KIBITZ_EVAL_TERM(runaway6, popcount(after & promotion_rank_bb(Us)));
  }

  // A man is backed on one side when the square behind it there is off the
  // board or holds a piece of ours: no enemy piece can land there.
  const Bitboard backed_l =
      men & (~step_from(BackL) | shift<reverse(BackL)>(own & step_from(reverse(BackL))));
  const Bitboard backed_r =
      men & (~step_from(BackR) | shift<reverse(BackR)>(own & step_from(reverse(BackR))));
  if (const int n = popcount(backed_l & backed_r)) KIBITZ_EVAL_TERM(backed_man, n);
  if (const int n = std::abs(popcount(men & kQueenSide) - popcount(men & kKingSide)))
    KIBITZ_EVAL_TERM(flank_imbalance, n);
  if (pos.side_to_move() == Us)
    if (const int n = popcount(en_prise(pos.men(Them), own, empty)))
      KIBITZ_EVAL_TERM(threatened, n);
  if (kings && !pos.kings(Them)) KIBITZ_EVAL_TERM(first_king, 1);
  if (pos.side_to_move() == Us) KIBITZ_EVAL_TERM(tempo, 1);
  return s;
}

// White's score before the phase blend, and with a trace the count of every term.
template <bool kTrace>
Score evaluate_score(const Position& pos, EvalTrace* trace) {
  Score s = evaluate_side<White, kTrace>(pos, trace) - evaluate_side<Black, kTrace>(pos, trace);
  // Trade down when ahead: the same lead counts for more with fewer pieces.
  const int fewer = std::max(0, 24 - pos.count(White) - pos.count(Black));
  const int men = pos.count_men(White) - pos.count_men(Black);
  const int kings = pos.count_kings(White) - pos.count_kings(Black);
  const Score trade = W.trade_man * men + W.trade_king * kings;
  s += Score(trade.mg * fewer / 48, trade.eg * fewer / 48);
  if constexpr (kTrace) {
    trace->trade_man += float(men * fewer) / 48.f;
    trace->trade_king += float(kings * fewer) / 48.f;
  }
  return s;
}

int game_phase(const Position& pos) {
  return std::min(kMaxPhase, pos.count(White) + pos.count(Black));
}

// The blend and the scale of endings that are hard or impossible to win: a
// lone king against fewer than three pieces (men count as future kings), or
// one holding the main road against three.
// Both sides can be such a lone king: then the value is scaled twice.
int finish(const Position& pos, Score s, double* scale) {
  const int phase = game_phase(pos);
  int v = (s.mg * phase + s.eg * (kMaxPhase - phase)) / kMaxPhase;
  for (Color weak : {White, Black}) {
    const Color strong = ~weak;
    if (pos.count(weak) != 1 || !pos.kings(weak)) continue;
    const bool on_road = pos.kings(weak) & kLongDiagonal;
    if (pos.count(strong) < 3 || (on_road && pos.count(strong) <= 3)) {
      v /= 8;
      if (scale) *scale /= 8;
    }
  }
  return v;
}

}  // namespace

int evaluate(const Position& pos) {
  const int v = finish(pos, evaluate_score<false>(pos, nullptr), nullptr);
  return pos.side_to_move() == White ? v : -v;
}

EvalTraceResult evaluate_with_trace(const Position& pos) {
  EvalTraceResult r{};
  r.scale = 1.0;
  r.white_eval = finish(pos, evaluate_score<true>(pos, &r.trace), &r.scale);
  r.phase = game_phase(pos);
  return r;
}

}  // KIBITZ_NAMESPACE(draughts)
