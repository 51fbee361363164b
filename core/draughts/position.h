// A Russian draughts position: three 32-bit boards (pieces of each colour,
// kings of both) kept in a stack of per-ply states, so do_move writes the
// next state (copy-make) and undo_move only steps back. A Position is a
// self-contained value: copying one copies its live history, and it never
// allocates.
//
// Draw rules (FMJD-64 rules for Russian draughts, 7.2.3-7.2.8). A "move" in
// these rules is counted here as a move by each side, i.e. two plies, and all
// counters below are in plies: "N moves" is reached when 2N plies have been
// played since the counter was last reset.
//   7.2.4 Threefold repetition: the same position with the same side to move
//         for the third time (is_repetition, key history).
//   7.2.3 15 moves in which both sides moved only kings, without capturing:
//         reversible_plies() >= 30. The counter is reset by every capture and
//         every man move (which are also the irreversible moves, so it bounds
//         the repetition search).
//   7.2.5 Three or more kings against a lone king, not captured within 15
//         moves: balance_plies() >= 30 while the stronger side has >= 3 kings
//         (men besides them are allowed) and the other side a single king.
//   7.2.6 Kings on both sides and no change in the balance of forces (no
//         capture, no man crowned) for 30 moves with 4-5 pieces on the board
//         or 60 moves with 6-7 pieces: balance_plies() >= 60 or >= 120.
//   7.2.8 2 kings, king and man, or a king against a lone king (that is: kings
//         on both sides and at most 3 pieces) not won within 5 moves:
//         balance_plies() >= 10.
//   7.2.7 3 kings, 2 kings and a man, or a king and 2 men against a lone king
//         that stands on the main road a1-h8, not won within 5 moves:
//         road_plies() >= 10, where road_plies() counts the plies for which
//         the lone king has stood on a1-h8 without a break in that ending
//         (it restarts when the king steps off and on again).
// balance_plies() counts plies since the last capture or crowning. The
// material is constant in between, so which of 7.2.5-7.2.8 applies follows
// from the pieces on the board (balance_limit()), and road_plies() is found
// by looking back through the states of those plies: do_move keeps only the
// two counters. A crowning restarts the count (in 7.2.5 too: 3 kings and a
// man against a king, once the man is crowned, start over as 4 kings).
// A loss takes precedence over these draws: game_status() checks for it
// first (a king captured on the last counted move wins).
#pragma once

#include <string>
#include <string_view>

#include "common/expected.h"
#include "draughts/attacks.h"
#include "draughts/board.h"
#include "draughts/zobrist.h"

KIBITZ_NAMESPACE(draughts) {

// What changes from ply to ply; do_move writes a whole new one (32 bytes).
// The counters wrap after 65535 plies, which no game reaches.
struct StateInfo {
  Board board;
  uint16_t reversible;  // plies since the last capture or man move
  uint16_t balance;     // plies since the last capture or crowning
  Key key;
  uint16_t plies_from_null;  // bounds the repetition search
};
static_assert(sizeof(StateInfo) <= 32);

// The draw rules other than repetition, by their FMJD-64 number.
enum class DrawRule : uint8_t {
  none,
  king_moves,     // 7.2.3: 15 moves of kings only
  three_kings,    // 7.2.5: 3+ kings against a lone king, 15 moves
  balance,        // 7.2.6: 30 moves (4-5 pieces) or 60 moves (6-7 pieces)
  main_road,      // 7.2.7: 3 pieces against a lone king on a1-h8, 5 moves
  small_endgame,  // 7.2.8: at most 3 pieces, kings on both sides, 5 moves
};

enum class FenError {
  unknown,
  syntax,                 // a token that cannot be read
  side_to_move,           // the first field is not W or B
  off_board,              // a square that is not on the board (i3, a9, 33)
  light_square,           // a light square (a2, b1): pieces stand on dark squares
  duplicate_square,       // two pieces on one square
  man_on_promotion_rank,  // a white man on rank 8 or a black man on rank 1
  too_many_pieces,        // more than 12 pieces of one colour
};

std::string_view to_string(FenError e);

struct FenParseError {
  FenError kind;
  std::string message;
};

class Position {
 public:
  static constexpr std::string_view kStartFen =
      "W:Wa1,a3,b2,c1,c3,d2,e1,e3,f2,g1,g3,h2:Ba7,b6,b8,c7,d6,d8,e7,f6,f8,g7,h6,h8";
  // Plies of history kept: enough for the search depth plus the plies that
  // can still matter for repetitions (30 plies without a man move or capture
  // are already a draw). do_move drops the oldest states when it runs out.
  static constexpr int kHistory = 1024;
  static constexpr int kHistoryKept = 256;
  static constexpr uint16_t kNoLimit = 0xFFFF;

  Position();  // the start position
  // Copies only the live part of the history.
  Position(const Position& other) { *this = other; }
  Position& operator=(const Position& other);

  // PDN FEN, algebraic (W:Wa1,c1,Kd8:Bb8) or numeric (W:W21,22,K5:B1-3)
  // squares, W/B in either case; trailing fields such as :H0:F1 and a final
  // '.' are ignored. Draw counters start at zero.
  static Expected<Position, FenParseError> from_fen(std::string_view fen);
  // PDN FEN with algebraic squares, each side's pieces by file then rank.
  std::string fen() const;

  // Accessors
  const StateInfo& state() const { return *st_; }
  const Board& board() const { return state().board; }
  Bitboard pieces() const { return board().pieces(); }
  Bitboard pieces(Color c) const { return board().by_color[c]; }
  Bitboard kings() const { return board().kings; }
  Bitboard men() const { return pieces() & ~kings(); }
  Bitboard kings(Color c) const { return board().kings_of(c); }
  Bitboard men(Color c) const { return board().men(c); }
  int count(Color c) const { return popcount(pieces(c)); }
  int count_men(Color c) const { return popcount(men(c)); }
  int count_kings(Color c) const { return popcount(kings(c)); }
  Piece piece_on(Square s) const;
  bool empty(Square s) const { return !(pieces() & square_bb(s)); }
  Color side_to_move() const { return side_; }
  Key key() const { return state().key; }
  // Plies since a notional start with White to move (so it is odd exactly
  // when Black is to move).
  int game_ply() const { return ply_offset_ + int(st_ - states_); }

  // Whether the legal move m crowns a man (at its end or during a capture).
  bool crowns(Move m) const {
    return side_ == White ? board().crowns<White>(m) : board().crowns<Black>(m);
  }

  // m must be legal (from generate()).
  void do_move(Move m) { side_ == White ? do_move<White>(m) : do_move<Black>(m); }
  // The same when the side to move, Us, is known at compile time.
  template <Color Us>
  void do_move(Move m);
  void undo_move(Move) {
    side_ = ~side_;
    --st_;
  }
  void do_null_move();
  void undo_null_move();

  // Draw-rule counters (see the top of this file).
  int reversible_plies() const { return state().reversible; }
  int balance_plies() const { return state().balance; }
  // Plies of unchanged balance after which the game is drawn with this
  // material (7.2.5, 7.2.6, 7.2.8), or kNoLimit.
  int balance_limit() const;
  // 7.2.7: plies for which the lone king has stood on a1-h8 in such an
  // ending, -1 when the position is not one with the king on a1-h8. Counts
  // back through the history, so only material and boards are stored.
  int road_plies() const { return road_plies(kNoLimit); }

  // `ply` is the distance to the root of a search: a repetition inside the
  // search tree counts as a draw at once; one that reaches back before the
  // root only when it is the third occurrence.
  bool is_repetition(int ply) const;
  bool is_threefold_repetition() const { return is_repetition(0); }
  // The draw rule, other than repetition, that declares the game drawn now.
  DrawRule draw_rule() const;
  // Cheap test for the search: any draw rule, repetitions as is_repetition.
  // Does not look for a loss (see game_status()). The material rules are
  // looked at only after 10 plies without capture or crowning, the shortest
  // of their limits.
  bool is_draw(int ply) const {
    const StateInfo& st = state();
    return st.reversible >= 30 || (st.balance >= 10 && draw_rule() != DrawRule::none) ||
           is_repetition(ply);
  }

  // The key computed from scratch (tests compare it with the incremental one).
  Key compute_key() const;

  friend bool operator==(const Position& a, const Position& b);

 private:
  Position(Bitboard white, Bitboard black, Bitboard kings, Color side);
  void compact_history();
  // road_plies(), counting back no further than `cap` plies.
  int road_plies(int cap) const;

  Color side_ = White;
  int ply_offset_ = 0;  // game_ply() of states_[0]
  StateInfo* st_ = states_;
  StateInfo states_[kHistory];
};

template <Color Us>
inline void Position::do_move(Move m) {
  constexpr Color Them = ~Us;
  if (st_ == states_ + kHistory - 1) [[unlikely]]
    compact_history();
  const StateInfo& prev = *st_;
  const Board& b = prev.board;
  const bool king = b.kings & square_bb(m.from);
  const bool crowned = b.crowns<Us>(m);
  Key key = prev.key ^ kZobrist.side ^ kZobrist.piece[Us][king][m.from] ^
            kZobrist.piece[Us][king || crowned][m.to];
  for (Bitboard c = m.captured & ~b.kings; c;) key ^= kZobrist.piece[Them][0][pop_lsb(c)];
  for (Bitboard c = m.captured & b.kings; c;) key ^= kZobrist.piece[Them][1][pop_lsb(c)];

  StateInfo next;
  next.board = b.after<Us>(m);
  next.reversible = uint16_t(king && !m.captured ? prev.reversible + 1 : 0);
  next.balance = uint16_t(m.captured || crowned ? 0 : prev.balance + 1);
  next.key = key;
  next.plies_from_null = uint16_t(prev.plies_from_null + 1);
  *++st_ = next;
  side_ = Them;
}

}  // KIBITZ_NAMESPACE(draughts)
