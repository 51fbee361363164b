// The search's move ordering helpers (search/search.h, namespace detail):
// the rest of a node's moves sorted once, best first, ties in their order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "search/search.h"

namespace kibitz::search::detail {
namespace {

TEST(MoveOrder, SortRestIsAStableSortByScoreBestFirst) {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    const int count = int(rng() % 220), from = count ? int(rng() % (count + 1)) : 0;
    const int spread = 1 + int(rng() % 50);  // few distinct scores: many ties
    std::vector<uint16_t> moves(static_cast<size_t>(count));
    std::vector<int> scores(static_cast<size_t>(count));
    std::iota(moves.begin(), moves.end(), uint16_t(0));
    for (auto& s : scores)
      s = int(rng() % unsigned(spread)) - spread / 2 + (rng() % 9 == 0 ? 1 << 27 : 0);
    std::vector<std::pair<int, uint16_t>> want;
    for (int i = from; i < count; ++i) want.emplace_back(scores[size_t(i)], moves[size_t(i)]);
    std::stable_sort(want.begin(), want.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    const auto before = moves;
    sort_rest<uint16_t, 256>(moves.data(), scores.data(), from, count);
    for (int i = 0; i < from; ++i) ASSERT_EQ(moves[size_t(i)], before[size_t(i)]);
    for (int i = from; i < count; ++i) {
      ASSERT_EQ(scores[size_t(i)], want[size_t(i - from)].first) << "round " << round;
      ASSERT_EQ(moves[size_t(i)], want[size_t(i - from)].second) << "round " << round;
    }
  }
}

}  // namespace
}  // namespace kibitz::search::detail
