#include "draughts/position.h"

#include <algorithm>

KIBITZ_NAMESPACE(draughts) {

namespace {

// Plies of unchanged balance that draw, and by which rule, for the material
// of st (7.2.5, 7.2.6, 7.2.8; see position.h). The shortest limit wins.
struct BalanceRule {
  DrawRule rule;
  uint16_t limit;
};

BalanceRule balance_rule(const StateInfo& st) {
  BalanceRule r{DrawRule::none, Position::kNoLimit};
  if (popcount(st.board.pieces()) > 7) return r;
  const int men[2] = {popcount(st.board.by_color[White] & ~st.board.kings),
                      popcount(st.board.by_color[Black] & ~st.board.kings)};
  const int kings[2] = {popcount(st.board.by_color[White] & st.board.kings),
                        popcount(st.board.by_color[Black] & st.board.kings)};
  const int total = men[0] + men[1] + kings[0] + kings[1];
  const bool both_kings = kings[0] && kings[1];
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
// of them a king (3 kings, 2 kings + man, king + 2 men); -1 if there is none.
int road_side(const StateInfo& st) {
  for (int c = 0; c < 2; ++c) {
    const Bitboard lone = st.board.by_color[c], strong = st.board.by_color[c ^ 1];
    if (popcount(lone) == 1 && (lone & st.board.kings) && popcount(strong) == 3 &&
        (strong & st.board.kings))
      return c;
  }
  return -1;
}

}  // namespace

Position::Position() { *this = *from_fen(kStartFen); }

Position::Position(Bitboard white, Bitboard black, Bitboard kings, Color side)
    : side_(side), ply_offset_(side == Black) {
  StateInfo& st = states_[0];
  st = StateInfo{};
  st.board = Board{{white, black}, kings};
  st.key = compute_key();
}

Position& Position::operator=(const Position& other) {
  if (this == &other) return *this;
  side_ = other.side_;
  ply_offset_ = other.ply_offset_;
  st_ = states_ + (other.st_ - other.states_);
  const StateInfo* last = other.st_ + 1;
  std::copy(other.states_, last, states_);
  return *this;
}

bool operator==(const Position& a, const Position& b) {
  const StateInfo &sa = a.state(), &sb = b.state();
  return a.side_ == b.side_ && a.game_ply() == b.game_ply() && sa.board == sb.board &&
         sa.key == sb.key && sa.reversible == sb.reversible && sa.balance == sb.balance &&
         sa.plies_from_null == sb.plies_from_null;
}

Piece Position::piece_on(Square s) const {
  const Bitboard b = square_bb(s);
  const StateInfo& st = state();
  const bool king = st.board.kings & b;
  if (st.board.by_color[White] & b) return king ? Piece::white_king : Piece::white_man;
  if (st.board.by_color[Black] & b) return king ? Piece::black_king : Piece::black_man;
  return Piece::none;
}

void Position::compact_history() {
  const StateInfo* first = st_ + 1 - kHistoryKept;
  const StateInfo* last = st_ + 1;
  std::copy(first, last, states_);
  ply_offset_ += int(first - states_);
  st_ = states_ + kHistoryKept - 1;
}

void Position::do_null_move() {
  if (st_ == states_ + kHistory - 1) [[unlikely]]
    compact_history();
  const StateInfo& prev = *st_;
  StateInfo& st = *++st_;
  st = prev;
  st.key ^= kZobrist.side;
  st.reversible = uint16_t(prev.reversible + 1);
  st.balance = uint16_t(prev.balance + 1);
  st.plies_from_null = 0;
  side_ = ~side_;
}

void Position::undo_null_move() {
  side_ = ~side_;
  --st_;
}

bool Position::is_repetition(int ply) const {
  const StateInfo& st = *st_;
  const int end = std::min({int(st.reversible), int(st.plies_from_null), int(st_ - states_)});
  int seen = 0;
  for (int i = 4; i <= end; i += 2) {
    if (st_[-i].key == st.key) {
      if (i < ply || ++seen == 2) return true;
    }
  }
  return false;
}

int Position::balance_limit() const { return balance_rule(state()).limit; }

int Position::road_plies(int cap) const {
  const StateInfo& st = state();
  const int lone = road_side(st);
  if (lone < 0) return -1;
  // Back through the plies of this material (st.balance of them) while the
  // lone king stood on a1-h8.
  const int end = std::min({int(st.balance), int(st_ - states_), cap});
  int n = -1;
  while (n < end && (st_[-(n + 1)].board.by_color[lone] & kLongDiagonal)) ++n;
  return n;
}

DrawRule Position::draw_rule() const {
  const StateInfo& st = state();
  if (st.balance >= 10) {
    if (road_plies(10) >= 10) return DrawRule::main_road;
    if (const BalanceRule r = balance_rule(st); st.balance >= r.limit) return r.rule;
  }
  if (st.reversible >= 30) return DrawRule::king_moves;
  return DrawRule::none;
}

Key Position::compute_key() const {
  const StateInfo& st = state();
  Key k = side_ == Black ? kZobrist.side : 0;
  for (Color c : {White, Black}) {
    for (Bitboard b = st.board.by_color[c]; b;) {
      const Square s = Square(pop_lsb(b));
      k ^= kZobrist.piece[c][bool(st.board.kings & square_bb(s))][s];
    }
  }
  return k;
}

}  // KIBITZ_NAMESPACE(draughts)
