#include "draughts/position.h"

#include <algorithm>

KIBITZ_NAMESPACE(draughts) {

namespace {

// Counters stop well below kNoLimit, so an unlimited balance never draws.
constexpr uint16_t saturating_inc(uint16_t n) { return uint16_t(n + (n < 0x7FFF)); }

// Plies of unchanged balance that draw, and by which rule, for the material
// of st (7.2.5, 7.2.6, 7.2.8; see position.h). The shortest limit wins.
struct BalanceRule {
  DrawRule rule;
  uint16_t limit;
};

BalanceRule balance_rule(const StateInfo& st) {
  const int men[2] = {popcount(st.by_color[White] & ~st.kings),
                      popcount(st.by_color[Black] & ~st.kings)};
  const int kings[2] = {popcount(st.by_color[White] & st.kings),
                        popcount(st.by_color[Black] & st.kings)};
  const int total = men[0] + men[1] + kings[0] + kings[1];
  const bool both_kings = kings[0] && kings[1];
  BalanceRule r{DrawRule::none, Position::kNoLimit};
  const auto consider = [&](DrawRule rule, uint16_t limit) {
    if (limit < r.limit) r = {rule, limit};
  };
  if (both_kings && total <= 3) consider(DrawRule::small_endgame, 10);
  for (int c = 0; c < 2; ++c)
    if (kings[c] >= 3 && kings[c ^ 1] == 1 && men[c ^ 1] == 0) consider(DrawRule::three_kings, 30);
  if (both_kings && total >= 4 && total <= 5) consider(DrawRule::balance, 60);
  if (both_kings && total >= 6 && total <= 7) consider(DrawRule::balance, 120);
  return r;
}

// 7.2.7: the colour of a lone king facing exactly three pieces, at least one
// of them a king (3 kings, 2 kings + man, king + 2 men); 2 if there is none.
uint8_t road_side(const StateInfo& st) {
  for (int c = 0; c < 2; ++c) {
    const Bitboard lone = st.by_color[c], strong = st.by_color[c ^ 1];
    if (popcount(lone) == 1 && (lone & st.kings) && popcount(strong) == 3 && (strong & st.kings))
      return uint8_t(c);
  }
  return 2;
}

// The 7.2.7 counter after a ply: -1 when not in such an ending with the lone
// king on a1-h8, else one more than before (0 when the condition starts).
int8_t next_road(const StateInfo& st, int8_t prev) {
  if (st.road_side == 2 || !(st.by_color[st.road_side] & kLongDiagonal)) return -1;
  return int8_t(prev < 0 ? 0 : std::min(prev + 1, 127));
}

}  // namespace

Position::Position() { *this = *from_fen(kStartFen); }

Position::Position(Bitboard white, Bitboard black, Bitboard kings, Color side) : side_(side) {
  StateInfo& st = states_[0];
  st = StateInfo{};
  st.by_color[White] = white;
  st.by_color[Black] = black;
  st.kings = kings;
  set_endgame_rules(st);
  st.road = next_road(st, -1);
  st.key = compute_key();
}

Position& Position::operator=(const Position& other) {
  if (this == &other) return *this;
  side_ = other.side_;
  game_ply_ = other.game_ply_;
  idx_ = other.idx_;
  std::copy(other.states_, other.states_ + other.idx_ + 1, states_);
  return *this;
}

bool operator==(const Position& a, const Position& b) {
  const StateInfo &sa = a.state(), &sb = b.state();
  return a.side_ == b.side_ && a.game_ply_ == b.game_ply_ &&
         sa.by_color[White] == sb.by_color[White] && sa.by_color[Black] == sb.by_color[Black] &&
         sa.kings == sb.kings && sa.key == sb.key && sa.reversible == sb.reversible &&
         sa.balance == sb.balance && sa.balance_limit == sb.balance_limit && sa.road == sb.road &&
         sa.road_side == sb.road_side;
}

Piece Position::piece_on(Square s) const {
  const Bitboard b = square_bb(s);
  const StateInfo& st = state();
  const bool king = st.kings & b;
  if (st.by_color[White] & b) return king ? Piece::white_king : Piece::white_man;
  if (st.by_color[Black] & b) return king ? Piece::black_king : Piece::black_man;
  return Piece::none;
}

void Position::set_endgame_rules(StateInfo& st) {
  st.balance_limit = balance_rule(st).limit;
  st.road_side = road_side(st);
}

void Position::compact_history() {
  std::copy(states_ + idx_ + 1 - kHistoryKept, states_ + idx_ + 1, states_);
  idx_ = kHistoryKept - 1;
}

void Position::do_move(Move m) {
  if (idx_ + 1 == kHistory) [[unlikely]]
    compact_history();
  const StateInfo& prev = states_[idx_];
  StateInfo& st = states_[++idx_];
  const Color us = side_, them = ~us;
  const Bitboard from_bb = square_bb(m.from), to_bb = square_bb(m.to);
  const bool king = prev.kings & from_bb;
  // A man is crowned when it ends on the last rank or captures a piece on
  // the rank before it: it can only jump such a piece by landing on the last
  // rank (a man never stands there), and it then goes on as a king.
  const bool crowned =
      !king && ((to_bb & promotion_rank_bb(us)) | (m.captured & relative_rank_bb(us, 6)));

  st.by_color[us] = prev.by_color[us] ^ from_bb ^ to_bb;  // from == to cancels out
  st.by_color[them] = prev.by_color[them] ^ m.captured;
  st.kings = (prev.kings & ~(m.captured | from_bb)) | (king || crowned ? to_bb : 0);

  Key key = prev.key ^ kZobrist.side;
  key ^= king ? kZobrist.king[us][m.from] : kZobrist.man[us][m.from];
  key ^= king || crowned ? kZobrist.king[us][m.to] : kZobrist.man[us][m.to];
  for (Bitboard c = m.captured; c;) {
    const Square s = Square(pop_lsb(c));
    key ^= prev.kings & square_bb(s) ? kZobrist.king[them][s] : kZobrist.man[them][s];
  }
  st.key = key;

  st.plies_from_null = saturating_inc(prev.plies_from_null);
  if (m.captured || crowned) {
    st.reversible = 0;
    st.balance = 0;
    set_endgame_rules(st);
    st.road = next_road(st, -1);
  } else {
    st.reversible = king ? saturating_inc(prev.reversible) : 0;
    st.balance = saturating_inc(prev.balance);
    st.balance_limit = prev.balance_limit;
    st.road_side = prev.road_side;
    st.road = next_road(st, prev.road);
  }
  side_ = them;
  ++game_ply_;
}

void Position::undo_move(Move) {
  side_ = ~side_;
  --game_ply_;
  --idx_;
}

void Position::do_null_move() {
  if (idx_ + 1 == kHistory) [[unlikely]]
    compact_history();
  const StateInfo& prev = states_[idx_];
  StateInfo& st = states_[++idx_];
  st = prev;
  st.key ^= kZobrist.side;
  st.reversible = saturating_inc(prev.reversible);
  st.balance = saturating_inc(prev.balance);
  st.road = next_road(st, prev.road);
  st.plies_from_null = 0;
  side_ = ~side_;
  ++game_ply_;
}

void Position::undo_null_move() {
  side_ = ~side_;
  --game_ply_;
  --idx_;
}

bool Position::is_repetition(int ply) const {
  const StateInfo& st = states_[idx_];
  const int end = std::min({int(st.reversible), int(st.plies_from_null), idx_});
  int seen = 0;
  for (int i = 4; i <= end; i += 2) {
    if (states_[idx_ - i].key == st.key) {
      if (i < ply || ++seen == 2) return true;
    }
  }
  return false;
}

DrawRule Position::draw_rule() const {
  const StateInfo& st = state();
  if (st.road >= 10) return DrawRule::main_road;
  if (st.balance >= st.balance_limit) return balance_rule(st).rule;
  if (st.reversible >= 30) return DrawRule::king_moves;
  return DrawRule::none;
}

Key Position::compute_key() const {
  const StateInfo& st = state();
  Key k = side_ == Black ? kZobrist.side : 0;
  for (Color c : {White, Black}) {
    for (Bitboard b = st.by_color[c]; b;) {
      const Square s = Square(pop_lsb(b));
      k ^= st.kings & square_bb(s) ? kZobrist.king[c][s] : kZobrist.man[c][s];
    }
  }
  return k;
}

}  // KIBITZ_NAMESPACE(draughts)
