// Move notation: output, round trips for every legal move, the capture-path
// matching, and every error class.
#include "draughts/notation.h"

#include <gtest/gtest.h>

#include "common/prng.h"
#include "support/draughts_fen.h"
#include "support/test_data.h"

namespace kibitz::draughts {
namespace {

MoveError error_of(const Position& pos, std::string_view text) {
  auto m = parse_move(pos, text);
  EXPECT_FALSE(m) << text << " was accepted";
  return m ? MoveError::unknown : m.error().kind;
}

TEST(DraughtsNotation, QuietAndCaptureStrings) {
  const Position start;
  EXPECT_EQ(to_string(start, Move(C3, D4)), "c3-d4");
  const Position pos = from_fen("W:Wc3:Bd4,f6,h8");
  const MoveList moves(pos);
  ASSERT_EQ(moves.size(), 1);
  EXPECT_EQ(to_string(pos, *moves.begin()), "c3:e5:g7");
}

TEST(DraughtsNotation, KingCaptureOnOneDiagonalIsOneMove) {
  // The README example: a1:c3:f6 and a1:d4:f6 are the same move.
  const Position pos =
      from_fen("B:We1,g1,b2,d2,f2,h2,a3,e3,g3,e5:BKa1,d6,h6,a7,c7,e7,g7,b8,d8,f8,h8");
  auto a = parse_move(pos, "a1:c3:f6");
  auto b = parse_move(pos, "a1:d4:f6");
  auto c = parse_move(pos, "a1:f6");
  auto d = parse_move(pos, "a1xf6");
  ASSERT_TRUE(a && b && c && d);
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(*a, *c);
  EXPECT_EQ(*a, *d);
  EXPECT_EQ(a->captured, square_bb(B2) | square_bb(E5));
  EXPECT_EQ(*parse_move(pos, "d6:f4"), Move(D6, F4, square_bb(E5)));
}

TEST(DraughtsNotation, NumericSquares) {
  const Position start;
  auto m = parse_move(start, "22-18");  // c3-d4
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(*m, Move(C3, D4));
  const Position pos = from_fen("W:Wc3:Bd4,f6,h8");
  auto c = parse_move(pos, "22x15x8");  // c3:e5:g7
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->to, G7);
}

TEST(DraughtsNotation, ShorthandAndAmbiguity) {
  // Two moves lead the man from f4 to b4: over e5 and c5, or over g5 and g7
  // (crowned on f8) and then c5 as a king. "f4:b4" is ambiguous; a turning
  // point decides.
  const Position pos = from_fen("W:Wf4,g3,h2:Bc5,e5,g5,g7");
  auto m = parse_move(pos, "f4:b4");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().kind, MoveError::ambiguous);
  EXPECT_NE(m.error().message.find("f4:d6:b4"), std::string::npos) << m.error().message;
  auto direct = parse_move(pos, "f4:d6:b4");
  ASSERT_TRUE(direct) << direct.error().message;
  EXPECT_EQ(direct->captured, square_bb(E5) | square_bb(C5));
  auto around = parse_move(pos, "f4:f8:b4");
  ASSERT_TRUE(around) << around.error().message;
  EXPECT_EQ(around->captured, square_bb(G5) | square_bb(G7) | square_bb(C5));
  EXPECT_EQ(*parse_move(pos, "f4:h6:f8:b4"), *around);
  EXPECT_EQ(to_string(pos, *around), "f4:h6:f8:b4");
}

TEST(DraughtsNotation, Errors) {
  const Position start;
  EXPECT_EQ(error_of(start, ""), MoveError::syntax);
  EXPECT_EQ(error_of(start, "c3"), MoveError::syntax);
  EXPECT_EQ(error_of(start, "c3-d9"), MoveError::syntax);
  EXPECT_EQ(error_of(start, "c3-c4"), MoveError::syntax);  // light square
  EXPECT_EQ(error_of(start, "c3-d4-e5"), MoveError::syntax);
  EXPECT_EQ(error_of(start, "c3-d4:e5"), MoveError::syntax);
  EXPECT_EQ(error_of(start, "33-18"), MoveError::syntax);
  EXPECT_EQ(error_of(start, "c3-b2"), MoveError::illegal);
  EXPECT_EQ(error_of(start, "d4-e5"), MoveError::illegal);
  EXPECT_EQ(error_of(start, "c3:e5"), MoveError::illegal);
  // A quiet move while a capture is pending.
  const Position pos = from_fen("W:Wc3,g3:Bd4,h8");
  auto m = parse_move(pos, "g3-h4");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().kind, MoveError::illegal);
  EXPECT_NE(m.error().message.find("mandatory"), std::string::npos);
  // "c3-e5" for the capture is read as the capture.
  auto c = parse_move(pos, "c3-e5");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->captured, square_bb(D4));
}

// Every legal move of every position along random games: its string reads
// back as the same move, and so does its from:to shorthand when no other
// move shares the two squares.
TEST(DraughtsNotation, EveryLegalMoveRoundTrips) {
  Prng rng(11);
  int moves_checked = 0;
  std::vector<std::string> fens = test::load_perft_fens("draughts/perft.epd");
  for (const auto& fen : fens) {
    for (int game = 0; game < 10; ++game) {
      Position pos = from_fen(fen);
      for (int ply = 0; ply < 150; ++ply) {
        const MoveList moves(pos);
        if (moves.empty()) break;
        for (Move m : moves) {
          const std::string text = to_string(pos, m);
          auto back = parse_move(pos, text);
          ASSERT_TRUE(back) << pos.fen() << " " << text << ": " << back.error().message;
          ASSERT_EQ(*back, m) << pos.fen() << " " << text;
          int same_ends = 0;
          for (Move x : moves) same_ends += x.from == m.from && x.to == m.to;
          const std::string shorthand =
              square_to_string(m.from) + (m.is_capture() ? ":" : "-") + square_to_string(m.to);
          auto short_back = parse_move(pos, shorthand);
          if (same_ends == 1) {
            ASSERT_TRUE(short_back) << pos.fen() << " " << shorthand;
            ASSERT_EQ(*short_back, m);
          } else {
            ASSERT_FALSE(short_back);
            ASSERT_EQ(short_back.error().kind, MoveError::ambiguous);
          }
          ++moves_checked;
        }
        pos.do_move(*(moves.begin() + rng.next() % unsigned(moves.size())));
      }
    }
  }
  EXPECT_GT(moves_checked, 10'000);
}

}  // namespace
TEST(DraughtsNotation, AFullPathIsExactEvenWhenAShorthandIsAmbiguous) {
  // Found by draughts_fen_fuzz: the king on c3 can take g7 alone (c3:h8) or
  // four pieces ending on h8 too (c3:a5:d8:f6:h8).
  const Position pos = *Position::from_fen("B:Wa7,b4,c7,e7,g7:BKc3");
  const auto single = parse_move(pos, "c3:h8");
  ASSERT_TRUE(single) << single.error().message;
  EXPECT_EQ(popcount(single->captured), 1);
  const auto four = parse_move(pos, "c3:a5:d8:f6:h8");
  ASSERT_TRUE(four);
  EXPECT_EQ(popcount(four->captured), 4);
  for (Move m : MoveList(pos)) EXPECT_EQ(parse_move(pos, to_string(pos, m)).value(), m);
}

}  // namespace kibitz::draughts
