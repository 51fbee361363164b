// Perft counts of tests/data/chess/perft.epd, every position and depth. Cases
// above 50 million nodes are named *Slow* (label "slow" in ctest).
#include "chess/perft.h"

#include <gtest/gtest.h>

#include "support/test_data.h"

namespace kibitz::chess {
namespace {

using test::PerftCase;

constexpr uint64_t kSlowNodes = 50'000'000;

std::vector<PerftCase> cases(bool slow) {
  std::vector<PerftCase> out;
  for (auto& c : test::load_perft_cases("chess/perft.epd"))
    if ((c.nodes > kSlowNodes) == slow) out.push_back(c);
  return out;
}

std::string case_name(const testing::TestParamInfo<PerftCase>& info) {
  return "line" + std::to_string(info.param.line) + "_depth" + std::to_string(info.param.depth);
}

class ChessPerft : public testing::TestWithParam<PerftCase> {};
class ChessPerftSlow : public ChessPerft {};

void check(const PerftCase& c) {
  auto pos = Position::from_fen(c.fen);
  ASSERT_TRUE(pos) << pos.error().message;
  EXPECT_EQ(perft(*pos, c.depth), c.nodes) << c.fen << " depth " << c.depth;
  EXPECT_EQ(pos->fen(), Position::from_fen(c.fen)->fen())
      << "perft must leave the position as it was";
}

TEST_P(ChessPerft, MatchesReference) { check(GetParam()); }
TEST_P(ChessPerftSlow, MatchesReference) { check(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Epd, ChessPerft, testing::ValuesIn(cases(false)), case_name);
INSTANTIATE_TEST_SUITE_P(Epd, ChessPerftSlow, testing::ValuesIn(cases(true)), case_name);

// Colour-mirrored positions must give the same counts.
std::string colours_swapped(const std::string& fen) {
  std::istringstream in(fen);
  std::string placement, side, castling, ep, half = "0", full = "1";
  in >> placement >> side >> castling >> ep >> half >> full;
  std::vector<std::string> ranks;
  std::istringstream pr(placement);
  for (std::string r; std::getline(pr, r, '/');) ranks.push_back(r);
  std::string out;
  for (auto it = ranks.rbegin(); it != ranks.rend(); ++it) {
    for (char c : *it) out += std::isalpha(static_cast<unsigned char>(c)) ? char(c ^ 32) : c;
    if (it + 1 != ranks.rend()) out += '/';
  }
  std::string cr = castling == "-" ? "-" : "";
  if (castling != "-") {
    for (char want : {'K', 'Q', 'k', 'q'})
      if (castling.find(char(want ^ 32)) != std::string::npos) cr += want;
  }
  std::string e = ep == "-" ? "-" : std::string{ep[0], char('1' + '8' - ep[1])};
  return out + (side == "w" ? " b " : " w ") + cr + " " + e + " " + half + " " + full;
}

TEST(ChessPerftMirror, MirroredPositionsGiveEqualCounts) {
  for (const auto& fen : test::load_perft_fens("chess/perft.epd")) {
    auto pos = Position::from_fen(fen);
    auto mirrored = Position::from_fen(colours_swapped(fen));
    ASSERT_TRUE(pos && mirrored) << fen;
    for (int depth = 1; depth <= 4; ++depth)
      EXPECT_EQ(perft(*pos, depth), perft(*mirrored, depth)) << fen << " depth " << depth;
  }
}

TEST(ChessPerftDivide, SumsToPerftAndListsEachLegalMoveOnce) {
  for (const auto& fen : test::load_perft_fens("chess/perft.epd")) {
    auto pos = Position::from_fen(fen);
    ASSERT_TRUE(pos);
    const auto entries = perft_divide(*pos, 3);
    uint64_t sum = 0;
    for (const auto& e : entries) sum += e.nodes;
    EXPECT_EQ(sum, perft(*pos, 3)) << fen;
    EXPECT_EQ(int(entries.size()), MoveList(*pos).size()) << fen;
  }
}

}  // namespace
}  // namespace kibitz::chess
