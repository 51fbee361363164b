// FEN: each class of bad input has its own error; good FENs round-trip.
#include <gtest/gtest.h>

#include "chess/movegen.h"
#include "chess/position.h"
#include "support/test_data.h"

namespace kibitz::chess {
namespace {

struct BadFen {
  const char* fen;
  FenError kind;
};

class ChessFenError : public testing::TestWithParam<BadFen> {};

TEST_P(ChessFenError, IsRejectedWithItsKind) {
  const auto result = Position::from_fen(GetParam().fen);
  ASSERT_FALSE(result) << GetParam().fen;
  EXPECT_EQ(result.error().kind, GetParam().kind)
      << GetParam().fen << ": " << result.error().message;
  EXPECT_FALSE(result.error().message.empty());
}

const BadFen kBadFens[] = {
    {"", FenError::field_count},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w", FenError::field_count},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0", FenError::field_count},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 x", FenError::field_count},
    {"rnbqkbnr/ppppxppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", FenError::bad_piece},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN0 w KQkq - 0 1", FenError::bad_piece},
    {"rnbqkbnr/ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", FenError::rank_length},
    {"rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", FenError::bad_piece},
    {"rnbqkbnr/pppppppp/45/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", FenError::rank_length},
    {"rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", FenError::rank_length},
    {"rnbqkbnr/pppppppp/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", FenError::rank_count},
    {"rnbqkbnr/pppppppp/8/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", FenError::rank_count},
    {"rnbq1bnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1", FenError::king_count},
    {"rnbqkbnr/pppppppp/8/8/3k4/8/PPPPPPPP/RNBQKBNR w KQ - 0 1", FenError::king_count},
    {"rnbqkbnP/pppppppp/8/8/8/8/PPPPPPP1/RNBQKBNR w KQq - 0 1", FenError::pawn_on_back_rank},
    {"4k3/8/8/8/8/8/8/p3K3 w - - 0 1", FenError::pawn_on_back_rank},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", FenError::side_to_move},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR W KQkq - 0 1", FenError::side_to_move},
    {"4k3/8/8/8/8/8/4R3/4K3 w - - 0 1", FenError::opponent_in_check},
    {"4k3/8/8/1B6/8/8/8/4K3 w - - 0 1", FenError::opponent_in_check},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1 w KQkq - 0 1", FenError::castling_rights},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQ1BNR w KQkq - 0 1", FenError::king_count},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQ1KN1 w KQkq - 0 1", FenError::castling_rights},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkqX - 0 1", FenError::castling_rights},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KKqk - 0 1", FenError::castling_rights},
    {"1nbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", FenError::castling_rights},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1", FenError::en_passant},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1", FenError::en_passant},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e6 0 1", FenError::en_passant},
    {"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e6 0 1", FenError::en_passant},
    {"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq 3e 0 1", FenError::en_passant},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - -1 1", FenError::counters},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - x 1", FenError::counters},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 y", FenError::counters},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 123456 1", FenError::counters},
    // Material no game reaches (the move-list capacity rests on these).
    {"QQQQQQnk/Q4Q1P/Q5QQ/Q6Q/Q6Q/Q6Q/Q6Q/KQQQQQQQ w - - 0 1", FenError::too_many_pieces},
    {"4k3/8/8/8/8/4N3/PPPPPPPP/RNBQKBNR w - - 0 1", FenError::too_many_pieces},
    {"rnbqkbnr/pppppppp/2n5/8/8/8/8/4K3 b - - 0 1", FenError::too_many_pieces},
    {"4k3/8/8/8/8/P7/PPPPPPPP/4K3 w - - 0 1", FenError::too_many_pawns},
    {"4k3/pppppppp/p7/8/8/8/8/4K3 w - - 0 1", FenError::too_many_pawns},
    {"4k3/8/8/8/8/8/PPPPPPPP/QQ2K3 w - - 0 1", FenError::too_many_promoted},
    {"4k3/8/8/8/8/8/PPPPPPP1/RRRRK3 w - - 0 1", FenError::too_many_promoted},
    {"4k3/8/8/8/8/8/PPPPPPPP/3BKB2 w - - 0 1", FenError::too_many_promoted},
    {"4k3/8/8/8/8/8/PPPPPPPP/1NN1KN2 w - - 0 1", FenError::too_many_promoted},
    {"nnnnk3/pppppppp/8/8/8/8/8/4K3 w - - 0 1", FenError::too_many_promoted},
    // Nine queens and the rest of the set, no pawn: the most there can be.
    // One more queen in place of a knight is one promotion too many.
    {"6nk/6pp/8/8/8/QQQQQ3/QQQQRRBB/4KN1Q w - - 0 1", FenError::too_many_promoted},
};

INSTANTIATE_TEST_SUITE_P(Each, ChessFenError, testing::ValuesIn(kBadFens),
                         [](const testing::TestParamInfo<BadFen>& p) {
                           return std::string(to_string(p.param.kind)) + "_" +
                                  std::to_string(p.index);
                         });

TEST(ChessFen, RoundTripsTestPositions) {
  for (const auto& fen : test::load_perft_fens("chess/perft.epd")) {
    const auto pos = Position::from_fen(fen);
    ASSERT_TRUE(pos) << fen << ": " << pos.error().message;
    EXPECT_EQ(pos->fen(), fen);
  }
}

TEST(ChessFen, AcceptsFourFieldsAndExtraSpaces) {
  const auto pos = Position::from_fen("  rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR   w KQkq -  ");
  ASSERT_TRUE(pos);
  EXPECT_EQ(pos->fen(), Position::kStartFen);
}

TEST(ChessFen, DropsEnPassantSquareWithoutLegalCapture) {
  const auto pos =
      Position::from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1");
  ASSERT_TRUE(pos);
  EXPECT_EQ(pos->fen(), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
  const auto kept =
      Position::from_fen("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 2");
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->ep_square(), E3);
  EXPECT_EQ(kept->fen(), "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 2");
}

TEST(ChessFen, CountersAndSide) {
  const auto pos = Position::from_fen("4k3/8/8/8/8/8/8/4K3 b - - 42 17");
  ASSERT_TRUE(pos);
  EXPECT_EQ(pos->rule50(), 42);
  EXPECT_EQ(pos->fullmove_number(), 17);
  EXPECT_EQ(pos->side_to_move(), Black);
  EXPECT_EQ(pos->fen(), "4k3/8/8/8/8/8/8/4K3 b - - 42 17");
}

TEST(ChessFen, RefusalsSayWhy) {
  const struct {
    const char* fen;
    const char* says;
  } cases[] = {
      {"QQQQQQnk/Q4Q1P/Q5QQ/Q6Q/Q6Q/Q6Q/Q6Q/KQQQQQQQ w - - 0 1", "White has 28 pieces"},
      {"4k3/8/8/8/8/P7/PPPPPPPP/4K3 w - - 0 1", "White has 9 pawns"},
      {"4k3/pppppppp/p7/8/8/8/8/4K3 w - - 0 1", "Black has 9 pawns"},
      {"4k3/8/8/8/8/8/PPPPPPPP/QQ2K3 w - - 0 1", "White has 2 queens and 8 pawns: 1 piece beyond"},
      {"4k3/8/8/8/8/8/PPPPPPPP/3BKB2 w - - 0 1", "2 light-squared bishops and 8 pawns"},
      {"4k3/8/8/8/8/8/PPPPPP2/RRR1KQQQ w - - 0 1", "3 pieces beyond the starting set"},
      {"4k3/8/8/8/8/8/PPPPPP2/RRR1KQQQ w - - 0 1",
       "with 6 pawns on the board at most 2 can have promoted"},
  };
  for (const auto& c : cases) {
    const auto pos = Position::from_fen(c.fen);
    ASSERT_FALSE(pos) << c.fen;
    EXPECT_NE(pos.error().message.find(c.says), std::string::npos)
        << c.fen << ": " << pos.error().message;
  }
}

TEST(ChessFen, AcceptsMaterialUpToTheLimits) {
  for (const char* fen : {
           // Nine queens, two rooks, bishops on both colours, two knights.
           "6nk/6pp/8/8/8/QQQQQ3/QQQQRRBB/4KN1N w - - 0 1",
           // Two bishops on one colour once a pawn is gone.
           "4k3/8/8/8/8/8/PPPPPPP1/3BKB2 w - - 0 1",
           // Eight pawns and the starting pieces, both sides.
           "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
           // Three knights and two queens for two missing pawns.
           "4k3/8/8/8/8/8/PPPPPP2/NNN1KQQ1 w - - 0 1",
           // The side to move may be in check (only the other side may not).
           "4k3/8/8/8/8/8/4r3/4K3 w - - 0 1",
       }) {
    const auto pos = Position::from_fen(fen);
    EXPECT_TRUE(pos) << fen << ": " << (pos ? "" : pos.error().message);
  }
}

// The most legal moves known (and proved the most for the positions the
// parser accepts, see kMaxMoves in chess/movegen.h): accepted, all listed.
TEST(ChessFen, The218MovePositionHasAll218Moves) {
  const auto pos = Position::from_fen("R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1");
  ASSERT_TRUE(pos) << pos.error().message;
  EXPECT_EQ(MoveList(*pos).size(), 218);
  EXPECT_EQ(count_legal_moves(*pos), 218u);
  EXPECT_EQ(kMaxLegalMoves, 218);
  EXPECT_LE(kMaxLegalMoves, kMaxMoves);
}

}  // namespace
}  // namespace kibitz::chess
