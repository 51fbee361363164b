// The reporting half of each game's adapter: how a search's moves, scores
// and winning chances are shown (UCI or PDN text, SAN, engine::Score, WDL).
// It sits beside the report types (engine/analysis.h) so that the search
// half (chess/game.h, draughts/game.h, the search/game.h interface) needs
// neither strings nor the engine. engine/root_search.h reads it.
#pragma once

#include <array>
#include <cmath>
#include <string>

#include "chess/game.h"
#include "chess/notation.h"
#include "common/score.h"
#include "draughts/game.h"
#include "draughts/notation.h"
#include "engine/analysis.h"

KIBITZ_NAMESPACE(impl) {

// A mate (chess) or a forced win (draughts) in N plies is shown in moves of
// the side that wins: mate in 3 plies is "mate 2", mated in 2 is "mate -1".
// A tablebase win (chess, Syzygy) N plies from the root is shown as Stockfish
// shows one, 20000 - N centipawns.
inline engine::Score score_of(search::Value v) {
  if (search::is_tb_score(v))
    return {engine::ScoreKind::cp,
            v > 0 ? 20000 - (search::kValueTbWin - v) : -20000 + (search::kValueTbWin + v)};
  if (!search::is_mate_score(v)) return {engine::ScoreKind::cp, v};
  const int plies = search::mate_plies(v);
  return {engine::ScoreKind::mate, plies > 0 ? (plies + 1) / 2 : plies / 2};
}

// Win/draw/loss per mille for the side to move: a logistic curve of the
// score for each of win and loss (centred at `centre`, of slope `scale`),
// draw the rest; a mate is a certain win or loss.
inline std::array<int, 3> wdl_of(search::Value v, double centre, double scale) {
  if (search::is_mate_score(v) || search::is_tb_score(v))
    return v > 0 ? std::array{1000, 0, 0} : std::array{0, 0, 1000};
  const auto p = [&](double x) { return 1.0 / (1.0 + std::exp((centre - x) / scale)); };
  const int w = int(std::lround(1000 * p(v))), l = int(std::lround(1000 * p(-v)));
  return {w, 1000 - w - l, l};
}

template <class G>
struct Report;

template <>
struct Report<chess::Game> {
  using Position = chess::Position;
  using Move = chess::Move;
  static constexpr bool kHasSan = true;
  static bool is_legal(const Position& p, Move m) { return chess::MoveList(p).contains(m); }
  static std::string move_string(const Position&, Move m) { return chess::to_uci(m); }
  static std::string san_string(Position& p, Move m) { return chess::to_san(p, m); }
  static engine::Score score(search::Value v) { return score_of(v); }
  // Centred at 1.5 pawns with a scale of 0.65 pawns: at 0 about 9% win and
  // 9% loss, at +1 pawn 32% win, at +3 pawns 91% win (roughly what engine
  // self-play at short time controls shows).
  static std::array<int, 3> wdl(search::Value v) { return wdl_of(v, 150.0, 65.0); }
};

template <>
struct Report<draughts::Game> {
  using Position = draughts::Position;
  using Move = draughts::Move;
  static constexpr bool kHasSan = false;
  static bool is_legal(const Position& p, Move m) { return draughts::MoveList(p).contains(m); }
  static std::string move_string(const Position& p, Move m) { return draughts::to_string(p, m); }
  static std::string san_string(Position&, Move) { return {}; }
  static engine::Score score(search::Value v) { return score_of(v); }
  // On hundredths of a man, centred at one man and a half with a scale of
  // 0.5 man (a man up is often decisive in draughts).
  static std::array<int, 3> wdl(search::Value v) { return wdl_of(v, 150.0, 50.0); }
};

}  // KIBITZ_NAMESPACE(impl)
