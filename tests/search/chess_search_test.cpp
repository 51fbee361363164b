// The search on chess positions whose answers are known (checked with
// Stockfish): mates at the depth they need, draws by rule, MultiPV, limits.
#include <gtest/gtest.h>

#include <new>
#include <set>
#include <stdexcept>
#include <thread>

#include "support/root_search.h"
#include "support/service.h"
#include "support/table_hygiene.h"

namespace kibitz::test {
namespace {

using engine::AnalysisRequest;
using engine::ScoreKind;

AnalysisRequest chess(const std::string& fen, int depth) {
  AnalysisRequest r;
  r.game = GameKind::chess;
  r.fen = fen;
  r.limits.depth = depth;
  return r;
}

engine::Result run(const AnalysisRequest& r, int threads = 1) {
  auto service = make_service(threads);
  auto a = analyze(*service, r);
  EXPECT_TRUE(a) << (a ? "" : a.error().message);
  return a ? a->result : engine::Result{};
}

struct MateCase {
  const char* fen;
  int moves;          // mate in this many moves
  const char* first;  // the only mating first move
};

class ChessMate : public testing::TestWithParam<MateCase> {};

TEST_P(ChessMate, FoundAtTheDepthItNeeds) {
  const MateCase& c = GetParam();
  const auto r = run(chess(c.fen, 2 * c.moves - 1));
  ASSERT_FALSE(r.lines.empty());
  EXPECT_EQ(r.lines[0].score.kind, ScoreKind::mate);
  EXPECT_EQ(r.lines[0].score.value, c.moves);
  EXPECT_EQ(r.bestmove.value_or(""), c.first);
  EXPECT_EQ(int(r.lines[0].moves.size()), 2 * c.moves - 1) << "the line shows the whole mate";
}

INSTANTIATE_TEST_SUITE_P(
    Known, ChessMate,
    testing::Values(
        MateCase{"6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1", 1, "a1a8"},
        MateCase{"r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1", 2, "d5f6"},
        MateCase{"r1b1kb1r/pppp1ppp/5q2/4n3/3KP3/2N3PN/PPP4P/R1BQ1B1R b kq - 0 1", 3, "f8c5"}));

TEST(ChessSearch, MatedSideSeesNegativeMate) {
  // Black to move is mated in 1 whatever it does (the rook on a8 threat).
  const auto r = run(chess("6k1/5ppp/8/8/8/8/5PPP/R5K1 b - - 0 1", 4));
  ASSERT_FALSE(r.lines.empty());
  EXPECT_EQ(r.lines[0].score.kind, ScoreKind::cp) << "black has ...h6 or ...g6: no forced mate";
  const auto mated = run(chess("R5k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 1", 2));
  EXPECT_EQ(mated.status, "checkmate");
  EXPECT_FALSE(mated.bestmove);
  EXPECT_TRUE(mated.lines.empty());
}

TEST(ChessSearch, ThreefoldRepetitionIsScoredAsADraw) {
  // White, a queen down, can complete a third repetition with Ka1-b1.
  AnalysisRequest r = chess("7k/4q3/8/8/8/8/8/1K6 b - - 0 1", 8);
  r.moves = {"e7e6", "b1a1", "e6e7", "a1b1", "e7e6", "b1a1", "e6e7"};
  const auto result = run(r);
  EXPECT_EQ(result.bestmove.value_or(""), "a1b1");
  EXPECT_EQ(result.lines.at(0).score, (engine::Score{ScoreKind::cp, 0}));
  // Without that history the same position is lost.
  const auto lost = run(chess("7k/4q3/8/8/8/8/8/K7 w - - 0 1", 8));
  EXPECT_LT(lost.lines.at(0).score.value, -500);
}

TEST(ChessSearch, FiftyMoveRuleIsScoredAsADraw) {
  const auto drawn = run(chess("8/8/8/8/8/5k2/8/R3K3 w - - 99 100", 6));
  EXPECT_EQ(drawn.lines.at(0).score, (engine::Score{ScoreKind::cp, 0}));
  const auto winning = run(chess("8/8/8/8/8/5k2/8/R3K3 w - - 0 100", 6));
  EXPECT_GT(winning.lines.at(0).score.value, 300);
}

TEST(ChessSearch, MultiPvGivesDistinctMovesBestFirst) {
  AnalysisRequest r = chess("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3", 7);
  r.multipv = 4;
  const auto result = run(r);
  ASSERT_EQ(result.lines.size(), 4u);
  std::set<std::string> firsts;
  for (size_t i = 0; i < result.lines.size(); ++i) {
    EXPECT_EQ(result.lines[i].multipv, int(i) + 1);
    firsts.insert(result.lines[i].moves.at(0));
    if (i > 0) {
      EXPECT_LE(result.lines[i].score.value, result.lines[i - 1].score.value);
    }
  }
  EXPECT_EQ(firsts.size(), 4u);
  EXPECT_EQ(result.bestmove.value_or(""), result.lines[0].moves[0]);
}

TEST(ChessSearch, MultiPvIsCappedByTheLegalMoves) {
  AnalysisRequest r = chess("7k/8/8/8/8/8/8/K7 w - - 0 1", 4);  // 3 legal moves
  r.multipv = 10;
  EXPECT_EQ(run(r).lines.size(), 3u);
}

TEST(ChessSearch, SearchmovesAreHonoured) {
  AnalysisRequest r = chess("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1", 5);
  r.searchmoves = {"h2h3", "g2g4"};
  const auto result = run(r);
  ASSERT_TRUE(result.bestmove);
  EXPECT_TRUE(*result.bestmove == "h2h3" || *result.bestmove == "g2g4") << *result.bestmove;
  r.searchmoves = {"a1a9"};
  auto service = make_service();
  auto bad = analyze(*service, r);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "illegal_move");
}

TEST(ChessSearch, NodeLimitIsRespected) {
  AnalysisRequest r = chess("", 0);
  r.limits.depth.reset();
  r.limits.nodes = 20000;
  const auto result = run(r);
  EXPECT_GE(result.nodes, 20000u);
  EXPECT_LT(result.nodes, 21000u) << "checked every 512 nodes";
  EXPECT_TRUE(result.bestmove);
}

// limits.deadline is a caller's bound (a server's job deadline or movetime
// cap): a search it ends before the search's own limits says so
// (cut_by_deadline; the server answers "stopped": true), one that reaches
// its own limits first does not. The limits here take minutes without the
// deadline; the deadlines of the uncut searches are ten minutes away.
TEST(ChessSearch, ADeadlineBeforeItsOwnLimitsCutsTheSearch) {
  using namespace std::chrono_literals;
  const auto at = [](std::chrono::milliseconds ms) { return Clock::now() + ms; };
  AnalysisRequest deep = chess("", 64);
  deep.limits.deadline = at(100ms);
  engine::Result r = run(deep);
  EXPECT_TRUE(r.cut_by_deadline);
  EXPECT_FALSE(r.stopped) << "no stop() was called";
  EXPECT_LT(r.depth, 64);
  EXPECT_TRUE(r.bestmove);

  AnalysisRequest infinite = chess("", 0);
  infinite.limits.depth.reset();
  infinite.limits.infinite = true;
  infinite.limits.deadline = at(100ms);
  EXPECT_TRUE(run(infinite).cut_by_deadline);

  AnalysisRequest short_of_it = chess("", 0);
  short_of_it.limits.depth.reset();
  short_of_it.limits.movetime_ms = 60'000;
  short_of_it.limits.deadline = at(100ms);
  EXPECT_TRUE(run(short_of_it).cut_by_deadline) << "the deadline came long before its movetime";

  AnalysisRequest shallow = chess("", 4);
  shallow.limits.deadline = at(600'000ms);
  r = run(shallow);
  EXPECT_FALSE(r.cut_by_deadline);
  EXPECT_EQ(r.depth, 4);

  AnalysisRequest timed = chess("", 0);
  timed.limits.depth.reset();
  timed.limits.movetime_ms = 50;
  timed.limits.deadline = at(600'000ms);
  EXPECT_FALSE(run(timed).cut_by_deadline) << "its own movetime ended it";
}

TEST(ChessSearch, StopEndsAnInfiniteSearchWithinMomentsOfWork) {
  // Work, not wall time, is measured: the nodes searched after stop() has
  // returned. Every node reads the stop flag, so the rest is the unwinding.
  // (Counting from just before stop() would also count whatever the search
  // did while this thread waited for a CPU: the threads outnumber the cores.)
  auto service = make_service(2);
  AnalysisRequest r = chess("", 0);
  r.limits.depth.reset();
  r.limits.infinite = true;
  r.threads = 2;
  std::atomic<uint64_t> seen{0};
  std::atomic<bool> finished{false};
  engine::Result result;
  engine::Callbacks cb;
  cb.on_progress = [&](const engine::Progress& p) { seen.store(p.nodes); };
  cb.on_done = [&](const engine::Result& res) {
    result = res;
    finished.store(true);
  };
  auto h = service->analyze(r, cb);
  ASSERT_TRUE(h);
  while (seen.load() < 200000) std::this_thread::yield();
  EXPECT_FALSE(finished.load()) << "an infinite search ends only when stopped";
  (*h)->stop();
  const uint64_t at_stop = (*h)->nodes();
  (*h)->wait();
  ASSERT_TRUE(finished.load());
  EXPECT_TRUE(result.stopped);
  EXPECT_TRUE(result.bestmove);
  EXPECT_LT(result.nodes - at_stop, 20000u) << "about 10 ms of work at 2M nodes/s";
}

TEST(ChessSearch, SeveralJobsShareThePool) {
  auto service = make_service(2);
  const char* fens[] = {"", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
                        "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10"};
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i)
    clients.emplace_back([&, i] {
      AnalysisRequest r = chess(fens[i % 4], 8);
      r.threads = 1 + i % 2;
      auto a = analyze(*service, r);
      if (a && a->result.bestmove && a->result.depth == 8) ok.fetch_add(1);
    });
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), 8);
}

TEST(ChessSearch, FixedDepthNodeCountIsReproducible) {
  const auto a =
      run(chess("r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", 9));
  const auto b =
      run(chess("r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", 9));
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.lines.at(0).moves, b.lines.at(0).moves);
}

TEST(ChessSearch, IterationsArriveInOrderWithAllLines) {
  auto service = make_service();
  AnalysisRequest r = chess("", 6);
  r.multipv = 2;
  auto a = analyze(*service, r);
  ASSERT_TRUE(a);
  ASSERT_EQ(a->iterations.size(), 6u);
  for (size_t i = 0; i < a->iterations.size(); ++i) {
    EXPECT_EQ(a->iterations[i].depth, int(i) + 1);
    EXPECT_EQ(a->iterations[i].lines.size(), 2u);
  }
  EXPECT_EQ(a->result.depth, 6);
}

TEST(ChessSearch, BadInputIsAnError) {
  auto service = make_service();
  auto bad_fen = analyze(*service, chess("not a fen", 3));
  ASSERT_FALSE(bad_fen);
  EXPECT_EQ(bad_fen.error().code, "invalid_fen");
  AnalysisRequest r = chess("", 3);
  r.moves = {"e2e4", "e7e5", "e1e3"};
  auto bad_move = analyze(*service, r);
  ASSERT_FALSE(bad_move);
  EXPECT_EQ(bad_move.error().code, "illegal_move");
  EXPECT_NE(bad_move.error().message.find("moves[2]"), std::string::npos)
      << bad_move.error().message;
}

// The shared table holds only what is true of a position: a restricted root
// (searchmoves, MultiPV lines after the first) stores no root value.
constexpr const char* kItalian = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";

TEST(ChessSearchTable, SearchmovesStoreNoRootValueButKeepTheEntriesBelow) {
  check_searchmoves_store_no_root_value<ChessGame>(kItalian, "a2a3", 7);
}

TEST(ChessSearchTable, MultiPvLinesAfterTheFirstStoreNoRootValue) {
  // 3. Nxh4 takes the queen: the first line, far ahead of the others.
  check_multipv_stores_the_first_line_only<ChessGame>(
      "rnb1kbnr/pppp1ppp/8/4p3/4P2q/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3", 4, 7);
}

// Faults: nothing thrown inside a search leaves its pool task; the search
// reports the failure in Result::error, once.
TEST(ChessSearchFaults, WorkerThatThrowsEndsTheSearchWithTheError) {
  for (int thrower : {0, 1}) {
    DirectSearch<ChessGame> search(2);
    AnalysisRequest r = chess(kItalian, 40);
    r.limits.nodes = 50'000'000;  // a bound if the failure did not stop the search
    r.threads = 2;
    const auto result = search.run(position<ChessGame>(kItalian), r, {}, [&](auto& s) {
      s.set_iteration_hook([thrower](int worker, int depth) {
        if (worker == thrower && depth >= 4) throw std::bad_alloc();
      });
    });
    ASSERT_TRUE(result.error) << "worker " << thrower;
    EXPECT_EQ(*result.error, std::bad_alloc().what());
    EXPECT_LT(result.nodes, 50'000'000u) << "the failure stopped the search";
    EXPECT_FALSE(result.stopped) << "not stopped by a request";
    EXPECT_TRUE(result.bestmove) << "what was found before is kept";
    EXPECT_GE(result.depth, 1);
    // The pool's threads go on: the next search runs on them.
    const auto next = search.run(position<ChessGame>(kItalian), chess(kItalian, 5));
    EXPECT_FALSE(next.error);
    EXPECT_EQ(next.depth, 5);
  }
}

TEST(ChessSearchFaults, OnIterationThatThrowsStopsTheSearchWithTheError) {
  DirectSearch<ChessGame> search(1);
  engine::Callbacks cb;
  std::vector<int> depths;
  cb.on_progress = [&](const engine::Progress& p) {
    depths.push_back(p.depth);
    if (p.depth == 3) throw std::runtime_error("client went away");
  };
  const auto result = search.run(position<ChessGame>(kItalian), chess(kItalian, 40), cb);
  ASSERT_TRUE(result.error);
  EXPECT_EQ(*result.error, "client went away");
  EXPECT_EQ(depths, (std::vector<int>{1, 2, 3})) << "no iteration after the throw";
  EXPECT_EQ(result.depth, 3);
  EXPECT_EQ(result.lines.size(), 1u);
}

TEST(ChessSearchFaults, OnDoneThatThrowsIsSwallowedAndThePoolGoesOn) {
  DirectSearch<ChessGame> search(1);
  engine::Callbacks cb;
  int calls = 0;
  cb.on_done = [&](const engine::Result&) {
    ++calls;
    throw std::runtime_error("bug in the caller");
  };
  const auto result = search.run(position<ChessGame>(kItalian), chess(kItalian, 4), cb);
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(result.error) << "the search itself went well";
  const auto next = search.run(position<ChessGame>(kItalian), chess(kItalian, 4));
  EXPECT_EQ(next.depth, 4) << "the pool's one thread is still there";
}

}  // namespace
}  // namespace kibitz::test
