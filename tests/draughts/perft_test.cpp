// Perft counts of tests/data/draughts/perft.epd (unique-move convention),
// every position and depth. Cases above 50 million nodes are named *Slow*
// (label "slow" in ctest).
#include "draughts/perft.h"

#include <gtest/gtest.h>

#include "draughts/notation.h"
#include "support/test_data.h"

namespace kibitz::draughts {
namespace {

using test::PerftCase;

constexpr uint64_t kSlowNodes = 50'000'000;

std::vector<PerftCase> cases(bool slow) {
  std::vector<PerftCase> out;
  for (auto& c : test::load_perft_cases("draughts/perft.epd"))
    if ((c.nodes > kSlowNodes) == slow) out.push_back(c);
  return out;
}

std::string case_name(const testing::TestParamInfo<PerftCase>& info) {
  return "line" + std::to_string(info.param.line) + "_depth" + std::to_string(info.param.depth);
}

class DraughtsPerft : public testing::TestWithParam<PerftCase> {};
class DraughtsPerftSlow : public DraughtsPerft {};

void check(const PerftCase& c) {
  auto pos = Position::from_fen(c.fen);
  ASSERT_TRUE(pos) << pos.error().message;
  const Position before = *pos;
  EXPECT_EQ(perft(*pos, c.depth), c.nodes) << c.fen << " depth " << c.depth;
  EXPECT_TRUE(*pos == before) << "perft must leave the position as it was";
}

TEST_P(DraughtsPerft, MatchesReference) { check(GetParam()); }
TEST_P(DraughtsPerftSlow, MatchesReference) { check(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Epd, DraughtsPerft, testing::ValuesIn(cases(false)), case_name);
INSTANTIATE_TEST_SUITE_P(Epd, DraughtsPerftSlow, testing::ValuesIn(cases(true)), case_name);

TEST(DraughtsPerft, DataFileHasEveryPosition) {
  EXPECT_EQ(test::load_perft_fens("draughts/perft.epd").size(), 8u);
  EXPECT_EQ(cases(false).size() + cases(true).size(), 13u + 7 * 10);
}

// The board turned half a turn with the colours swapped: same counts.
Position mirrored(const Position& pos) {
  std::string fen = pos.side_to_move() == White ? "B" : "W";
  for (Color c : {White, Black}) {
    fen += c == White ? ":W" : ":B";
    bool first = true;
    for (Bitboard b = pos.pieces(~c); b;) {
      const Square s = Square(pop_lsb(b));
      if (!first) fen += ',';
      first = false;
      if (pos.kings() & square_bb(s)) fen += 'K';
      fen += square_to_string(make_square(7 - file_of(s), 7 - rank_of(s)));
    }
  }
  return *Position::from_fen(fen);
}

TEST(DraughtsPerftMirror, MirroredPositionsGiveEqualCounts) {
  for (const auto& fen : test::load_perft_fens("draughts/perft.epd")) {
    auto pos = Position::from_fen(fen);
    ASSERT_TRUE(pos) << fen;
    Position mirror = mirrored(*pos);
    for (int depth = 1; depth <= 6; ++depth)
      EXPECT_EQ(perft(*pos, depth), perft(mirror, depth)) << fen << " depth " << depth;
  }
}

TEST(DraughtsPerftDivide, SumsToPerftAndListsEachLegalMoveOnce) {
  for (const auto& fen : test::load_perft_fens("draughts/perft.epd")) {
    auto pos = Position::from_fen(fen);
    ASSERT_TRUE(pos);
    const auto entries = perft_divide(*pos, 4);
    uint64_t sum = 0;
    for (const auto& e : entries) sum += e.nodes;
    EXPECT_EQ(sum, perft(*pos, 4)) << fen;
    EXPECT_EQ(int(entries.size()), MoveList(*pos).size()) << fen;
  }
}

TEST(DraughtsPerft, DepthZeroIsOneNode) {
  Position pos;
  EXPECT_EQ(perft(pos, 0), 1u);
}

}  // namespace
}  // namespace kibitz::draughts
