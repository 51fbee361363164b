#include "engine/types.h"

namespace kibitz {

std::string_view game_name(GameKind g) { return g == GameKind::chess ? "chess" : "draughts"; }

std::optional<GameKind> parse_game(std::string_view name) {
  if (name == "chess") return GameKind::chess;
  if (name == "draughts") return GameKind::draughts;
  return std::nullopt;
}

}  // namespace kibitz
