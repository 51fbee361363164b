// draughts::Game: the draughts side of the search interface (search/game.h).
#pragma once

#include <array>
#include <cmath>
#include <string>

#include "draughts/eval.h"
#include "draughts/movegen.h"
#include "draughts/notation.h"
#include "engine/analysis.h"
#include "search/types.h"

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

  // Reporting (search/root_search.h).
  static constexpr bool kHasSan = false;
  static bool is_legal(const Position& p, Move m) { return MoveList(p).contains(m); }
  static std::string move_string(const Position& p, Move m) { return to_string(p, m); }
  static std::string san_string(Position&, Move) { return {}; }
  static engine::Score score_to_report(search::Value v) {
    if (!search::is_mate_score(v)) return {engine::ScoreKind::cp, v};
    const int plies = search::mate_plies(v);
    return {engine::ScoreKind::mate, plies > 0 ? (plies + 1) / 2 : plies / 2};
  }
  // Win/draw/loss per mille for the side to move: the same logistic model as
  // chess, on hundredths of a man, centred at one man and a half with a
  // scale of 0.5 man (a man up is often decisive in draughts).
  static std::array<int, 3> wdl(search::Value v) {
    if (search::is_mate_score(v)) return v > 0 ? std::array{1000, 0, 0} : std::array{0, 0, 1000};
    const auto p = [](double x) { return 1.0 / (1.0 + std::exp((150.0 - x) / 50.0)); };
    const int w = int(std::lround(1000 * p(v))), l = int(std::lround(1000 * p(-v)));
    return {w, 1000 - w - l, l};
  }
};

}  // KIBITZ_NAMESPACE(draughts)
