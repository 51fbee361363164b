#include "draughts/game_status.h"

#include "draughts/movegen.h"

KIBITZ_NAMESPACE(draughts) {

std::string_view to_string(GameStatus s) {
  switch (s) {
    case GameStatus::ongoing:
      return "ongoing";
    case GameStatus::loss:
      return "loss";
    case GameStatus::threefold_repetition:
      return "threefold_repetition";
    case GameStatus::king_moves_rule:
      return "king_moves_rule";
    case GameStatus::three_kings_rule:
      return "three_kings_rule";
    case GameStatus::balance_rule:
      return "balance_rule";
    case GameStatus::main_road_rule:
      return "main_road_rule";
    case GameStatus::small_endgame_rule:
      return "small_endgame_rule";
  }
  return "unknown";
}

GameStatus game_status(const Position& pos) {
  if (count_legal_moves(pos) == 0) return GameStatus::loss;
  if (pos.is_threefold_repetition()) return GameStatus::threefold_repetition;
  switch (pos.draw_rule()) {
    case DrawRule::king_moves:
      return GameStatus::king_moves_rule;
    case DrawRule::three_kings:
      return GameStatus::three_kings_rule;
    case DrawRule::balance:
      return GameStatus::balance_rule;
    case DrawRule::main_road:
      return GameStatus::main_road_rule;
    case DrawRule::small_endgame:
      return GameStatus::small_endgame_rule;
    case DrawRule::none:
      break;
  }
  return GameStatus::ongoing;
}

}  // KIBITZ_NAMESPACE(draughts)
