// Generators agree with each other along random games: the counter with the
// writer, and captures + quiets with all legal moves.
#include "chess/movegen.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "common/prng.h"
#include "support/test_data.h"

namespace kibitz::chess {
namespace {

void check_generators(const Position& pos) {
  const MoveList<GenType::Legal> legal(pos);
  const MoveList<GenType::Captures> captures(pos);
  const MoveList<GenType::Quiets> quiets(pos);
  EXPECT_EQ(count_legal_moves(pos), uint64_t(legal.size())) << pos.fen();
  EXPECT_EQ(captures.size() + quiets.size(), legal.size()) << pos.fen();
  std::set<uint16_t> all, split;
  for (Move m : legal) all.insert(m.raw());
  for (Move m : captures) {
    split.insert(m.raw());
    EXPECT_TRUE(pos.is_capture(m) || m.promotion_type() == Queen) << pos.fen();
  }
  for (Move m : quiets) {
    split.insert(m.raw());
    EXPECT_FALSE(pos.is_capture(m) && m.kind() != MoveKind::Promotion) << pos.fen();
  }
  EXPECT_EQ(all.size(), size_t(legal.size())) << "duplicate moves in " << pos.fen();
  EXPECT_EQ(all, split) << pos.fen();
  // Every generated move leaves the mover's king safe.
  for (Move m : legal) {
    Position copy = pos;
    const Color us = copy.side_to_move();
    copy.do_move(m);
    EXPECT_FALSE(copy.attackers_to(copy.king_square(us)) & copy.pieces(~us))
        << pos.fen() << " " << int(m.raw());
  }
}

TEST(ChessMovegen, GeneratorsAgreeAlongRandomGames) {
  Prng rng(7);
  int positions = 0;
  for (const auto& fen : test::load_perft_fens("chess/perft.epd")) {
    for (int game = 0; game < 20; ++game) {
      auto pos = Position::from_fen(fen);
      ASSERT_TRUE(pos);
      for (int ply = 0; ply < 120; ++ply) {
        check_generators(*pos);
        ++positions;
        const MoveList moves(*pos);
        if (moves.empty()) break;
        pos->do_move(*(moves.begin() + rng.next() % unsigned(moves.size())));
      }
    }
  }
  EXPECT_GT(positions, 5000);
}

TEST(ChessMovegen, EvasionsOnly) {
  // Double check (rook e8 and bishop b4 check the king on e1): only king moves.
  auto pos = Position::from_fen("4r1k1/8/8/8/1b6/8/8/4K2R w K - 0 1");
  ASSERT_TRUE(pos);
  EXPECT_EQ(popcount(pos->checkers()), 2);
  for (Move m : MoveList(*pos)) EXPECT_EQ(m.from(), E1);
  // Single check from a rook: block, capture or step away; no castling.
  auto single = Position::from_fen("4r1k1/8/8/8/8/8/3N4/R3K2R w KQ - 0 1");
  ASSERT_TRUE(single);
  for (Move m : MoveList(*single)) EXPECT_NE(m.kind(), MoveKind::Castling);
  EXPECT_TRUE(MoveList(*single).contains(Move(D2, E4)));   // block
  EXPECT_FALSE(MoveList(*single).contains(Move(D2, B3)));  // ignores the check
}

TEST(ChessMovegen, PinnedEnPassantCapturerIsLeftOut) {
  // After ...c7c5 both b5 and d5 attack c6, but d5 is pinned to the king on
  // b3 by the bishop on f7: only b5xc6 is legal.
  auto pos = Position::from_fen("7k/2p2b2/8/1P1P4/8/1K6/8/8 b - - 0 1");
  ASSERT_TRUE(pos);
  pos->do_move(Move(C7, C5));
  ASSERT_EQ(pos->ep_square(), C6);
  const MoveList moves(*pos);
  EXPECT_TRUE(moves.contains(Move(B5, C6, MoveKind::EnPassant)));
  EXPECT_FALSE(moves.contains(Move(D5, C6, MoveKind::EnPassant)));
}

TEST(ChessMovegen, HorizontallyPinnedEnPassantIsNotOffered) {
  // After ...c7c5 the pawn on b5 could take c6, but that would empty the fifth
  // rank between the king on a5 and the rook on h5.
  auto pos = Position::from_fen("8/2p5/8/KP5r/8/8/8/7k b - - 0 1");
  ASSERT_TRUE(pos);
  pos->do_move(Move(C7, C5));
  EXPECT_EQ(pos->ep_square(), NoSquare);
  for (Move m : MoveList(*pos)) EXPECT_NE(m.kind(), MoveKind::EnPassant);
}

TEST(ChessAttacks, BuiltInMagicsAreAllValid) {
  // init_attacks() has run (test main): no square needed a fresh search.
  EXPECT_EQ(detail::magic_searches, 0);
  // And the lookups agree with a plain ray walk on random occupancies.
  Prng rng(11);
  for (int i = 0; i < 20000; ++i) {
    const Bitboard occupied = rng.next() & rng.next();
    const Square s = Square(rng.next() % 64);
    ASSERT_EQ(rook_attacks(s, occupied), detail::ray_attacks(s, occupied, detail::kRookDirs));
    ASSERT_EQ(bishop_attacks(s, occupied), detail::ray_attacks(s, occupied, detail::kBishopDirs));
  }
}

}  // namespace
}  // namespace kibitz::chess
