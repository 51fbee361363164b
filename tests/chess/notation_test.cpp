// UCI and SAN: formatting, lenient reading, errors, and round trips of every
// legal move.
#include "chess/notation.h"

#include <gtest/gtest.h>

#include "common/prng.h"
#include "support/test_data.h"

namespace kibitz::chess {
namespace {

Position at(const char* fen) {
  auto pos = Position::from_fen(fen);
  EXPECT_TRUE(pos) << fen;
  return pos ? *pos : Position();
}

std::string san(const char* fen, const char* uci) {
  Position pos = at(fen);
  auto m = parse_uci(pos, uci);
  EXPECT_TRUE(m) << uci;
  return m ? to_san(pos, *m) : "";
}

TEST(ChessNotation, SanFormatting) {
  EXPECT_EQ(san(Position::kStartFen.data(), "g1f3"), "Nf3");
  EXPECT_EQ(san(Position::kStartFen.data(), "e2e4"), "e4");
  // Disambiguation by file, by rank, by both.
  EXPECT_EQ(san("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1", "b1d2"), "Nbd2");
  EXPECT_EQ(san("4k3/8/8/R7/8/8/8/R3K3 w - - 0 1", "a1a3"), "R1a3");
  EXPECT_EQ(san("1k6/8/8/8/4Q2Q/8/K7/7Q w - - 0 1", "h4e1"), "Qh4e1");
  EXPECT_EQ(san("1k6/8/8/8/7Q/8/K7/7Q w - - 0 1", "h4e1"), "Q4e1");
  EXPECT_EQ(san("1k6/8/8/8/4Q2Q/8/K7/8 w - - 0 1", "h4e1"), "Qhe1");
  // Captures, en passant, promotion with check, castling, mate.
  EXPECT_EQ(san("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3", "e5f6"), "exf6");
  EXPECT_EQ(san("k7/4P3/8/8/8/8/8/4K3 w - - 0 1", "e7e8q"), "e8=Q+");
  EXPECT_EQ(san("k7/4P3/8/8/8/8/8/4K3 w - - 0 1", "e7e8n"), "e8=N");
  EXPECT_EQ(san("r3k3/8/8/8/8/8/8/4K3 b q - 0 1", "e8c8"), "O-O-O");
  EXPECT_EQ(san("4k3/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1"), "O-O");
  EXPECT_EQ(san("rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2", "d8h4"), "Qh4#");
}

TEST(ChessNotation, SanReadingIsLenient) {
  const Position start;
  EXPECT_EQ(parse_san(start, "Nf3").value(), Move(G1, F3));
  EXPECT_EQ(parse_san(start, "Ng1f3").value(), Move(G1, F3));
  EXPECT_EQ(parse_san(start, "e4!?").value(), Move(E2, E4));
  const Position promo = at("k7/4P3/8/8/8/8/8/4K3 w - - 0 1");
  EXPECT_EQ(parse_san(promo, "e8=Q+").value(), Move(E7, E8, MoveKind::Promotion, Queen));
  EXPECT_EQ(parse_san(promo, "e8Q").value(), Move(E7, E8, MoveKind::Promotion, Queen));
  EXPECT_EQ(parse_san(promo, "e8=n").value(), Move(E7, E8, MoveKind::Promotion, Knight));
  const Position castle = at("4k3/8/8/8/8/8/8/4K2R w K - 0 1");
  EXPECT_EQ(parse_san(castle, "0-0").value(), Move(E1, G1, MoveKind::Castling));
  EXPECT_EQ(parse_san(castle, "O-O+").value(), Move(E1, G1, MoveKind::Castling));
}

TEST(ChessNotation, SanErrors) {
  const Position start;
  EXPECT_EQ(parse_san(start, "e5").error().kind, MoveError::illegal);
  EXPECT_EQ(parse_san(start, "Qd4").error().kind, MoveError::illegal);
  EXPECT_EQ(parse_san(start, "O-O").error().kind, MoveError::illegal);
  EXPECT_EQ(parse_san(start, "zz9").error().kind, MoveError::syntax);
  EXPECT_EQ(parse_san(start, "").error().kind, MoveError::syntax);
  EXPECT_EQ(parse_san(start, "xd4").error().kind, MoveError::syntax);
  const Position two_knights = at("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1");
  EXPECT_EQ(parse_san(two_knights, "Nd2").error().kind, MoveError::ambiguous);
  EXPECT_EQ(parse_san(two_knights, "Nbd2").value(), Move(B1, D2));
}

TEST(ChessNotation, UciReadingAndErrors) {
  const Position promo = at("k7/4P3/8/8/8/8/8/4K3 w - - 0 1");
  EXPECT_EQ(parse_uci(promo, "e7e8q").value(), Move(E7, E8, MoveKind::Promotion, Queen));
  EXPECT_EQ(parse_uci(promo, "e7e8Q").value(), Move(E7, E8, MoveKind::Promotion, Queen));
  EXPECT_EQ(parse_uci(promo, "e7e8").error().kind, MoveError::illegal);
  EXPECT_EQ(parse_uci(promo, "e7e8k").error().kind, MoveError::syntax);
  EXPECT_EQ(parse_uci(promo, "e7").error().kind, MoveError::syntax);
  EXPECT_EQ(parse_uci(promo, "i7i8").error().kind, MoveError::syntax);
  EXPECT_EQ(to_uci(Move::null()), "0000");
  EXPECT_EQ(parse_move(promo, "e8=Q").value(), Move(E7, E8, MoveKind::Promotion, Queen));
  EXPECT_EQ(parse_move(promo, "e1d2").value(), Move(E1, D2));
}

void check_round_trips(Position& pos) {
  for (Move m : MoveList(pos)) {
    const std::string s = to_san(pos, m), u = to_uci(m);
    const auto from_san = parse_san(pos, s);
    const auto from_uci = parse_uci(pos, u);
    ASSERT_TRUE(from_san) << pos.fen() << " " << s << ": " << from_san.error().message;
    ASSERT_TRUE(from_uci) << pos.fen() << " " << u;
    EXPECT_EQ(*from_san, m) << pos.fen() << " " << s;
    EXPECT_EQ(*from_uci, m) << pos.fen() << " " << u;
  }
}

TEST(ChessNotation, EveryLegalMoveRoundTrips) {
  Prng rng(3);
  for (const auto& fen : test::load_perft_fens("chess/perft.epd")) {
    auto pos = Position::from_fen(fen);
    ASSERT_TRUE(pos);
    check_round_trips(*pos);
    for (int game = 0; game < 10; ++game) {  // and positions reached from it
      Position p = *pos;
      for (int ply = 0; ply < 80; ++ply) {
        const MoveList moves(p);
        if (moves.empty()) break;
        check_round_trips(p);
        p.do_move(*(moves.begin() + rng.next() % unsigned(moves.size())));
      }
    }
  }
}

}  // namespace
}  // namespace kibitz::chess
