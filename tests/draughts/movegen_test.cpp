// Move generation: the cases of tests/data/draughts/moves.txt, single rules,
// and the bitboard generator against the plain path search of notation.cpp
// along random games.
#include "draughts/movegen.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "common/prng.h"
#include "draughts/notation.h"
#include "support/draughts_fen.h"
#include "support/test_data.h"

namespace kibitz::draughts {
namespace {

using MoveKey = std::tuple<int, int, Bitboard>;
MoveKey key_of(Move m) { return {m.from, m.to, m.captured}; }

std::set<MoveKey> generated(const Position& pos) {
  std::set<MoveKey> out;
  for (Move m : MoveList(pos)) out.insert(key_of(m));
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) out.push_back(part);
  return out;
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(' '), b = s.find_last_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

TEST(DraughtsMovegen, MovesFile) {
  std::ifstream in(test::data_path("draughts/moves.txt"));
  ASSERT_TRUE(in);
  int cases = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto fields = split(line, '|');
    ASSERT_GE(fields.size(), 3u) << line;
    const Position pos = from_fen(trim(fields[0]));
    const int want = std::stoi(trim(fields[1]));
    SCOPED_TRACE(trim(fields[0]) + " (" + trim(fields[2]) + ")");
    const MoveList moves(pos);
    EXPECT_EQ(moves.size(), want);
    EXPECT_EQ(generated(pos).size(), size_t(want)) << "duplicate moves";
    EXPECT_EQ(count_legal_moves(pos), uint64_t(want));
    ++cases;
    if (fields.size() < 4 || trim(fields[3]).empty()) continue;
    // Expected moves, compared by (from, to, captured): a path names its
    // move through the path search, and "(captures x,y)" after a move gives
    // its captured set outright.
    std::set<MoveKey> expected;
    Move last = Move::none();
    std::istringstream words(fields[3]);
    for (std::string w; words >> w;) {
      if (w.starts_with("(captures")) {
        std::string list;
        words >> list;
        Bitboard captured = 0;
        for (const auto& s : split(list.substr(0, list.find(')')), ','))
          captured |= square_bb(*parse_square(s));
        EXPECT_EQ(last.captured, captured) << "captured set of " << to_string(pos, last);
        continue;
      }
      auto m = parse_move(pos, w);
      ASSERT_TRUE(m) << w << ": " << m.error().message;
      last = *m;
      expected.insert(key_of(*m));
    }
    EXPECT_EQ(generated(pos), expected);
  }
  EXPECT_EQ(cases, 11);
}

TEST(DraughtsMovegen, StartPosition) {
  const Position pos;
  EXPECT_EQ(MoveList(pos).size(), 7);
  EXPECT_FALSE(has_capture(pos));
}

TEST(DraughtsMovegen, MenCaptureBackwards) {
  const Position pos = from_fen("W:Wd4:Bc3,h8");
  ASSERT_EQ(MoveList(pos).size(), 1);
  EXPECT_EQ(*MoveList(pos).begin(), Move(D4, B2, square_bb(C3)));
}

TEST(DraughtsMovegen, CaptureIsMandatoryButAnyMayBeChosen) {
  // c3 takes d4 (one piece) or b4 then b6 (two): both are legal, quiet moves
  // are not.
  const Position pos = from_fen("W:Wc3,g3:Bd4,b4,b6,h8");
  const std::set<MoveKey> want = {key_of(Move(C3, E5, square_bb(D4))),
                                  key_of(Move(C3, C7, square_bb(B4) | square_bb(B6)))};
  EXPECT_EQ(generated(pos), want);
  EXPECT_TRUE(has_capture(pos));
}

TEST(DraughtsMovegen, ManStepsForwardOnly) {
  const Position white = from_fen("W:Wd4:Bh8");
  EXPECT_EQ(generated(white), (std::set<MoveKey>{key_of(Move(D4, C5)), key_of(Move(D4, E5))}));
  const Position black = from_fen("B:Wa1:Bd4");
  EXPECT_EQ(generated(black), (std::set<MoveKey>{key_of(Move(D4, C3)), key_of(Move(D4, E3))}));
}

TEST(DraughtsMovegen, KingFlies) {
  // d4 sees 13 squares on an empty board; c5 blocks one ray.
  EXPECT_EQ(MoveList(from_fen("W:WKd4:Bh8")).size(), 12);         // h8 itself is taken
  EXPECT_EQ(MoveList(from_fen("W:WKd4,c5:Bh6")).size(), 10 + 2);  // c5 man: 2 steps
}

TEST(DraughtsMovegen, KingCannotJumpTwoAdjacentPieces) {
  EXPECT_FALSE(has_capture(from_fen("W:WKa1:Bc3,d4")));
  EXPECT_TRUE(has_capture(from_fen("W:WKa1:Bc3")));
}

TEST(DraughtsMovegen, CrownedManStopsWhenNoCaptureAsKing) {
  // Landing on rank 7 leaves a man a man.
  const Position pos = from_fen("W:Wc5:Bd6,h2");
  EXPECT_EQ(generated(pos), (std::set<MoveKey>{key_of(Move(C5, E7, square_bb(D6)))}));
  // Landing on rank 8 crowns it; with nothing more to take as a king, the
  // move ends there.
  const Position crowned = from_fen("W:Wf6:Be7,h2");
  ASSERT_EQ(MoveList(crowned).size(), 1);
  Position after = crowned;
  after.do_move(*MoveList(crowned).begin());
  EXPECT_EQ(after.piece_on(D8), Piece::white_king);
}

// Every position along random games from each test position: the generator
// lists each move once, agrees with the plain path search on captures and
// with the counter, and either captures everywhere or nowhere.
TEST(DraughtsMovegen, GeneratorAgreesWithPathSearchAlongRandomGames) {
  Prng rng(7);
  int positions = 0, capture_positions = 0;
  std::vector<std::string> fens = test::load_perft_fens("draughts/perft.epd");
  fens.push_back("W:WKa1,Kc1:BKh8,Kf8,b6,d6");
  for (const auto& fen : fens) {
    for (int game = 0; game < 100; ++game) {
      Position pos = from_fen(fen);
      for (int ply = 0; ply < 200; ++ply) {
        const MoveList moves(pos);
        const std::set<MoveKey> unique = generated(pos);
        ASSERT_EQ(unique.size(), size_t(moves.size())) << "duplicates in " << pos.fen();
        ASSERT_EQ(count_legal_moves(pos), uint64_t(moves.size())) << pos.fen();
        std::set<MoveKey> paths;
        for_each_capture_path(pos,
                              [&](Move m, const std::vector<Square>&) { paths.insert(key_of(m)); });
        ASSERT_EQ(has_capture(pos), !paths.empty()) << pos.fen();
        if (!paths.empty()) {
          ++capture_positions;
          ASSERT_EQ(unique, paths) << pos.fen();
        }
        for (Move m : moves) ASSERT_EQ(m.is_capture(), !paths.empty()) << pos.fen();
        ++positions;
        if (moves.empty()) break;
        pos.do_move(*(moves.begin() + rng.next() % unsigned(moves.size())));
      }
    }
  }
  EXPECT_GT(positions, 20'000);
  EXPECT_GT(capture_positions, 2'000);
}

// Captures + quiets = legal, one of them empty; codes are nonzero and find
// their move again; crowning is seen during captures too.
TEST(DraughtsMovegen, SplitGenerationCodesAndCrowning) {
  Prng rng(21);
  int collisions = 0, moves_seen = 0;
  for (int game = 0; game < 200; ++game) {
    Position pos;
    for (int ply = 0; ply < 150; ++ply) {
      const MoveList legal(pos);
      const MoveList<GenType::Captures> captures(pos);
      const MoveList<GenType::Quiets> quiets(pos);
      ASSERT_TRUE(captures.empty() || quiets.empty()) << pos.fen();
      ASSERT_EQ(captures.size() + quiets.size(), legal.size()) << pos.fen();
      std::set<uint16_t> codes;
      for (Move m : legal) {
        ASSERT_NE(m.code(), 0) << pos.fen();
        collisions += !codes.insert(m.code()).second;
        const Move found = move_from_code(pos, m.code());
        ASSERT_EQ(found.code(), m.code());
        ASSERT_TRUE(legal.contains(found));
        Position after = pos;
        after.do_move(m);
        const bool man = pos.men() & square_bb(m.from);
        ASSERT_EQ(pos.crowns(m), man && bool(after.kings() & square_bb(m.to))) << pos.fen();
        ++moves_seen;
      }
      if (legal.empty()) break;
      pos.do_move(*(legal.begin() + rng.next() % unsigned(legal.size())));
    }
  }
  EXPECT_EQ(Move::none().code(), 0);
  EXPECT_GT(moves_seen, 50'000);
  EXPECT_LT(collisions, moves_seen / 1000);
}

// The diagonal lookups (magic or PEXT) against a plain walk, for random
// occupancies.
TEST(DraughtsAttacks, LookupsMatchPlainSlide) {
  Prng rng(3);
  for (int i = 0; i < 20'000; ++i) {
    const Bitboard occupied = Bitboard(rng.next() & rng.next());
    for (int s = 0; s < kSquares; ++s) {
      const Square sq = Square(s);
      ASSERT_EQ(diagonal_a_attacks(sq, occupied), detail::slide(s, occupied, UpLeft, DownRight));
      ASSERT_EQ(diagonal_b_attacks(sq, occupied), detail::slide(s, occupied, UpRight, DownLeft));
    }
  }
}

TEST(DraughtsBoard, Numbering) {
  // The README's table: up-left is +1, up-right +7 (mod 32).
  EXPECT_EQ(A1, 0);
  EXPECT_EQ(B2, 7);
  EXPECT_EQ(H8, 17);
  EXPECT_EQ(B8, 31);
  EXPECT_EQ(H4, 1);
  EXPECT_EQ(kLongDiagonal, square_bb(A1) | square_bb(B2) | square_bb(C3) | square_bb(D4) |
                               square_bb(E5) | square_bb(F6) | square_bb(G7) | square_bb(H8));
  for (int s = 0; s < kSquares; ++s) {
    const Square sq = Square(s);
    EXPECT_EQ(make_square(file_of(sq), rank_of(sq)), sq);
    for (int d = 0; d < kDirections; ++d) {
      const int f = file_of(sq) + kFileStep[d], r = rank_of(sq) + kRankStep[d];
      const bool on = step_from(Direction(d)) & square_bb(sq);
      EXPECT_EQ(on, is_dark(f, r));
      if (on) {
        EXPECT_EQ(std::rotl(square_bb(sq), kRotate[d]), square_bb(make_square(f, r)));
      }
    }
  }
}

// kMaxMoves holds the largest move counts that a simulated-annealing search
// over random positions found (68 captures; 68 quiet moves by twelve
// kings), with room to spare.
TEST(DraughtsMovegen, MostMovesFoundStayWithinTheBound) {
  const struct {
    const char* fen;
    int moves;
    bool captures;
  } cases[] = {
      {"W:WKa1,Kh4,Kc1,Kh8,Kh2,Kb8:BKg5,Ke7,b2,g7,b4,e3,b6,Kg3,e5", 68, true},
      {"W:WKa1,Kh4,Kd8,Ka3,Kf8,Ke1,Ka5,Kh8,Kg1,Ka7,Kf4,Kb8:B", 68, false},
  };
  for (const auto& c : cases) {
    const Position pos = from_fen(c.fen);
    std::set<MoveKey> paths;
    for_each_capture_path(pos,
                          [&](Move m, const std::vector<Square>&) { paths.insert(key_of(m)); });
    EXPECT_EQ(!paths.empty(), c.captures) << c.fen;
    EXPECT_EQ(MoveList(pos).size(), c.moves) << c.fen;
    if (c.captures) {
      EXPECT_EQ(paths.size(), size_t(c.moves)) << c.fen;
    }
    EXPECT_LT(c.moves, kMaxMoves / 2);
  }
}

}  // namespace
}  // namespace kibitz::draughts
