// The table's root entries after restricted searches, for either game: what
// the search tests of both games check (see search/search.h, "The table is
// shared by every search").
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "support/root_search.h"

namespace kibitz::test {

// A searchmoves search of `move` stores no value for its root, while the
// positions below the root keep theirs; an unrestricted search then stores
// the root's.
template <class G>
void check_searchmoves_store_no_root_value(const std::string& fen, const std::string& move,
                                           int depth) {
  DirectSearch<G> search;
  const auto root = position<G>(fen);
  engine::AnalysisRequest r;
  r.limits.depth = depth;
  r.searchmoves = {move};
  const engine::Result restricted = search.run(root, r);
  ASSERT_EQ(restricted.bestmove.value_or(""), move);
  ASSERT_EQ(restricted.depth, depth);
  tt::Data d{};
  EXPECT_FALSE(search.table().probe(G::key(root), d))
      << "the value of " << move << " alone was stored as the root's (move " << d.move << ", value "
      << d.value << ")";
  EXPECT_TRUE(search.table().probe(key_after<G>(root, move), d)) << "the entry below the root";

  r.searchmoves.clear();
  const engine::Result full = search.run(root, r);
  ASSERT_TRUE(full.bestmove);
  ASSERT_TRUE(search.table().probe(G::key(root), d)) << "an unrestricted search stores its root";
  EXPECT_EQ(d.move, G::move_code(find_move<G>(root, *full.bestmove)));
  EXPECT_EQ(impl::Report<G>::score(tt::value_from_tt(d.value, 0)), full.lines.at(0).score);
}

// After a MultiPV search the root's entry is the first line's (the search
// of every move), not a later line's (a search without the better moves);
// the positions after each line's first move keep their entries. The
// position needs a clearly best move: the lines are sorted by score at the
// end, and a later line's search can score above the first's when they are
// close.
template <class G>
void check_multipv_stores_the_first_line_only(const std::string& fen, int lines, int depth) {
  DirectSearch<G> search;
  const auto root = position<G>(fen);
  engine::AnalysisRequest r;
  r.limits.depth = depth;
  r.multipv = lines;
  const engine::Result result = search.run(root, r);
  ASSERT_EQ(int(result.lines.size()), lines);
  ASSERT_EQ(result.depth, depth);
  tt::Data d{};
  ASSERT_TRUE(search.table().probe(G::key(root), d));
  const engine::Line& first = result.lines[0];
  EXPECT_EQ(d.move, G::move_code(find_move<G>(root, first.moves.at(0))))
      << "the root's move is the first line's, " << first.moves[0];
  EXPECT_EQ(impl::Report<G>::score(tt::value_from_tt(d.value, 0)), first.score)
      << "the root's value is the first line's";
  EXPECT_EQ(d.bound, search::BoundExact);
  for (const auto& line : result.lines)
    EXPECT_TRUE(search.table().probe(key_after<G>(root, line.moves.at(0)), d))
        << "the entry after " << line.moves[0];
}

}  // namespace kibitz::test
