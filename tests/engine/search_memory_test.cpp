// A search memory (Service::make_memory) hands the history tables from one
// search to the next: the UCI front end keeps one per game. Named
// ChessSearchMemory so the ThreadSanitizer stage runs it too.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "support/service.h"

namespace kibitz::engine {
namespace {

const char* const kMiddlegame = "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 9";

// Nodes of one single-threaded search to `depth` on an empty table.
uint64_t nodes_to_depth(Service& service, GameKind game, const std::string& fen, int depth,
                        std::shared_ptr<SearchMemory> memory) {
  service.clear_hash();
  AnalysisRequest r;
  r.game = game;
  r.fen = fen;
  r.limits.depth = depth;
  r.memory = std::move(memory);
  auto a = test::analyze(service, r);
  EXPECT_TRUE(a);
  return a ? a->result.nodes : 0;
}

TEST(ChessSearchMemory, TheNextSearchStartsFromWhatTheLastOneLearnt) {
  auto service = test::make_service(1, 16);
  const uint64_t fresh = nodes_to_depth(*service, GameKind::chess, kMiddlegame, 9, nullptr);
  auto memory = service->make_memory();
  ASSERT_TRUE(memory);
  // An empty memory searches as no memory does.
  EXPECT_EQ(nodes_to_depth(*service, GameKind::chess, kMiddlegame, 9, memory), fresh);
  // The second search orders its moves by the first one's histories: the
  // table is cleared, so only the memory can make it search differently.
  EXPECT_NE(nodes_to_depth(*service, GameKind::chess, kMiddlegame, 9, memory), fresh);
  // A new memory forgets.
  EXPECT_EQ(nodes_to_depth(*service, GameKind::chess, kMiddlegame, 9, service->make_memory()),
            fresh);
}

TEST(ChessSearchMemory, EachGameKeepsItsOwnTables) {
  auto service = test::make_service(1, 16);
  const std::string draughts_start;  // empty: the start position
  const uint64_t fresh = nodes_to_depth(*service, GameKind::draughts, draughts_start, 8, nullptr);
  auto memory = service->make_memory();
  // Chess fills the memory's chess tables; draughts still starts from nothing.
  nodes_to_depth(*service, GameKind::chess, kMiddlegame, 8, memory);
  EXPECT_EQ(nodes_to_depth(*service, GameKind::draughts, draughts_start, 8, memory), fresh);
  EXPECT_NE(nodes_to_depth(*service, GameKind::draughts, draughts_start, 8, memory), fresh);
}

TEST(ChessSearchMemory, SharedBySearchesAtOnceAndDroppedWhileTheyRun) {
  auto service = test::make_service(2, 16);
  for (int round = 0; round < 20; ++round) {
    auto memory = service->make_memory();
    std::atomic<int> done{0};
    std::vector<std::shared_ptr<SearchHandle>> handles;
    for (int i = 0; i < 3; ++i) {
      AnalysisRequest r;
      r.fen = kMiddlegame;
      r.threads = 1 + i % 2;
      r.limits.nodes = 20'000 + 10'000 * uint64_t(round % 3);
      r.memory = memory;
      Callbacks cb;
      cb.on_done = [&](const Result& result) {
        EXPECT_TRUE(result.bestmove);
        EXPECT_FALSE(result.error);
        done++;
      };
      auto h = service->analyze(r, std::move(cb));
      ASSERT_TRUE(h);
      handles.push_back(*h);
    }
    memory.reset();  // the searches keep what they hold alive
    if (round % 2) handles[0]->stop();
    for (auto& h : handles) h->wait();
    EXPECT_EQ(done.load(), 3);
  }
}

}  // namespace
}  // namespace kibitz::engine
