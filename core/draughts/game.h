// draughts::Game: the draughts side of the search interface (search/game.h).
#pragma once

#include <cstdint>

#include "common/score.h"
#include "draughts/eval.h"
#include "draughts/movegen.h"

KIBITZ_NAMESPACE(draughts) {

struct Game {
  using Position = draughts::Position;
  using Move = draughts::Move;
  static constexpr int kMaxMoves = draughts::kMaxMoves;
  static constexpr int kHistorySize = 2 * 32 * 32;
  // Zugzwang decides draughts endings: passing is never a safe bound.
  static constexpr bool kHasNullMove = false;

  // Capture is mandatory, so a position has captures or quiet moves, never
  // both; a position with a capture pending is never quiet.
  static Move* generate_tactical(const Position& p, Move* l) {
    return generate<GenType::Captures>(p, l);
  }
  static Move* generate_quiet(const Position& p, Move* l) {
    return generate<GenType::Quiets>(p, l);
  }
  static Move* generate_qsearch(const Position& p, Move* l) {
    return generate<GenType::Captures>(p, l);
  }
  static bool stand_pat_allowed(const Position& p) { return !has_capture(p); }
  static bool in_check(const Position&) { return false; }
  static bool gives_check(const Position&, Move) { return false; }
  static bool is_tactical(const Position& p, Move m) { return m.is_capture() || p.crowns(m); }
  static int capture_score(const Position& p, Move m) {
    return 100 * popcount(m.captured) + 200 * popcount(m.captured & p.kings()) +
           (p.crowns(m) ? 150 : 0);
  }
  static bool see_ge(const Position&, Move, int) { return true; }
  static int history_index(const Position& p, Move m) {
    return (p.side_to_move() * 32 + m.from) * 32 + m.to;
  }
  static uint16_t move_code(Move m) { return m.code(); }
  static void do_move(Position& p, Move m) { p.do_move(m); }
  static void undo_move(Position& p, Move m) { p.undo_move(m); }
  static uint64_t key(const Position& p) { return p.key(); }
  static search::Value evaluate(const Position& p) { return draughts::evaluate(p); }
  // A side without a legal move has lost, even on the ply a draw rule is met.
  static bool is_draw(const Position& p, int ply) {
    return p.is_draw(ply) && count_legal_moves(p) != 0;
  }
  static search::Value no_moves_value(const Position&, int ply) { return search::mated_in(ply); }
  static bool white_to_move(const Position& p) { return p.side_to_move() == White; }
};

}  // KIBITZ_NAMESPACE(draughts)
