// PDN FEN: both square notations, ranges, ignored fields, output, and every
// error class.
#include <gtest/gtest.h>

#include "draughts/movegen.h"
#include "draughts/notation.h"

namespace kibitz::draughts {
namespace {

FenError error_of(std::string_view fen) {
  auto pos = Position::from_fen(fen);
  EXPECT_FALSE(pos) << fen << " was accepted";
  return pos ? FenError::unknown : pos.error().kind;
}

TEST(DraughtsFen, StartPositionRoundTrips) {
  const Position pos;
  EXPECT_EQ(pos.fen(), Position::kStartFen);
  EXPECT_EQ(pos.side_to_move(), White);
  EXPECT_EQ(pos.count(White), 12);
  EXPECT_EQ(pos.count(Black), 12);
  EXPECT_EQ(pos.kings(), 0u);
  EXPECT_EQ(pos.men(White), rank_bb(0) | rank_bb(1) | rank_bb(2));
}

TEST(DraughtsFen, NumericSquaresAndRanges) {
  const Position start;
  for (const char* fen :
       {"W:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12", "W:W21-32:B1-12",
        "W:W21-24,25,26-32:B1-12.", "w:w21-32:b1-12:H0:F1", " W:B1-12:W21-32 "}) {
    auto pos = Position::from_fen(fen);
    ASSERT_TRUE(pos) << fen << ": " << pos.error().message;
    EXPECT_TRUE(*pos == start) << fen;
  }
}

TEST(DraughtsFen, KingsAndSideToMove) {
  auto pos = Position::from_fen("B:WKa1,c3,K32:BKh8,Kb8,d6");
  ASSERT_TRUE(pos) << pos.error().message;
  EXPECT_EQ(pos->side_to_move(), Black);
  EXPECT_EQ(pos->kings(White), square_bb(A1) | square_bb(G1));
  EXPECT_EQ(pos->kings(Black), square_bb(H8) | square_bb(B8));
  EXPECT_EQ(pos->men(White), square_bb(C3));
  EXPECT_EQ(pos->piece_on(D6), Piece::black_man);
  EXPECT_EQ(pos->piece_on(G1), Piece::white_king);
  EXPECT_EQ(pos->piece_on(E5), Piece::none);
  EXPECT_EQ(pos->fen(), "B:WKa1,c3,Kg1:BKb8,d6,Kh8");
  auto reread = Position::from_fen(pos->fen());
  ASSERT_TRUE(reread);
  EXPECT_TRUE(*reread == *pos);
}

TEST(DraughtsFen, EmptySidesAreAllowed) {
  auto pos = Position::from_fen("W:W:Bd4");
  ASSERT_TRUE(pos) << pos.error().message;
  EXPECT_EQ(pos->count(White), 0);
  EXPECT_EQ(pos->fen(), "W:W:Bd4");
}

TEST(DraughtsFen, SquareNumbers) {
  EXPECT_EQ(square_from_number(1), B8);
  EXPECT_EQ(square_from_number(4), H8);
  EXPECT_EQ(square_from_number(5), A7);
  EXPECT_EQ(square_from_number(29), A1);
  EXPECT_EQ(square_from_number(32), G1);
  for (int n = 1; n <= 32; ++n) EXPECT_EQ(square_number(square_from_number(n)), n);
}

TEST(DraughtsFen, Errors) {
  EXPECT_EQ(error_of("W:Wa2:Bh8"), FenError::light_square);
  EXPECT_EQ(error_of("W:Wb1:Bh8"), FenError::light_square);
  EXPECT_EQ(error_of("W:Wi3:Bh8"), FenError::off_board);
  EXPECT_EQ(error_of("W:Wa9:Bh8"), FenError::off_board);
  EXPECT_EQ(error_of("W:W33:B1"), FenError::off_board);
  EXPECT_EQ(error_of("W:W0:B1"), FenError::off_board);
  EXPECT_EQ(error_of("W:Wc3,c3:Bh8"), FenError::duplicate_square);
  EXPECT_EQ(error_of("W:Wc3:Bc3"), FenError::duplicate_square);
  EXPECT_EQ(error_of("W:W21,21-24:B1"), FenError::duplicate_square);
  EXPECT_EQ(error_of("W:Wb8:Bh6"), FenError::man_on_promotion_rank);
  EXPECT_EQ(error_of("W:Wc3:Ba1"), FenError::man_on_promotion_rank);
  EXPECT_EQ(error_of("W:W1-13:B32"), FenError::too_many_pieces);
  EXPECT_EQ(error_of("X:Wc3:Bh8"), FenError::side_to_move);
  EXPECT_EQ(error_of("Wc3:Bh8"), FenError::side_to_move);
  EXPECT_EQ(error_of(""), FenError::syntax);
  EXPECT_EQ(error_of("W:Wc3,:Bh8"), FenError::syntax);
  EXPECT_EQ(error_of("W:Wc:Bh8"), FenError::syntax);
  EXPECT_EQ(error_of("W:W?3:Bh8"), FenError::syntax);
  EXPECT_EQ(error_of("W:W12-5:B1"), FenError::syntax);
  EXPECT_EQ(error_of("W:Wc3:Wd4:Bh8"), FenError::syntax);
  EXPECT_EQ(error_of("W:Wc3::Bh8"), FenError::syntax);
  EXPECT_EQ(error_of("W:3c:Bh8"), FenError::syntax);
  // Kings may stand on any rank; a king on its own back rank is fine too.
  EXPECT_TRUE(Position::from_fen("W:WKb8,Ka1:BKh2,Kc1"));
}

TEST(DraughtsFen, ErrorMessagesNameTheProblem) {
  auto pos = Position::from_fen("W:Wa2:Bh8");
  ASSERT_FALSE(pos);
  EXPECT_NE(pos.error().message.find("a2"), std::string::npos) << pos.error().message;
  EXPECT_EQ(to_string(pos.error().kind), "light_square");
}

// Positions no game reaches, each refused with a message that says why: more
// than 12 pieces a side, a man on its crowning row.
TEST(DraughtsFen, RefusalsSayWhy) {
  const struct {
    const char* fen;
    FenError kind;
    const char* says;
  } cases[] = {
      {"W:W1-13:B32", FenError::too_many_pieces, "White has 13 pieces; a side has at most 12"},
      {"B:WKa1:BK1-13", FenError::too_many_pieces, "Black has 13 pieces; a side has at most 12"},
      {"W:Wb8:Bh6", FenError::man_on_promotion_rank, "White man on b8"},
      {"B:Wc3:Ba1", FenError::man_on_promotion_rank, "Black man on a1"},
  };
  for (const auto& c : cases) {
    const auto pos = Position::from_fen(c.fen);
    ASSERT_FALSE(pos) << c.fen;
    EXPECT_EQ(pos.error().kind, c.kind) << c.fen << ": " << pos.error().message;
    EXPECT_NE(pos.error().message.find(c.says), std::string::npos)
        << c.fen << ": " << pos.error().message;
  }
}

// Up to the limits: twelve kings a side (the second, with the most captures an
// annealing search found for twelve kings against twelve pieces), and the
// positions with the most moves found (see kMaxMoves in types.h), listed in
// full. The counts agree with the referee (tools/draughts/rules.py; see
// tests/server/test_extreme_positions.py).
TEST(DraughtsFen, AcceptsUpToTheLimits) {
  const struct {
    const char* fen;
    int moves;
  } cases[] = {
      {"W:WK1-12:BK21-32", 13},
      {"W:WKa1,Kh4,Kg5,Kd8,Kc1,Ka3,Kh6,Kf8,Kd2,Kb4,Kh8,Kg1:Be7,Ke1,c3,Ka5,Ke3,Kc5,h2,Kg3,f4,e5,"
       "Kc7,b8",
       26},
      {"W:WKa1,Kh4,Kc1,Kh8,Kh2,Kb8:BKg5,Ke7,b2,g7,b4,e3,b6,Kg3,e5", 68},
      {"W:WKa1,Kh4,Kd8,Ka3,Kf8,Ke1,Ka5,Kh8,Kg1,Ka7,Kf4,Kb8:B", 68},
  };
  for (const auto& c : cases) {
    const auto pos = Position::from_fen(c.fen);
    ASSERT_TRUE(pos) << c.fen << ": " << pos.error().message;
    const int n = MoveList(*pos).size();
    EXPECT_EQ(uint64_t(n), count_legal_moves(*pos)) << c.fen;
    EXPECT_LT(n, kMaxMoves) << c.fen;  // a full list may have dropped moves
    EXPECT_EQ(n, c.moves) << c.fen;
  }
}

}  // namespace
}  // namespace kibitz::draughts
