// Results as the wire contract (proto/openapi.yaml) writes them. Engine
// scores are from the side to move; the wire's default is White's view.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine/analysis.h"
#include "engine/service.h"
#include "review/review.h"

namespace kibitz::server {

// What every result object of one analysis repeats.
struct ResultContext {
  GameKind game = GameKind::chess;
  std::string fen;  // the analysed position
  bool pov_white = true;
  nlohmann::json limits;  // as applied
  int multipv = 1;
  bool chess960 = false;  // "variant": "chess960" in every result
};

// {"name": "Kibitz", "version": ..., "eval": nnue::describe()}
nlohmann::json engine_json();

// {"cp": n} | {"mate": n} (chess) | {"win": n} (draughts forced win).
nlohmann::json score_json(GameKind game, const engine::Score& score);

// One completed iteration (WebSocket "info", NDJSON lines, job progress).
nlohmann::json encode_progress(const engine::Progress& p, const ResultContext& c);
// The final result; bestmove null and "status" when there is no legal move.
nlohmann::json encode_result(const engine::Result& r, const ResultContext& c);
// The answer for a position without a legal move, without searching.
nlohmann::json encode_terminal(const engine::PositionInfo& pos, int hashfull,
                               const ResultContext& c);

nlohmann::json encode_moves(GameKind game, const engine::MovesReport& report);

nlohmann::json encode_review(const review::Review& r, const nlohmann::json& limits, int multipv,
                             const nlohmann::json& thresholds);

}  // namespace kibitz::server
