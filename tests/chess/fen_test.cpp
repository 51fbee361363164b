// FEN: each class of bad input has its own error; good FENs round-trip.
#include <gtest/gtest.h>

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
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQ1KNR w KQkq - 0 1", FenError::castling_rights},
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

}  // namespace
}  // namespace kibitz::chess
