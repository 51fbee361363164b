// Syzygy tablebases (core/chess/syzygy.h, Fathom) with the 3-4-piece tables
// of tests/data/syzygy (made by scripts/make-syzygy-tables.sh, checked
// against the generator's published checksums): loading, probes against
// values the generator itself reported (its statistics name the longest
// win of each table), the search's use of them (tbhits, scores, conversion
// of won endings and defence of drawn ones in self-play at few nodes), and
// the look-up behind GET /v1/tablebase.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "chess/game.h"
#include "chess/syzygy.h"
#include "support/service.h"
#include "support/test_data.h"

namespace kibitz::engine {
namespace {

std::string tables() { return test::data_path("syzygy"); }

syzygy::Board board_of(const std::string& fen) {
  chess::init_attacks();
  auto pos = chess::Position::from_fen(fen);
  EXPECT_TRUE(pos) << fen;
  return chess::Game::tb_board(*pos);
}

// Loads the test tables for one test and unloads them after: Fathom's
// tables are global, and other tests search without them.
class Syzygy : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(syzygy::select(tables()), ""); }
  void TearDown() override { syzygy::select(""); }
};

TEST(SyzygyLoading, ReportsWhatItFoundAndRefusesBadPaths) {
  ASSERT_EQ(syzygy::select(tables()), "");
  EXPECT_EQ(syzygy::largest(), 4);
  EXPECT_EQ(syzygy::wdl_files(), 35);
  EXPECT_EQ(syzygy::dtz_files(), 35);
  EXPECT_EQ(syzygy::describe(), "35 WDL, 35 DTZ tables up to 4 pieces");
  // Several folders, ':'-separated, an empty one between them ignored.
  EXPECT_EQ(syzygy::select(tables() + "::" + tables()), "");
  EXPECT_EQ(syzygy::largest(), 4);

  const std::string missing = syzygy::select("/nonexistent/syzygy");
  EXPECT_NE(missing.find("/nonexistent/syzygy: no such folder"), std::string::npos) << missing;
  EXPECT_EQ(syzygy::largest(), 0);  // refused: nothing loaded, nothing probed
  EXPECT_EQ(syzygy::describe(), "");
  const std::string partly = syzygy::select(tables() + ":/nonexistent");
  EXPECT_NE(partly.find("no such folder"), std::string::npos) << partly;
  EXPECT_EQ(syzygy::largest(), 0);

  const auto empty = std::filesystem::temp_directory_path() / "kibitz-syzygy-empty";
  std::filesystem::create_directories(empty);
  const std::string none = syzygy::select(empty.string());
  EXPECT_NE(none.find("no Syzygy WDL table"), std::string::npos) << none;
  EXPECT_EQ(syzygy::largest(), 0);
  EXPECT_EQ(syzygy::select(""), "");
  EXPECT_EQ(syzygy::select("<empty>"), "");
  EXPECT_FALSE(syzygy::probe_wdl(board_of("8/8/8/8/4k3/8/1Q6/K7 b - - 0 1")));
}

TEST_F(Syzygy, WdlProbesKnowTheResult) {
  using syzygy::Wdl;
  // KQvK, KRvK: the lone king loses, or draws when it can take.
  EXPECT_EQ(syzygy::probe_wdl(board_of("8/8/8/8/4k3/8/1Q6/K7 b - - 0 1")), Wdl::loss);
  EXPECT_EQ(syzygy::probe_wdl(board_of("8/8/8/8/4k3/8/1Q6/K7 w - - 0 1")), Wdl::win);
  EXPECT_EQ(syzygy::probe_wdl(board_of("8/8/8/8/8/8/2Rk4/1K6 b - - 0 1")), Wdl::loss);
  EXPECT_EQ(syzygy::probe_wdl(board_of("8/8/8/8/8/8/1kR5/4K3 b - - 0 1")), Wdl::draw);  // Kxc2
  // KPvK: the king in front of its pawn with the opposition draws.
  EXPECT_EQ(syzygy::probe_wdl(board_of("8/8/8/8/8/4k3/4P3/4K3 w - - 0 1")), Wdl::draw);
  EXPECT_EQ(syzygy::probe_wdl(board_of("8/8/8/8/8/4k3/4P3/4K3 b - - 0 1")), Wdl::draw);
  EXPECT_EQ(syzygy::probe_wdl(board_of("8/8/7k/8/7K/1P6/8/8 b - - 0 1")), Wdl::loss);
  // Only right after a zeroing move, and never with castling rights or too many pieces.
  EXPECT_FALSE(syzygy::probe_wdl(board_of("8/8/8/8/4k3/8/1Q6/K7 b - - 5 1")));
  EXPECT_FALSE(syzygy::probe_wdl(board_of("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1")));
  EXPECT_FALSE(syzygy::probe_wdl(board_of("4k3/8/8/8/8/8/PP6/R3K3 w - - 0 1")));
}

// The generator's statistics (KQvK.txt ... beside the tables it made) name
// the longest win of each table and its length in plies, exactly: the DTZ
// tables may store these 3-4-piece distances rounded to moves (Syzygy's
// DTZ rounding), so a probe may be one ply off, never more, and never of
// the other sign.
TEST_F(Syzygy, DtzProbesAgreeWithTheGeneratorsLongestWins) {
  struct Case {
    const char* fen;
    int plies;  // the side to move wins (> 0) or loses (< 0) in this many
  } cases[] = {
      {"8/8/8/8/4k3/8/1Q6/K7 b - - 0 1", -20},     // KQvK
      {"8/8/8/8/8/8/2Rk4/1K6 b - - 0 1", -32},     // KRvK
      {"8/8/7k/8/7K/1P6/8/8 b - - 0 1", -20},      // KPvK
      {"7K/8/p7/8/k7/7R/8/8 w - - 0 1", 25},       // KRvKP, white wins
      {"8/8/8/8/5R2/3k4/2p2K2/8 w - - 0 1", -20},  // KRvKP, black wins
      {"8/8/2k5/1r6/8/8/8/2KQ4 b - - 0 1", -62},   // KQvKR
      {"8/8/8/6B1/8/8/4k3/1K5N b - - 0 1", -66},   // KBNvK
  };
  for (const auto& c : cases) {
    const auto dtz = syzygy::probe_dtz(board_of(c.fen));
    ASSERT_TRUE(dtz) << c.fen;
    EXPECT_EQ(*dtz > 0, c.plies > 0) << c.fen;
    EXPECT_NEAR(*dtz, c.plies, 1) << c.fen << " dtz " << *dtz;
  }
  EXPECT_EQ(syzygy::probe_dtz(board_of("8/8/8/8/8/4k3/4P3/4K3 w - - 0 1")), 0);
  // A zeroing best move: one ply (a capture here).
  EXPECT_EQ(syzygy::probe_dtz(board_of("8/8/8/8/8/8/1kR5/4K3 b - - 0 1")), 0);
  EXPECT_EQ(syzygy::probe_dtz(board_of("8/8/8/8/8/2k5/8/K2Q2r1 w - - 0 1")), 1);  // Qxg1
}

// Plays the game from `fen` with the engine on both sides at `nodes` a
// move; returns the moves and the final status.
struct Game {
  std::vector<std::string> moves;
  std::string status;
  std::vector<uint64_t> tbhits;
  std::vector<Score> scores;
};
Game self_play(Service& service, const std::string& fen, uint64_t nodes, int max_plies) {
  Game g;
  for (int ply = 0; ply < max_plies; ++ply) {
    auto now = service.moves(GameKind::chess, fen, g.moves);
    EXPECT_TRUE(now);
    if (!now || now->status != "ongoing") {
      if (now) g.status = now->status;
      return g;
    }
    AnalysisRequest r;
    r.fen = fen;
    r.moves = g.moves;
    r.limits.nodes = nodes;
    auto a = test::analyze(service, r);
    EXPECT_TRUE(a);
    if (!a || !a->result.bestmove) return g;
    g.moves.push_back(*a->result.bestmove);
    g.tbhits.push_back(a->result.tbhits);
    if (!a->result.lines.empty()) g.scores.push_back(a->result.lines[0].score);
  }
  g.status = "unfinished";
  return g;
}

// The longest wins of KQvK, KRvK, KPvK and KQvKR, played out by the engine
// against itself at 2,000 nodes a move: each ends in mate, within the
// fifty-move rule (the status would say draw_fifty_move_rule otherwise).
TEST_F(Syzygy, SearchConvertsWonEndingsAtFewNodes) {
  auto service = test::make_service(1, 4);
  const char* fens[] = {
      "8/8/8/8/4k3/8/1Q6/K7 b - - 0 1",
      "8/8/8/8/8/8/2Rk4/1K6 b - - 0 1",
      "8/8/7k/8/7K/1P6/8/8 b - - 0 1",
      "8/8/2k5/1r6/8/8/8/2KQ4 b - - 0 1",
  };
  for (const char* fen : fens) {
    const Game g = self_play(*service, fen, 2000, 300);
    EXPECT_EQ(g.status, "checkmate") << fen << " after " << g.moves.size() << " plies";
    // White (the winner) moves on odd plies here: mate ends on White's move.
    EXPECT_EQ(g.moves.size() % 2, 0u) << fen;
    ASSERT_FALSE(g.tbhits.empty());
    EXPECT_GT(g.tbhits.front(), 0u) << fen;
    std::printf("[ figures  ] %s: mate after %zu plies\n", fen, g.moves.size());
  }
}

// A drawn KRvKP (the pawn on its seventh, supported, the white king far)
// and a drawn KPvK: neither side lets the position become lost, however
// long the game goes (here 120 plies, or its end by rule).
TEST_F(Syzygy, SearchHoldsDrawnEndings) {
  auto service = test::make_service(1, 4);
  struct Case {
    const char* fen;
  } cases[] = {
      {"8/8/8/8/8/4k3/4P3/4K3 w - - 0 1"},  // KPvK: black holds
      {"7K/8/8/8/8/1k6/2p5/7R w - - 0 1"},  // KRvKP
  };
  for (const auto& c : cases) {
    ASSERT_EQ(syzygy::probe_dtz(board_of(c.fen)), 0) << c.fen << ": not a draw";
    const Game g = self_play(*service, c.fen, 2000, 120);
    EXPECT_NE(g.status, "checkmate") << c.fen;
    // After every move, the position is still a draw by the tables.
    for (size_t n = 1; n <= g.moves.size(); ++n) {
      std::vector<std::string> played(g.moves.begin(), g.moves.begin() + long(n));
      auto p = service->prepare(GameKind::chess, c.fen, played);
      ASSERT_TRUE(p);
      const auto dtz = syzygy::probe_dtz(board_of((*p)->info().fen));
      if (!dtz) continue;  // fewer pieces than a table covers: KvK
      EXPECT_EQ(*dtz, 0) << c.fen << " after " << n << " plies";
      if (*dtz != 0) break;
    }
  }
}

TEST_F(Syzygy, TbhitsCountedAndScoresShowTheWin) {
  auto service = test::make_service(1, 4);
  AnalysisRequest r;
  r.fen = "8/8/8/8/4k3/8/1Q6/K7 w - - 0 1";  // KQvK, White to move wins
  r.limits.depth = 8;
  auto a = test::analyze(*service, r);
  ASSERT_TRUE(a);
  EXPECT_GT(a->result.tbhits, 0u);
  ASSERT_FALSE(a->result.lines.empty());
  const Score s = a->result.lines[0].score;
  // A tablebase win (cp 20000 less the plies) or a mate the search saw.
  EXPECT_TRUE(s.kind == ScoreKind::mate ? s.value > 0 : s.value > 19000) << s.value;
  EXPECT_EQ(a->result.lines[0].wdl[0], 1000);

  // Inside the tree: a five-piece root whose captures lead into the tables.
  r.fen = "8/8/8/3k4/8/3q4/3Q4/3K3R w - - 0 1";  // Qxd3+ wins the queen: KQRvK
  r.limits.depth = 6;
  a = test::analyze(*service, r);
  ASSERT_TRUE(a);
  EXPECT_GT(a->result.tbhits, 0u);
  ASSERT_TRUE(a->result.bestmove);
  EXPECT_EQ(*a->result.bestmove, "d2d3");
  const Score won = a->result.lines[0].score;
  EXPECT_TRUE(won.kind == ScoreKind::mate ? won.value > 0 : won.value > 19000) << won.value;

  // More pieces than any table, no capture near: a search as ever, no hit.
  r.fen = "";  // the initial position
  a = test::analyze(*service, r);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->result.tbhits, 0u);
  EXPECT_TRUE(a->result.bestmove);
}

TEST(SyzygyOff, NoTablesNoHits) {
  ASSERT_EQ(syzygy::select(""), "");
  auto service = test::make_service(1, 4);
  AnalysisRequest r;
  r.fen = "8/8/8/8/4k3/8/1Q6/K7 w - - 0 1";
  r.limits.depth = 8;
  auto a = test::analyze(*service, r);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->result.tbhits, 0u);
  auto look = service->tablebase("8/8/8/8/4k3/8/1Q6/K7 w - - 0 1");
  ASSERT_FALSE(look);
  EXPECT_EQ(look.error().code, "no_tablebases");
}

const TablebaseMove* find_move(const TablebaseReport& r, const std::string& uci) {
  for (const auto& m : r.moves)
    if (m.uci == uci) return &m;
  return nullptr;
}

TEST_F(Syzygy, LookupAnswersInLichessTerms) {
  auto service = test::make_service(1, 1);
  // KQvK, White to move: a win; every move keeps it but the queen's loss.
  auto r = service->tablebase("8/8/8/8/4k3/8/1Q6/K7_w_-_-_0_1");  // underscores, as Lichess
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->category, "win");
  ASSERT_TRUE(r->dtz);
  EXPECT_GT(*r->dtz, 0);
  EXPECT_FALSE(r->checkmate);
  ASSERT_FALSE(r->moves.empty());
  EXPECT_EQ(r->moves.front().category, "loss");  // the opponent's, after the best move
  EXPECT_LT(*r->moves.front().dtz, 0);
  // Best first: the categories never get better for the mover down the list,
  // and among losses for the opponent, the one nearest to zeroing first.
  for (size_t i = 1; i < r->moves.size(); ++i) {
    const auto& a = r->moves[i - 1];
    const auto& b = r->moves[i];
    if (a.category == "loss" && b.category == "loss" && !a.checkmate && !b.checkmate &&
        a.zeroing == b.zeroing && a.conversion == b.conversion) {
      EXPECT_GE(*a.dtz, *b.dtz) << a.uci << " before " << b.uci;
    }
  }
  // The position's DTZ is one more than its best move's (within Syzygy's rounding).
  EXPECT_NEAR(*r->dtz, 1 - *r->moves.front().dtz, 1);

  // Mate in one: the mating move first, checkmate true, a loss at dtz -1.
  r = service->tablebase("k7/8/1K6/8/8/8/7Q/8 w - - 0 1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->category, "win");
  EXPECT_TRUE(r->moves.front().checkmate);
  EXPECT_EQ(r->moves.front().category, "loss");
  EXPECT_EQ(r->moves.front().dtz, -1);
  EXPECT_EQ(r->moves.front().precise_dtz, -1);
  EXPECT_EQ(r->dtz, 1);
  EXPECT_EQ(r->precise_dtz, 1);
  // A stalemating move is a draw, listed after the wins.
  const auto* stalemate = find_move(*r, "h2c7");
  ASSERT_TRUE(stalemate);
  EXPECT_TRUE(stalemate->stalemate);
  EXPECT_EQ(stalemate->category, "draw");
  EXPECT_EQ(stalemate->dtz, 0);

  // The fifty-move rule: a win whose DTZ would pass it is a cursed win.
  r = service->tablebase("8/8/8/8/8/8/2Rk4/1K6 b - - 90 1");  // loses in 32 plies, 90 played
  ASSERT_TRUE(r);
  EXPECT_EQ(r->category, "blessed-loss");
  r = service->tablebase("8/8/8/8/8/8/2Rk4/1K6 b - - 0 1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->category, "loss");

  // Drawn, with insufficient material after the capture.
  r = service->tablebase("8/8/8/8/8/8/1kR5/4K3 b - - 0 1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->category, "draw");
  EXPECT_EQ(r->moves.front().uci, "b2c2");
  EXPECT_TRUE(r->moves.front().insufficient_material);
  EXPECT_TRUE(r->moves.front().zeroing);
  EXPECT_TRUE(r->moves.front().conversion);

  // Five pieces: unknown, but a capture into the tables is known.
  r = service->tablebase("8/8/8/3k4/8/3q4/3Q4/3K3R w - - 0 1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dtz, std::nullopt);
  const auto* take = find_move(*r, "d2d3");
  ASSERT_TRUE(take);
  EXPECT_EQ(take->category, "loss");
  EXPECT_EQ(r->moves.front().uci, "d2d3");
  EXPECT_EQ(r->category, "win");  // the best move's, as Lichess infers it
  // Castling rights: the position is never probed (its dtz unknown), but
  // every move gives them up, and the best move's result is the position's.
  r = service->tablebase("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dtz, std::nullopt);
  EXPECT_EQ(r->category, "win");

  auto bad = service->tablebase("not a fen");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "invalid_fen");
}

}  // namespace
}  // namespace kibitz::engine
