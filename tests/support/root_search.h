// search::RootSearch run directly, on a pool and a table of the test's own,
// so that a test can look into the table and inject faults; and a scope that
// sees every root search the service starts (RootSearch::on_start_for_tests).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "chess/game.h"
#include "draughts/game.h"
#include "engine/root_search.h"
#include "engine/service.h"
#include "engine/thread_pool.h"

namespace kibitz::test {

using ChessGame = chess::Game;
using DraughtsGame = draughts::Game;

template <class Position>
auto parse(const Position& pos, const std::string& text) {
  if constexpr (std::is_same_v<Position, chess::Position>)
    return chess::parse_move(pos, text);
  else
    return draughts::parse_move(pos, text);
}

// The position after `moves` from `fen` (the game's start position when fen
// is empty); fails the test on bad input.
template <class G>
typename G::Position position(const std::string& fen, const std::vector<std::string>& moves = {}) {
  const std::string f =
      !fen.empty() ? fen
                   : std::string(engine::default_fen(
                         std::is_same_v<G, ChessGame> ? GameKind::chess : GameKind::draughts));
  auto pos = G::Position::from_fen(f);
  if (!pos) throw std::runtime_error("bad test position: " + f);
  for (const auto& m : moves) {
    auto move = parse(*pos, m);
    EXPECT_TRUE(move) << m;
    if (move) pos->do_move(*move);
  }
  return std::move(*pos);
}

template <class G>
typename G::Move find_move(const typename G::Position& pos, const std::string& text) {
  auto m = parse(pos, text);
  EXPECT_TRUE(m) << text;
  return m ? *m : typename G::Move{};
}

template <class G>
uint64_t key_after(typename G::Position pos, const std::string& m) {
  G::do_move(pos, find_move<G>(pos, m));
  return G::key(pos);
}

template <class G>
class DirectSearch {
 public:
  using Position = typename G::Position;
  using Move = typename G::Move;

  explicit DirectSearch(int threads = 1, size_t mib = 16) : pool_(threads), table_(mib) {}

  tt::Table& table() { return table_; }

  // Runs a search of `root` to its end, as the service would: every legal
  // move, or request.searchmoves. `prepare` runs on the search before it
  // starts (e.g. set_iteration_hook).
  engine::Result run(const Position& root, const engine::AnalysisRequest& request,
                     engine::Callbacks callbacks = {},
                     std::function<void(impl::RootSearch<G>&)> prepare = {}) {
    std::vector<Move> moves;
    if (request.searchmoves.empty()) {
      Move list[G::kMaxMoves];
      Move* end = G::generate_quiet(root, G::generate_tactical(root, list));
      moves.assign(list, end);
    } else {
      for (const auto& m : request.searchmoves) moves.push_back(find_move<G>(root, m));
    }
    auto result = std::make_shared<engine::Result>();
    auto reports = std::make_shared<int>(0);
    auto on_done = std::move(callbacks.on_done);
    callbacks.on_done = [result, reports, on_done](const engine::Result& r) {
      *result = r;
      ++*reports;
      if (on_done) on_done(r);
    };
    auto search = std::make_shared<impl::RootSearch<G>>(root, std::move(moves), request, table_,
                                                        std::move(callbacks), "");
    if (prepare) prepare(*search);
    search->start(pool_, ++group_);
    search->wait();
    EXPECT_EQ(*reports, 1) << "on_done runs exactly once";
    return *result;
  }

 private:
  engine::ThreadPool pool_;
  tt::Table table_;
  uint64_t group_ = 0;
};

// While alive, sees every root search of game G that starts: `seen` runs
// on the starting thread (a search thread, for a review's later positions).
template <class G>
class RootSearchSpy {
 public:
  explicit RootSearchSpy(std::function<void(impl::RootSearch<G>&)> seen) {
    impl::RootSearch<G>::on_start_for_tests = std::move(seen);
  }
  ~RootSearchSpy() { impl::RootSearch<G>::on_start_for_tests = nullptr; }
  RootSearchSpy(const RootSearchSpy&) = delete;
  RootSearchSpy& operator=(const RootSearchSpy&) = delete;
};

}  // namespace kibitz::test
