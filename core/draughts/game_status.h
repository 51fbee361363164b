// How the game stands by the rules: ongoing, lost for the side to move, or
// drawn by one of the FMJD-64 rules (see position.h for how each is counted).
#pragma once

#include <string_view>

#include "draughts/position.h"

KIBITZ_NAMESPACE(draughts) {

enum class GameStatus {
  ongoing,
  loss,                  // the side to move has no piece or no legal move
  threefold_repetition,  // 7.2.4
  king_moves_rule,       // 7.2.3: 15 moves of kings only, no capture
  three_kings_rule,      // 7.2.5: 3+ kings against a lone king, 15 moves
  balance_rule,          // 7.2.6: 30 (4-5 pieces) or 60 (6-7 pieces) moves
  main_road_rule,        // 7.2.7: 3 pieces against a lone king on a1-h8, 5 moves
  small_endgame_rule,    // 7.2.8: kings on both sides, at most 3 pieces, 5 moves
};

std::string_view to_string(GameStatus s);

// A loss is checked first: a sequence that takes the last piece or blocks
// the last move on the counted move wins rather than draws.
GameStatus game_status(const Position& pos);

}  // KIBITZ_NAMESPACE(draughts)
