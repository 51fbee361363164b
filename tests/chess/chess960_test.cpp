// Chess960: perft against Stockfish's counts (tests/data/chess/chess960_*.epd,
// written by scripts/make-chess960-perft.py), the two FEN notations of
// castling rights, the variant a FEN is read as, castling moves in UCI and
// SAN, keys, and random games that keep incremental state exact.
#include <gtest/gtest.h>

#include <map>

#include "chess/notation.h"
#include "chess/perft.h"
#include "common/prng.h"
#include "support/test_data.h"

namespace kibitz::chess {
namespace {

Position read(std::string_view fen, Variant v = Variant::chess960) {
  auto pos = Position::from_fen(fen, v);
  EXPECT_TRUE(pos) << fen << ": " << (pos ? "" : pos.error().message);
  return pos ? *pos : Position();
}

// The cases of one file grouped by FEN: depth -> count.
std::map<std::string, std::map<int, uint64_t>> by_fen(const std::string& file) {
  std::map<std::string, std::map<int, uint64_t>> out;
  for (const auto& c : test::load_perft_cases(file)) out[c.fen][c.depth] = c.nodes;
  return out;
}

TEST(Chess960Perft, EveryStartPositionToDepth3) {
  const auto cases = by_fen("chess/chess960_starts.epd");
  ASSERT_EQ(cases.size(), 960u);
  for (const auto& [fen, counts] : cases) {
    Position pos = read(fen);
    ASSERT_TRUE(pos.is_chess960());
    ASSERT_EQ(counts.size(), 3u) << fen;
    for (const auto& [depth, nodes] : counts)
      ASSERT_EQ(perft(pos, depth), nodes) << fen << " depth " << depth;
  }
}

TEST(Chess960Perft, MiddlegamesInBothNotations) {
  const auto cases = by_fen("chess/chess960_perft.epd");
  ASSERT_GE(cases.size(), 70u);
  int deep = 0;
  for (const auto& [fen, counts] : cases) {
    Position pos = read(fen);
    for (const auto& [depth, nodes] : counts) {
      EXPECT_EQ(perft(pos, depth), nodes) << fen << " depth " << depth;
      deep += depth >= 5;
    }
    EXPECT_EQ(pos.fen(), fen) << "perft must leave the position as it was";
  }
  EXPECT_GE(deep, 10);
}

TEST(Chess960Perft, CastlingIsListedAsKingTakesRook) {
  Position pos = read("1r3kr1/pppppppp/8/8/8/8/PPPPPPPP/1R3KR1 w GBgb - 0 1");
  std::vector<std::string> castles;
  for (Move m : MoveList(pos))
    if (m.kind() == MoveKind::Castling) castles.push_back(to_uci(m));
  // O-O (f1g1) swaps king and rook; O-O-O (f1b1) needs c1-e1 empty and safe.
  EXPECT_EQ(castles, (std::vector<std::string>{"f1g1", "f1b1"}));
}

TEST(Chess960Fen, BothNotationsRoundTrip) {
  for (const auto& [fen, counts] : by_fen("chess/chess960_perft.epd")) {
    (void)counts;
    EXPECT_EQ(read(fen).fen(), fen);
  }
  for (const auto& [fen, counts] : by_fen("chess/chess960_starts.epd")) {
    (void)counts;
    EXPECT_EQ(read(fen).fen(), fen);
    EXPECT_EQ(read(fen, Variant::automatic).fen(), fen);
  }
}

TEST(Chess960Fen, RightsTellTheVariantWhenReadAutomatically) {
  const char* king_off_e = "rnbq1knr/pppppppp/8/8/8/8/PPPPPPPP/RNBQ1KNR w KQkq - 0 1";
  EXPECT_TRUE(read(king_off_e, Variant::automatic).is_chess960());
  const auto refused = Position::from_fen(king_off_e, Variant::standard);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, FenError::chess960_castling);
  EXPECT_NE(refused.error().message.find("Chess960"), std::string::npos);
  EXPECT_TRUE(read("4k3/8/8/8/8/8/8/4K1R1 w G - 0 1", Variant::automatic).is_chess960());
  // Standard rights, or none: standard chess unless asked for Chess960.
  EXPECT_FALSE(read(Position::kStartFen, Variant::automatic).is_chess960());
  EXPECT_FALSE(read("r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1", Variant::automatic).is_chess960());
  EXPECT_FALSE(read("4k3/8/8/8/8/8/8/4K3 w - - 0 1", Variant::automatic).is_chess960());
  EXPECT_TRUE(read(Position::kStartFen, Variant::chess960).is_chess960());
  // Standard chess writes KQkq as ever; Shredder-FEN stays Shredder-FEN.
  EXPECT_EQ(read(Position::kStartFen, Variant::standard).fen(), Position::kStartFen);
  EXPECT_EQ(read("r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1", Variant::standard).fen(),
            "r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1");
}

TEST(Chess960Fen, XFenNamesInnerRooksByFile) {
  // K is the outermost rook: with rooks on g1 and h1, K is h1's right.
  Position outer = read("4k3/8/8/8/8/8/8/4K1RR w K - 0 1");
  EXPECT_EQ(outer.castling_rook_square(WhiteOO), H1);
  Position inner = read("4k3/8/8/8/8/8/8/4K1RR w G - 0 1");
  EXPECT_EQ(inner.castling_rook_square(WhiteOO), G1);
  EXPECT_NE(outer.key(), inner.key()) << "rights of different rooks must key differently";
  // With a K in the field the FEN is X-FEN: the inner rook's right is G
  // while the outer rook stands, K once it has left.
  Position mixed = read("4k2r/8/8/8/8/8/8/4K1RR w Gk - 0 1");
  EXPECT_EQ(mixed.fen(), "4k2r/8/8/8/8/8/8/4K1RR w Gk - 0 1");
  mixed.do_move(*parse_uci(mixed, "h1h2"));
  EXPECT_EQ(mixed.fen(), "4k2r/8/8/8/8/8/7R/4K1R1 b Kk - 1 1");
  // File letters only: Shredder-FEN, kept so.
  EXPECT_EQ(inner.fen(), "4k3/8/8/8/8/8/8/4K1RR w G - 0 1");
}

TEST(Chess960Fen, HostileRightsAreRefused) {
  const char* bad[] = {
      // Letters that are no right.
      "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkqX - 0 1",
      "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w I - 0 1",
      "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w 1 - 0 1",
      "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAhaH - 0 1",
      "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w H-ha - 0 1",
      // A right for a rook that is not there (a knight, nothing, theirs).
      "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w G - 0 1",
      "4k3/8/8/8/8/8/8/4K3 w H - 0 1",
      "4k3/8/8/8/8/8/8/4K2R w h - 0 1",
      "4k3/8/8/8/8/8/8/4K2r w H - 0 1",
      // The king's own file.
      "4k3/8/8/8/8/8/8/R3K2R w E - 0 1",
      // Two rooks claimed on one side of the king (also as K and a letter).
      "4k3/8/8/8/8/8/8/4K1RR w HG - 0 1",
      "4k3/8/8/8/8/8/8/4K1RR w KH - 0 1",
      "4k3/8/8/8/8/8/8/RR2K3 w AB - 0 1",
      "4k3/8/8/8/8/8/8/RR2K3 w QQ - 0 1",
      // The king not between the rooks: both on one side.
      "4k3/8/8/8/8/8/8/K5RR w KQ - 0 1",
      "4k3/8/8/8/8/8/8/RR5K w K - 0 1",
      // The king off its back rank.
      "4k3/8/8/8/8/8/4K3/R6R w HA - 0 1",
      "r6r/4k3/8/8/8/8/8/4K3 w ha - 0 1",
      // Eight rooks on Black's back rank, its king elsewhere.
      "rrrrrrrr/8/8/8/8/4k3/8/4K3 w ah - 0 1",
  };
  for (const char* fen : bad)
    for (const Variant v : {Variant::automatic, Variant::standard, Variant::chess960}) {
      const auto pos = Position::from_fen(fen, v);
      ASSERT_FALSE(pos) << fen;
      EXPECT_EQ(pos.error().kind, FenError::castling_rights) << fen << ": " << pos.error().message;
    }
}

TEST(Chess960Notation, CastlingIsKingTakesRookAndOO) {
  Position pos = read("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RN2K2R w KQkq - 0 1");
  const auto oo = parse_uci(pos, "e1h1");
  ASSERT_TRUE(oo);
  EXPECT_EQ(oo->kind(), MoveKind::Castling);
  EXPECT_EQ(to_san(pos, *oo), "O-O");
  EXPECT_EQ(*parse_san(pos, "O-O"), *oo);
  EXPECT_FALSE(parse_uci(pos, "e1g1")) << "e1g1 is standard chess's castling only";
  pos.do_move(*oo);
  EXPECT_EQ(pos.piece_on(G1), WKing);
  EXPECT_EQ(pos.piece_on(F1), WRook);
  EXPECT_EQ(pos.fen(), "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RN3RK1 b kq - 1 1");
  // The same position in standard chess castles e1g1.
  Position standard =
      read("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RN2K2R w KQkq - 0 1", Variant::standard);
  EXPECT_EQ(to_uci(*parse_san(standard, "O-O")), "e1g1");
  EXPECT_FALSE(parse_uci(standard, "e1h1"));
  EXPECT_NE(standard.key(), read(standard.fen()).key()) << "the variant is in the key";
}

TEST(Chess960Notation, KingOnItsDestinationAndRookOnTheKings) {
  // King g1, rook h1: O-O moves only the rook, written g1h1.
  Position pos = read("6k1/8/8/8/8/8/8/R5KR w HA - 0 1");
  EXPECT_EQ(to_uci(*parse_san(pos, "O-O")), "g1h1");
  EXPECT_EQ(to_uci(*parse_san(pos, "O-O-O")), "g1a1");
  Position after = pos;
  after.do_move(*parse_san(pos, "O-O"));
  EXPECT_EQ(after.fen(), "6k1/8/8/8/8/8/8/R4RK1 b - - 1 1");
  after.undo_move(*parse_san(pos, "O-O"));
  EXPECT_TRUE(after == pos);
  // King e1, rook g1: the king lands where the rook stood.
  Position swap = read("4k3/8/8/8/8/8/8/4K1R1 w G - 0 1");
  const Move m = *parse_uci(swap, "e1g1");
  EXPECT_EQ(m.kind(), MoveKind::Castling);
  EXPECT_TRUE(swap.gives_check(m) == false);
  swap.do_move(m);
  EXPECT_EQ(swap.fen(), "4k3/8/8/8/8/8/8/5RK1 b - - 1 1");
}

TEST(Chess960Notation, CastlingThatGivesCheck) {
  // After O-O the rook on f1 checks the king on f8.
  Position pos = read("5k2/8/8/8/8/8/8/1K5R w H - 0 1");
  const Move m = *parse_san(pos, "O-O");
  EXPECT_EQ(to_uci(m), "b1h1");
  EXPECT_TRUE(pos.gives_check(m));
  EXPECT_EQ(to_san(pos, m), "O-O+");
}

// Random games from every middlegame: incremental key, gives_check, FEN
// read back, and undo exact, after every move.
TEST(Chess960Position, RandomGamesKeepKeysAndUndoExact) {
  Prng rng(960);
  int castles = 0;
  for (const auto& [fen, counts] : by_fen("chess/chess960_perft.epd")) {
    (void)counts;
    for (int game = 0; game < 4; ++game) {
      Position pos = read(fen);
      for (int ply = 0; ply < 200; ++ply) {
        const MoveList moves(pos);
        if (moves.empty()) break;
        const Move m = *(moves.begin() + rng.next() % unsigned(moves.size()));
        const Position before = pos;
        const bool check = pos.gives_check(m);
        castles += m.kind() == MoveKind::Castling;
        pos.do_move(m);
        ASSERT_EQ(check, pos.in_check()) << before.fen() << " " << to_uci(m);
        ASSERT_EQ(pos.key(), pos.compute_key()) << before.fen() << " " << to_uci(m);
        const auto reread = Position::from_fen(pos.fen(), Variant::chess960);
        ASSERT_TRUE(reread && *reread == pos) << before.fen() << " " << to_uci(m);
        pos.undo_move(m);
        ASSERT_TRUE(pos == before) << before.fen() << " undo " << to_uci(m);
        pos.do_move(m);
      }
    }
  }
  EXPECT_GT(castles, 50);
}

}  // namespace
}  // namespace kibitz::chess
