// The compile-time interface a game offers the search. The search, the
// transposition table and the job machinery are written once against it;
// chess::Game and draughts::Game implement it.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>

#include "common/score.h"

KIBITZ_NAMESPACE(search) {

template <class G>
concept Game = std::copyable<typename G::Position> && std::regular<typename G::Move> &&
    requires(typename G::Position& pos, const typename G::Position& cpos, typename G::Move m,
             typename G::Move* list, int ply) {
  { G::kMaxMoves } -> std::convertible_to<int>;
  { G::kHistorySize } -> std::convertible_to<int>;
  { G::kHasNullMove } -> std::convertible_to<bool>;  // false where zugzwang is the rule
  // Move generation: tactical + quiet = all legal moves, disjoint.
  { G::generate_tactical(cpos, list) } -> std::same_as<typename G::Move*>;
  { G::generate_quiet(cpos, list) } -> std::same_as<typename G::Move*>;
  // The moves quiescence search tries, and whether it may stand pat instead
  // (not in check; in draughts, not with a capture pending).
  { G::generate_qsearch(cpos, list) } -> std::same_as<typename G::Move*>;
  { G::stand_pat_allowed(cpos) } -> std::same_as<bool>;
  { G::in_check(cpos) } -> std::same_as<bool>;
  { G::gives_check(cpos, m) } -> std::same_as<bool>;
  { G::is_tactical(cpos, m) } -> std::same_as<bool>;
  { G::capture_score(cpos, m) } -> std::convertible_to<int>;  // MVV-LVA-like order
  { G::see_ge(cpos, m, 0) } -> std::same_as<bool>;
  { G::history_index(cpos, m) } -> std::convertible_to<int>;
  { G::move_code(m) } -> std::same_as<uint16_t>;  // for the table; 0 = none
  {G::do_move(pos, m)};
  {G::undo_move(pos, m)};
  { G::key(cpos) } -> std::same_as<uint64_t>;
  { G::evaluate(cpos) } -> std::convertible_to<Value>;  // side to move's view
  { G::is_draw(cpos, ply) } -> std::same_as<bool>;
  { G::no_moves_value(cpos, ply) } -> std::convertible_to<Value>;
  { G::white_to_move(cpos) } -> std::same_as<bool>;
};

}  // KIBITZ_NAMESPACE(search)
