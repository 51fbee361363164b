#include "engine/types.h"

#include "engine/service.h"

namespace kibitz {

std::string_view game_name(GameKind g) { return g == GameKind::chess ? "chess" : "draughts"; }

std::optional<GameKind> parse_game(std::string_view name) {
  if (name == "chess") return GameKind::chess;
  if (name == "draughts") return GameKind::draughts;
  return std::nullopt;
}

std::string_view variant_name(ChessVariant v) {
  return v == ChessVariant::chess960   ? "chess960"
         : v == ChessVariant::standard ? "standard"
                                       : "automatic";
}

std::optional<ChessVariant> parse_variant(std::string_view name) {
  if (name == "standard") return ChessVariant::standard;
  if (name == "chess960") return ChessVariant::chess960;
  return std::nullopt;
}

}  // namespace kibitz

namespace kibitz::engine {

std::string_view default_fen(GameKind game) {
  return game == GameKind::chess
             ? "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
             : "W:Wa1,a3,b2,c1,c3,d2,e1,e3,f2,g1,g3,h2:Ba7,b6,b8,c7,d6,d8,e7,f6,f8,g7,h6,h8";
}

}  // namespace kibitz::engine
