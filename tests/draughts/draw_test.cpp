// Game end and the FMJD-64 draw rules, each on its own. Moves are counted
// in plies: N moves of the rules are 2N plies (see draughts/position.h).
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "draughts/game_status.h"
#include "draughts/movegen.h"
#include "draughts/notation.h"
#include "support/draughts_fen.h"

namespace kibitz::draughts {
namespace {

bool is_king_move(const Position& pos, Move m) { return pos.kings() & square_bb(m.from); }

// Plays `plies` quiet moves that `ok` accepts, each leading to a position
// not seen before in which the side to move has no capture (so the material
// stays as it is), searching depth-first for such a line. Returns the moves
// played: `plies` of them, or none when there is no such line.
using Filter = std::function<bool(const Position& pos, Move m)>;
bool walk_from(Position& pos, int plies, const Filter& ok, std::set<Key>& seen,
               std::vector<Move>& line, int& budget) {
  if (plies == 0) return true;
  const MoveList moves(pos);
  for (Move m : moves) {
    if (m.is_capture() || !ok(pos, m) || --budget < 0) continue;
    pos.do_move(m);
    if (!has_capture(pos) && seen.insert(pos.key()).second) {
      line.push_back(m);
      if (walk_from(pos, plies - 1, ok, seen, line, budget)) return true;
      line.pop_back();
      seen.erase(pos.key());
    }
    pos.undo_move(m);
  }
  return false;
}

std::vector<Move> walk(Position& pos, int plies, const Filter& ok) {
  std::set<Key> seen{pos.key()};
  std::vector<Move> line;
  int budget = 1'000'000;
  walk_from(pos, plies, ok, seen, line, budget);
  return line;
}

// Walks `plies` plies and checks that the draw comes on the last one, not
// before.
void expect_draw_after(Position& pos, int plies, const Filter& ok) {
  const auto line = walk(pos, plies, ok);
  ASSERT_EQ(int(line.size()), plies) << "no line found";
  EXPECT_TRUE(pos.is_draw(0));
  pos.undo_move(line.back());
  EXPECT_FALSE(pos.is_draw(0));
  EXPECT_EQ(game_status(pos), GameStatus::ongoing);
  pos.do_move(line.back());
}

// Kings only.
const Filter kKingsOnly = [](const Position& pos, Move m) { return is_king_move(pos, m); };

// Kings, except that a man steps (without being crowned) whenever 20 plies
// have gone without a man move, so the 15-move king rule never ends the game.
const Filter kMenNowAndThen = [](const Position& pos, Move m) {
  if (pos.reversible_plies() < 20) return is_king_move(pos, m);
  return !is_king_move(pos, m) && !(square_bb(m.to) & promotion_rank_bb(pos.side_to_move()));
};

TEST(DraughtsDraw, LossWithoutPiecesOrMoves) {
  EXPECT_EQ(game_status(from_fen("W:W:Bd4")), GameStatus::loss);
  EXPECT_EQ(game_status(from_fen("W:Wa1:Bb2,c3")), GameStatus::loss);  // blocked
  EXPECT_EQ(game_status(Position()), GameStatus::ongoing);
  // Taking the last piece wins.
  Position pos = from_fen("W:Wc3:Bd4");
  pos.do_move(*parse_move(pos, "c3:e5"));
  EXPECT_EQ(game_status(pos), GameStatus::loss);
  EXPECT_EQ(pos.side_to_move(), Black);
}

TEST(DraughtsDraw, ThreefoldRepetition) {
  // 6 pieces with kings on both sides: only repetition can end this early.
  Position pos = from_fen("W:WKa1,c1,e1:BKh2,d8,f8");
  const Move cycle[4] = {Move(A1, B2), Move(H2, G1), Move(B2, A1), Move(G1, H2)};
  for (int i = 0; i < 4; ++i) pos.do_move(cycle[i]);
  EXPECT_FALSE(pos.is_threefold_repetition());
  EXPECT_TRUE(pos.is_repetition(5));   // inside a search 5 plies deep: a draw
  EXPECT_FALSE(pos.is_repetition(4));  // the earlier occurrence is at the root
  EXPECT_TRUE(pos.is_draw(5));
  EXPECT_FALSE(pos.is_draw(4));
  EXPECT_EQ(game_status(pos), GameStatus::ongoing);
  for (int i = 0; i < 4; ++i) pos.do_move(cycle[i]);
  EXPECT_TRUE(pos.is_threefold_repetition());
  EXPECT_TRUE(pos.is_draw(0));
  EXPECT_EQ(game_status(pos), GameStatus::threefold_repetition);
  // A man move in between starts the count again.
  Position reset = from_fen("W:WKa1,c1,e1:BKh2,d8,f8");
  for (int i = 0; i < 4; ++i) reset.do_move(cycle[i]);
  reset.do_move(*parse_move(reset, "c1-d2"));
  reset.do_move(*parse_move(reset, "d8-c7"));
  EXPECT_FALSE(reset.is_repetition(100));
}

TEST(DraughtsDraw, FifteenMovesOfKingsOnly) {
  // 7.2.3. Ten pieces: none of the material rules applies.
  Position pos = from_fen("W:WKc3,a1,c1,e1,g1:BKh6,b8,d8,f8,h8");
  ASSERT_EQ(pos.balance_limit(), Position::kNoLimit);
  expect_draw_after(pos, 30, kKingsOnly);
  EXPECT_EQ(pos.reversible_plies(), 30);
  EXPECT_EQ(pos.draw_rule(), DrawRule::king_moves);
  EXPECT_EQ(game_status(pos), GameStatus::king_moves_rule);
  // A man move on the 30th ply instead resets the count.
  Position man_move = from_fen("W:WKc3,a1,c1,e1,g1:BKh6,b8,d8,f8,h8");
  const auto line = walk(man_move, 30, kKingsOnly);
  ASSERT_EQ(line.size(), 30u);
  man_move.undo_move(line.back());
  ASSERT_EQ(walk(man_move, 1, [](const Position& p, Move m) { return !is_king_move(p, m); }).size(),
            1u);
  EXPECT_EQ(man_move.reversible_plies(), 0);
  EXPECT_FALSE(man_move.is_draw(0));
}

TEST(DraughtsDraw, ThreeKingsAgainstALoneKing) {
  // 7.2.5 with four kings (the main-road rule needs exactly three pieces).
  Position pos = from_fen("W:WKa3,Kc1,Ke1,Kg1:BKh6");
  ASSERT_EQ(pos.balance_limit(), 30);
  expect_draw_after(pos, 30, kKingsOnly);
  EXPECT_EQ(pos.draw_rule(), DrawRule::three_kings);
  EXPECT_EQ(game_status(pos), GameStatus::three_kings_rule);
  // Men beside the kings do not matter; a crowning restarts the count.
  Position with_man = from_fen("W:WKa3,Kc1,Ke1,c7:BKh6");
  EXPECT_EQ(with_man.balance_limit(), 30);
  with_man.do_move(*parse_move(with_man, "c7-d8"));
  EXPECT_EQ(with_man.balance_plies(), 0);
  EXPECT_EQ(with_man.balance_limit(), 30);
  // Two kings against one: not this rule.
  EXPECT_NE(from_fen("W:WKa3,Kc1,e1,g1:BKh6").balance_limit(), 30);
}

TEST(DraughtsDraw, ThirtyMovesWithFourOrFivePieces) {
  // 7.2.6: kings on both sides, five pieces, men moving now and then.
  Position pos = from_fen("W:WKc3,a1,e1:BKh6,h8");
  ASSERT_EQ(pos.balance_limit(), 60);
  expect_draw_after(pos, 60, kMenNowAndThen);
  EXPECT_LT(pos.reversible_plies(), 30);
  EXPECT_EQ(pos.balance_plies(), 60);
  EXPECT_EQ(pos.draw_rule(), DrawRule::balance);
  EXPECT_EQ(game_status(pos), GameStatus::balance_rule);
}

TEST(DraughtsDraw, SixtyMovesWithSixOrSevenPieces) {
  Position pos = from_fen("W:WKc3,a1,e1,g1:BKh6,h8,d8");
  ASSERT_EQ(pos.balance_limit(), 120);
  expect_draw_after(pos, 120, kMenNowAndThen);
  EXPECT_LT(pos.reversible_plies(), 30);
  EXPECT_EQ(game_status(pos), GameStatus::balance_rule);
  // Without kings on both sides, or with eight pieces, there is no limit.
  EXPECT_EQ(from_fen("W:WKc3,a1,e1,g1:Bf6,h8,d8").balance_limit(), Position::kNoLimit);
  EXPECT_EQ(from_fen("W:WKc3,a1,e1,g1:BKh6,h8,d8,b8").balance_limit(), Position::kNoLimit);
}

TEST(DraughtsDraw, LoneKingOnTheMainRoad) {
  // 7.2.7: two kings and a man against a lone king on a1-h8.
  const Filter stay_on_road = [](const Position& pos, Move m) {
    if (pos.side_to_move() == Black) return bool(square_bb(m.to) & kLongDiagonal);
    return is_king_move(pos, m);
  };
  Position pos = from_fen("W:WKa3,Kc1,g1:BKd4");
  ASSERT_EQ(pos.road_plies(), 0);
  ASSERT_EQ(pos.balance_limit(), 60);
  expect_draw_after(pos, 10, stay_on_road);
  EXPECT_EQ(pos.road_plies(), 10);
  EXPECT_EQ(pos.draw_rule(), DrawRule::main_road);
  EXPECT_EQ(game_status(pos), GameStatus::main_road_rule);
  // Off the road the count stops, and starts again from zero on it.
  Position off = from_fen("B:WKa3,Kc1,g1:BKd4");
  ASSERT_EQ(walk(off, 1, [](const Position&, Move m) { return !(square_bb(m.to) & kLongDiagonal); })
                .size(),
            1u);
  EXPECT_EQ(off.road_plies(), -1);
  // Not this rule with four pieces against the king, or a man alone.
  EXPECT_EQ(from_fen("W:WKa3,Kc1,g1,e1:BKd4").road_plies(), -1);
  EXPECT_EQ(from_fen("W:WKa3,Kc1,g1:Bd4").road_plies(), -1);
}

TEST(DraughtsDraw, SmallEndgames) {
  // 7.2.8: king against king, two kings or king and man against a king.
  for (const char* fen : {"W:WKc3:BKh6", "W:WKc3,Ka1:BKh6", "W:WKc3,a3:BKh6"}) {
    SCOPED_TRACE(fen);
    Position pos = from_fen(fen);
    ASSERT_EQ(pos.balance_limit(), 10);
    expect_draw_after(pos, 10, kKingsOnly);
    EXPECT_EQ(pos.draw_rule(), DrawRule::small_endgame);
    EXPECT_EQ(game_status(pos), GameStatus::small_endgame_rule);
  }
  // Two kings against a man: no kings on both sides, no limit.
  EXPECT_EQ(from_fen("W:WKc3,Ka1:Bh6").balance_limit(), Position::kNoLimit);
}

TEST(DraughtsDraw, StatusNames) {
  EXPECT_EQ(to_string(GameStatus::main_road_rule), "main_road_rule");
  EXPECT_EQ(to_string(GameStatus::loss), "loss");
}

}  // namespace
}  // namespace kibitz::draughts
