// Incremental state against state from scratch, over long random games.
#include "draughts/position.h"

#include <gtest/gtest.h>

#include "common/prng.h"
#include "draughts/movegen.h"
#include "draughts/notation.h"
#include "support/test_data.h"

namespace kibitz::draughts {
namespace {

// Plays random legal games from `start` for at least `min_plies` plies in
// all, and after every do_move and undo_move checks the incremental key
// against the key from scratch, that undo restores the exact position, and
// that the FEN of every position reads back to the same pieces.
int check_random_games(const Position& start, uint64_t seed, int min_plies) {
  Prng rng(seed);
  int plies = 0;
  while (plies < min_plies) {
    Position pos = start;
    for (int ply = 0; ply < 300; ++ply) {
      const MoveList moves(pos);
      if (moves.empty()) break;
      const Move m = *(moves.begin() + rng.next() % unsigned(moves.size()));
      const Position before = pos;
      pos.do_move(m);
      ++plies;
      EXPECT_EQ(pos.key(), pos.compute_key()) << before.fen() << " then " << to_string(before, m);
      EXPECT_EQ(pos.pieces(White) & pos.pieces(Black), 0u);
      EXPECT_EQ(pos.pieces() & ~(before.pieces() | square_bb(m.to)), 0u);
      EXPECT_EQ(pos.count(~pos.side_to_move()), before.count(before.side_to_move()));
      EXPECT_EQ(pos.count(pos.side_to_move()),
                before.count(~before.side_to_move()) - popcount(m.captured));
      const auto reread = Position::from_fen(pos.fen());
      EXPECT_TRUE(reread && reread->fen() == pos.fen() && reread->key() == pos.key()) << pos.fen();
      pos.undo_move(m);
      EXPECT_TRUE(pos == before) << "undo of " << to_string(before, m) << " from " << before.fen();
      EXPECT_EQ(pos.key(), pos.compute_key());
      if (::testing::Test::HasFailure()) return plies;
      pos.do_move(m);
    }
  }
  return plies;
}

TEST(DraughtsPosition, RandomGamesKeepKeysAndUndoExact) {
  const int plies = check_random_games(Position(), 1, 10'000);
  EXPECT_GE(plies, 10'000);
}

TEST(DraughtsPosition, RandomGamesFromEveryTestPosition) {
  uint64_t seed = 100;
  for (const auto& fen : test::load_perft_fens("draughts/perft.epd")) {
    auto pos = Position::from_fen(fen);
    ASSERT_TRUE(pos) << fen;
    check_random_games(*pos, ++seed, 2'000);
  }
}

TEST(DraughtsPosition, KeyDependsOnPiecesAndSide) {
  const Position start;
  EXPECT_EQ(start.key(), start.compute_key());
  EXPECT_NE(Position::from_fen("W:Wc3:Bf6")->key(), Position::from_fen("B:Wc3:Bf6")->key());
  EXPECT_NE(Position::from_fen("W:Wc3:Bf6")->key(), Position::from_fen("W:WKc3:Bf6")->key());
  EXPECT_NE(Position::from_fen("W:Wc3:Bf6")->key(), Position::from_fen("W:Wf6:Bc3")->key());
  // Transpositions meet in one key.
  Position a, b;
  for (const char* m : {"c3-d4", "f6-g5", "g3-h4", "b6-a5"}) a.do_move(*parse_move(a, m));
  for (const char* m : {"g3-h4", "b6-a5", "c3-d4", "f6-g5"}) b.do_move(*parse_move(b, m));
  EXPECT_EQ(a.key(), b.key());
  EXPECT_EQ(a.fen(), b.fen());
}

TEST(DraughtsPosition, CrowningQuietAndDuringCapture) {
  auto pos = Position::from_fen("W:Wc7:Bh2");
  ASSERT_TRUE(pos);
  pos->do_move(*parse_move(*pos, "c7-d8"));
  EXPECT_EQ(pos->piece_on(D8), Piece::white_king);
  EXPECT_EQ(pos->key(), pos->compute_key());
  EXPECT_EQ(pos->balance_plies(), 0);
  // Black man crowned on rank 1 during a capture, ending elsewhere as a king.
  // g3 takes f2, is crowned on e1 and takes c3 as a king, landing on b4 or a5.
  auto cap = Position::from_fen("B:Wf2,c3,Kh8:Bg3");
  ASSERT_TRUE(cap);
  EXPECT_EQ(MoveList(*cap).size(), 2);
  auto m = parse_move(*cap, "g3:e1:a5");
  ASSERT_TRUE(m) << m.error().message;
  cap->do_move(*m);
  EXPECT_EQ(cap->piece_on(A5), Piece::black_king);
  EXPECT_EQ(cap->count(White), 1);
  EXPECT_EQ(cap->key(), cap->compute_key());
}

TEST(DraughtsPosition, RingCaptureEndsOnItsStartSquare) {
  auto pos = Position::from_fen("W:We1:Bd2,f2,d4,f4");
  ASSERT_TRUE(pos);
  const MoveList moves(*pos);
  ASSERT_EQ(moves.size(), 1);
  const Move m = *moves.begin();
  EXPECT_EQ(m.from, E1);
  EXPECT_EQ(m.to, E1);
  pos->do_move(m);
  EXPECT_EQ(pos->fen(), "B:We1:B");
  EXPECT_EQ(pos->key(), pos->compute_key());
}

TEST(DraughtsPosition, LongGamesOutgrowTheHistoryBuffer) {
  // Kings shuffling for more plies than the history holds: keys stay right
  // and repetitions are still seen after the buffer is compacted.
  auto start = Position::from_fen("W:WKa1,c1,e1:BKh2,d8,f8");
  ASSERT_TRUE(start);
  Position pos = *start;
  const Move cycle[4] = {Move(A1, B2), Move(H2, G1), Move(B2, A1), Move(G1, H2)};
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

TEST(DraughtsPosition, NullMoveFlipsSideAndRestores) {
  const Position before;
  Position pos = before;
  pos.do_null_move();
  EXPECT_EQ(pos.side_to_move(), Black);
  EXPECT_EQ(pos.key(), pos.compute_key());
  EXPECT_FALSE(pos.is_repetition(10));
  pos.undo_null_move();
  EXPECT_TRUE(pos == before);
}

TEST(DraughtsPosition, CopiesAreIndependent) {
  Position a;
  a.do_move(*parse_move(a, "c3-d4"));
  Position b = a;
  b.do_move(*parse_move(b, "f6-e5"));
  EXPECT_NE(a.fen(), b.fen());
  b.undo_move(Move(F6, E5));
  EXPECT_TRUE(a == b);
}

}  // namespace
}  // namespace kibitz::draughts
