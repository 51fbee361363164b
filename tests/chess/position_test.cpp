// Incremental state against state from scratch, over long random games.
#include "chess/position.h"

#include <gtest/gtest.h>

#include "chess/movegen.h"
#include "common/prng.h"
#include "support/test_data.h"

namespace kibitz::chess {
namespace {

// Plays random legal games from `start` for at least `min_plies` plies in all,
// and after every do_move and undo_move checks the incremental key and
// material + piece-square sum against those from scratch, that undo restores the exact position,
// and that the FEN of every position reads back to the same position. The incremental material +
// piece-square sum against one from scratch.
bool same_psq(const Position& pos) {
  const Score a = pos.psq(), b = pos.compute_psq();
  return a.mg == b.mg && a.eg == b.eg;
}

int check_random_games(const Position& start, uint64_t seed, int min_plies) {
  Prng rng(seed);
  int plies = 0;
  while (plies < min_plies) {
    Position pos = start;
    for (int ply = 0; ply < 400; ++ply) {
      const MoveList moves(pos);
      if (moves.empty() || pos.rule50() >= 150) break;
      const Move m = *(moves.begin() + rng.next() % unsigned(moves.size()));
      const Position before = pos;
      const bool check = pos.gives_check(m);
      pos.do_move(m);
      ++plies;
      EXPECT_EQ(check, pos.in_check())
          << "gives_check of " << int(m.raw()) << " in " << before.fen();
      EXPECT_EQ(pos.key(), pos.compute_key()) << before.fen() << " then " << int(m.raw());
      EXPECT_TRUE(same_psq(pos)) << before.fen() << " then " << int(m.raw());
      EXPECT_EQ(pos.checkers(), pos.attackers_to(pos.king_square(pos.side_to_move())) &
                                    pos.pieces(~pos.side_to_move()));
      const auto reread = Position::from_fen(pos.fen());
      EXPECT_TRUE(reread && *reread == pos) << pos.fen();
      pos.undo_move(m);
      EXPECT_TRUE(pos == before) << "undo of " << int(m.raw()) << " from " << before.fen();
      EXPECT_EQ(pos.key(), pos.compute_key());
      EXPECT_TRUE(same_psq(pos)) << "undo of " << int(m.raw()) << " from " << before.fen();
      if (::testing::Test::HasFailure()) return plies;
      pos.do_move(m);
    }
  }
  return plies;
}

TEST(ChessPosition, RandomGamesKeepKeysAndUndoExact) {
  const int plies = check_random_games(Position(), 1, 10'000);
  EXPECT_GE(plies, 10'000);
}

TEST(ChessPosition, RandomGamesFromEveryTestPosition) {
  uint64_t seed = 100;
  for (const auto& fen : test::load_perft_fens("chess/perft.epd")) {
    auto pos = Position::from_fen(fen);
    ASSERT_TRUE(pos) << fen;
    check_random_games(*pos, ++seed, 2'000);
  }
}

// gives_check and CheckTest of every legal move (not only the one played),
// along random games from every test position, against the move made: CheckTest's
// table tests for plain moves and the full test must agree with in_check().
TEST(ChessPosition, GivesCheckOfEveryMoveMatchesTheMoveMade) {
  uint64_t seed = 500;
  int checks = 0, moves_tried = 0;
  for (const auto& fen : test::load_perft_fens("chess/perft.epd")) {
    auto start = Position::from_fen(fen);
    ASSERT_TRUE(start) << fen;
    Prng rng(++seed);
    for (int game = 0; game < 8; ++game) {
      Position pos = *start;
      for (int ply = 0; ply < 120; ++ply) {
        const MoveList moves(pos);
        if (moves.empty()) break;
        const CheckTest test(pos);
        for (const Move m : moves) {
          const bool predicted = pos.gives_check(m);
          ASSERT_EQ(test(m), predicted) << "CheckTest of " << int(m.raw()) << " in " << pos.fen();
          pos.do_move(m);
          ASSERT_EQ(predicted, pos.in_check())
              << "gives_check of " << int(m.raw()) << " in " << fen;
          checks += predicted;
          ++moves_tried;
          pos.undo_move(m);
        }
        pos.do_move(*(moves.begin() + rng.next() % unsigned(moves.size())));
      }
    }
  }
  EXPECT_GT(moves_tried, 100'000);
  EXPECT_GT(checks, 1'000);
}

TEST(ChessPosition, EnPassantKeyOnlyWhenCaptureIsLegal) {
  // After e2e4 no black pawn can take: the key must equal that of the same
  // placement without an en-passant square.
  Position pos;
  pos.do_move(Move(E2, E4));
  EXPECT_EQ(pos.ep_square(), NoSquare);
  EXPECT_EQ(
      pos.key(),
      Position::from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")->key());

  // A black pawn on d4 can take e3: the square and its key are set.
  auto p2 = Position::from_fen("4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1");
  ASSERT_TRUE(p2);
  p2->do_move(Move(E2, E4));
  EXPECT_EQ(p2->ep_square(), E3);
  EXPECT_EQ(p2->key(), p2->compute_key());

  // The black pawn on d4 is pinned to its king along the fourth rank by the
  // rook on a4 once e4 leaves: the capture is illegal, so no square is set.
  auto p3 = Position::from_fen("8/8/8/8/R2p3k/8/4P3/4K3 w - - 0 1");
  ASSERT_TRUE(p3);
  p3->do_move(Move(E2, E4));
  EXPECT_EQ(p3->ep_square(), NoSquare);
}

TEST(ChessPosition, LongGamesOutgrowTheHistoryBuffer) {
  // Knights shuffling back and forth for more plies than the history holds:
  // keys stay right and repetitions are still seen after the buffer is
  // compacted.
  Position pos;
  const Move cycle[4] = {Move(G1, F3), Move(G8, F6), Move(F3, G1), Move(F6, G8)};
  for (int i = 0; i < 3 * Position::kHistory; ++i) {
    pos.do_move(cycle[i % 4]);
    ASSERT_EQ(pos.key(), pos.compute_key());
  }
  EXPECT_TRUE(pos.is_threefold_repetition());
  for (int i = 3 * Position::kHistory - 1; i >= 3 * Position::kHistory - 200; --i) {
    pos.undo_move(cycle[i % 4]);
    ASSERT_EQ(pos.key(), pos.compute_key());
  }
}

TEST(ChessPosition, NullMoveFlipsSideAndRestores) {
  auto pos = Position::from_fen("4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1");
  ASSERT_TRUE(pos);
  pos->do_move(Move(E2, E4));
  const Position before = *pos;
  pos->do_null_move();
  EXPECT_EQ(pos->side_to_move(), White);
  EXPECT_EQ(pos->ep_square(), NoSquare);
  EXPECT_EQ(pos->key(), pos->compute_key());
  pos->undo_null_move();
  EXPECT_TRUE(*pos == before);
}

}  // namespace
}  // namespace kibitz::chess
