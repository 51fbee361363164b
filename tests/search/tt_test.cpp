// The transposition table: layout round trip, replacement, mate scores, and
// several threads writing and reading at once (run under ThreadSanitizer in CI).
#include "tt/table.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "common/prng.h"

namespace kibitz::tt {
namespace {

using search::BoundExact;
using search::BoundLower;
using search::BoundUpper;

TEST(TranspositionTable, StoresAndFindsAnEntry) {
  Table table(1);
  table.new_search();
  const uint64_t key = 0x1234'5678'9ABC'DEF0ULL;
  Data d{};
  EXPECT_FALSE(table.probe(key, d));
  table.store(key, -1234, true, BoundLower, 17, 0xBEEF, 56);
  ASSERT_TRUE(table.probe(key, d));
  EXPECT_EQ(d.value, -1234);
  EXPECT_EQ(d.eval, 56);
  EXPECT_EQ(d.depth, 17);
  EXPECT_EQ(d.bound, BoundLower);
  EXPECT_TRUE(d.pv);
  EXPECT_EQ(d.move, 0xBEEF);
  EXPECT_FALSE(table.probe(key ^ 1, d)) << "another key is a miss";
}

TEST(TranspositionTable, KeepsTheMoveWhenAnUpdateHasNone) {
  Table table(1);
  const uint64_t key = 42;
  table.store(key, 10, false, BoundLower, 5, 0x1111, 0);
  table.store(key, 20, false, BoundUpper, 6, 0, 0);
  Data d{};
  ASSERT_TRUE(table.probe(key, d));
  EXPECT_EQ(d.value, 20);
  EXPECT_EQ(d.move, 0x1111);
}

TEST(TranspositionTable, ReplacesShallowAndStaleEntriesFirst) {
  // Keys that share a cluster: with one MiB there are 16384 clusters, and the
  // index is the high bits of key * count, so keys differing in low bits map
  // to the same cluster.
  Table table(1);
  table.new_search();
  const uint64_t base = 0x8000'0000'0000'0000ULL;
  for (uint64_t i = 0; i < 4; ++i) table.store(base + i, 0, false, BoundExact, 10 + int(i), 1, 0);
  table.store(base + 4, 0, false, BoundExact, 20, 1, 0);  // evicts the depth-10 entry
  Data d{};
  EXPECT_FALSE(table.probe(base + 0, d));
  for (uint64_t i = 1; i <= 4; ++i) EXPECT_TRUE(table.probe(base + i, d)) << i;
  // Entries of older searches go before deeper ones of this search.
  table.new_search();
  table.new_search();
  table.store(base + 1, 0, false, BoundExact, 11, 1, 0);  // refreshed
  table.store(base + 2, 0, false, BoundExact, 12, 1, 0);
  table.store(base + 3, 0, false, BoundExact, 13, 1, 0);
  table.store(base + 5, 0, false, BoundExact, 1, 1, 0);  // evicts the stale depth-20 entry
  EXPECT_FALSE(table.probe(base + 4, d));
  EXPECT_TRUE(table.probe(base + 5, d));
}

TEST(TranspositionTable, MateScoresAreRelativeToTheNode) {
  // A mate in 5 plies from a node 3 plies below the root is a mate in 8
  // from the root; stored at that node it reads back as mate in 5 from there.
  const search::Value from_root = search::mate_in(8);
  const search::Value stored = value_to_tt(from_root, 3);
  EXPECT_EQ(stored, search::mate_in(5));
  EXPECT_EQ(value_from_tt(stored, 6), search::mate_in(11));
  EXPECT_EQ(value_to_tt(search::mated_in(4), 2), search::mated_in(2));
  EXPECT_EQ(value_to_tt(123, 7), 123);
}

TEST(TranspositionTable, HashfullCountsThisSearchOnly) {
  Table table(1);
  table.new_search();
  EXPECT_EQ(table.hashfull(), 0);
  Prng rng(5);
  for (int i = 0; i < 200000; ++i) table.store(rng.next(), 0, false, BoundExact, 3, 1, 0);
  EXPECT_GT(table.hashfull(), 900);
  table.new_search();
  EXPECT_EQ(table.hashfull(), 0);
  table.clear(2);
  Data d{};
  EXPECT_FALSE(table.probe(0, d));
}

// Every entry carries data derived from its key; a hit that returns anything
// else was torn or foreign and trusted anyway.
struct Derived {
  search::Value value, eval;
  search::Depth depth;
  uint16_t move;
  search::Bound bound;
};
Derived derive(uint64_t key) {
  return {search::Value(int16_t(key >> 16) % 30000), search::Value(int16_t(key >> 32) % 30000),
          int(key % 60) + 1, uint16_t((key >> 48) | 1), search::Bound(1 + (key >> 8) % 3)};
}

TEST(TranspositionTable, ConcurrentWritersNeverYieldForeignData) {
  Table table(1);  // small, so threads collide on clusters constantly
  table.new_search();
  constexpr int kThreads = 4;
  std::atomic<uint64_t> hits{0}, bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Prng rng(1000 + uint64_t(t));
      // A small key set per thread plus a shared one, so hits are frequent.
      for (int i = 0; i < 300000; ++i) {
        const uint64_t key =
            (rng.next() % 2 ? rng.next() % 50000 : 0x5000'0000'0000ULL + rng.next() % 5000) *
            0x9E3779B97F4A7C15ULL;
        const Derived d = derive(key);
        if (rng.next() % 3) {
          table.store(key, d.value, false, d.bound, d.depth, d.move, d.eval);
          if (i % 1024 == 0 && t == 0) table.new_search();
        } else {
          Data got{};
          if (table.probe(key, got)) {
            hits.fetch_add(1, std::memory_order_relaxed);
            if (got.value != d.value || got.eval != d.eval || got.depth != d.depth ||
                got.move != d.move || got.bound != d.bound)
              bad.fetch_add(1, std::memory_order_relaxed);
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_GT(hits.load(), 1000u) << "the test must exercise hits";
  EXPECT_EQ(bad.load(), 0u);
}

}  // namespace
}  // namespace kibitz::tt
