// The mate suite (tests/data/chess/mates.txt): fourteen forced mates in one
// to five moves from Kibitz's games, each to be found as the shortest mate
// under both evaluations, the built-in network and the hand-written one. A
// mate's score comes from the search, not the evaluation, but the
// evaluation orders and prunes the moves that lead there: a network that
// hid mates would show here.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "chess/movegen.h"
#include "chess/nnue_network.h"
#include "support/root_search.h"
#include "support/service.h"
#include "support/test_data.h"

namespace kibitz::test {
namespace {

struct Mate {
  int moves = 0;
  std::vector<std::string> firsts;  // every first move that mates this fast
  std::string fen, source;
};

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(' '));
  s.erase(s.find_last_not_of(' ') + 1);
  return s;
}

std::vector<Mate> load_mates() {
  std::ifstream in(data_path("chess/mates.txt"));
  std::vector<Mate> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, ';');) fields.push_back(trim(f));
    if (fields.size() != 4) throw std::runtime_error("mates.txt: " + line);
    Mate m;
    m.moves = std::stoi(fields[0]);
    std::stringstream firsts(fields[1]);
    for (std::string mv; firsts >> mv;) m.firsts.push_back(mv);
    m.fen = fields[2];
    m.source = fields[3];
    out.push_back(std::move(m));
  }
  return out;
}

// Depth 16: the searches' pruning finds some of these mates only some plies
// past 2n - 1 (a mate in 4 at depth 13), and none of them needs more than
// about 100,000 nodes at this depth.
constexpr int kDepth = 16;

class ChessMateSuite : public testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { ASSERT_EQ(nnue::select(GetParam()), ""); }
  void TearDown() override { ASSERT_EQ(nnue::select(""), ""); }
};

TEST_P(ChessMateSuite, EveryMateIsFoundAsTheShortest) {
  if (std::string(GetParam()) == "builtin") {
    ASSERT_NE(nnue::current(), nullptr) << "the committed network is built in";
  }
  const auto mates = load_mates();
  ASSERT_EQ(mates.size(), 14u);
  int found = 0;
  for (const Mate& m : mates) {
    SCOPED_TRACE(m.source + ": " + m.fen);
    engine::AnalysisRequest r;
    r.game = GameKind::chess;
    r.fen = m.fen;
    r.limits.depth = kDepth;
    auto service = make_service(1);
    auto a = analyze(*service, r);
    ASSERT_TRUE(a) << a.error().message;
    ASSERT_FALSE(a->result.lines.empty());
    const auto& line = a->result.lines[0];
    EXPECT_EQ(line.score.kind, engine::ScoreKind::mate);
    EXPECT_EQ(line.score.value, m.moves);
    const std::string best = a->result.bestmove.value_or("");
    EXPECT_NE(std::find(m.firsts.begin(), m.firsts.end(), best), m.firsts.end()) << best;
    // The line is the whole mate: legal moves that end in checkmate.
    ASSERT_EQ(int(line.moves.size()), 2 * m.moves - 1);
    auto pos = position<ChessGame>(m.fen, line.moves);
    EXPECT_EQ(chess::game_status(pos), chess::GameStatus::checkmate);
    found += line.score.kind == engine::ScoreKind::mate && line.score.value == m.moves;
  }
  EXPECT_EQ(found, 14);
}

INSTANTIATE_TEST_SUITE_P(Evaluations, ChessMateSuite, testing::Values("builtin", "classical"));

}  // namespace
}  // namespace kibitz::test
