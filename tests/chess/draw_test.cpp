// Game end and draws by rule: mate, stalemate, 50 moves, repetition,
// insufficient material.
#include <gtest/gtest.h>

#include "chess/notation.h"

namespace kibitz::chess {
namespace {

Position play(const char* fen, std::initializer_list<const char*> moves) {
  auto pos = Position::from_fen(fen);
  EXPECT_TRUE(pos) << fen;
  for (const char* text : moves) {
    auto m = parse_move(*pos, text);
    EXPECT_TRUE(m) << text;
    if (m) pos->do_move(*m);
  }
  return *pos;
}

TEST(ChessDraw, MateAndStalemate) {
  EXPECT_EQ(game_status(play(Position::kStartFen.data(), {"f3", "e5", "g4", "Qh4"})),
            GameStatus::checkmate);
  EXPECT_EQ(game_status(*Position::from_fen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")),
            GameStatus::stalemate);
  EXPECT_EQ(game_status(Position()), GameStatus::ongoing);
}

TEST(ChessDraw, FiftyMoveRule) {
  Position pos = play("4k3/8/8/8/8/8/4P3/R3K3 w - - 98 80", {"Ra2"});
  EXPECT_FALSE(pos.fifty_move_rule());
  pos = play("4k3/8/8/8/8/8/4P3/R3K3 w - - 98 80", {"Ra2", "Kd8"});
  EXPECT_TRUE(pos.fifty_move_rule());
  EXPECT_EQ(game_status(pos), GameStatus::fifty_move_rule);
  // A pawn move or a capture resets the count.
  EXPECT_EQ(play("4k3/8/8/8/8/8/4P3/R3K3 w - - 99 80", {"e4"}).rule50(), 0);
}

TEST(ChessDraw, MateOnTheHundredthPlyWins) {
  // Rule 9.3: the 50-move claim does not stand against a mate on that move.
  const Position pos = play("7k/R7/6K1/8/8/8/8/8 w - - 99 80", {"Ra8"});
  EXPECT_TRUE(pos.fifty_move_rule());
  EXPECT_EQ(game_status(pos), GameStatus::checkmate);
}

TEST(ChessDraw, ThreefoldRepetition) {
  const char* start = Position::kStartFen.data();
  Position twice = play(start, {"Nf3", "Nf6", "Ng1", "Ng8"});
  EXPECT_FALSE(twice.is_threefold_repetition());
  EXPECT_TRUE(twice.is_repetition(5));   // inside a search 5 plies deep: a draw
  EXPECT_FALSE(twice.is_repetition(4));  // the earlier occurrence is at the root
  Position thrice = play(start, {"Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1", "Ng8"});
  EXPECT_TRUE(thrice.is_threefold_repetition());
  EXPECT_EQ(game_status(thrice), GameStatus::threefold_repetition);
  // An irreversible move in between resets the count.
  Position reset =
      play(start, {"Nf3", "Nf6", "Ng1", "Ng8", "e4", "e5", "Nf3", "Nf6", "Ng1", "Ng8"});
  EXPECT_FALSE(reset.is_threefold_repetition());
}

TEST(ChessDraw, InsufficientMaterial) {
  const auto insufficient = [](const char* fen) {
    return Position::from_fen(fen)->has_insufficient_material();
  };
  EXPECT_TRUE(insufficient("4k3/8/8/8/8/8/8/4K3 w - - 0 1"));
  EXPECT_TRUE(insufficient("4k3/8/8/8/8/8/8/4KN2 w - - 0 1"));
  EXPECT_TRUE(insufficient("4kb2/8/8/8/8/8/8/4K3 w - - 0 1"));
  // Bishops only: dead when all stand on squares of one colour.
  EXPECT_TRUE(insufficient("4k1b1/8/8/8/8/8/8/4KB2 w - - 0 1"));   // g8, f1: both light
  EXPECT_FALSE(insufficient("4kb2/8/8/8/8/8/8/4KB2 w - - 0 1"));   // f8 dark, f1 light
  EXPECT_FALSE(insufficient("4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1"));  // c1 dark, f1 light
  EXPECT_FALSE(insufficient("4k3/8/8/8/8/8/8/3NKN2 w - - 0 1"));
  EXPECT_FALSE(insufficient("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"));
  EXPECT_FALSE(insufficient("4k3/8/8/8/8/8/8/4KR2 w - - 0 1"));
  EXPECT_EQ(game_status(*Position::from_fen("4k3/8/8/8/8/8/8/4KN2 w - - 0 1")),
            GameStatus::insufficient_material);
}

}  // namespace
}  // namespace kibitz::chess
