// Decoding of request bodies into engine calls: every field checked, every
// limit capped, errors that name the field (invalid_request), the move
// (illegal_move) or the position (invalid_fen).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/expected.h"
#include "engine/analysis.h"
#include "engine/service.h"
#include "record/record.h"
#include "review/review.h"
#include "server/api/api.h"
#include "server/api/config.h"
#include "server/api/encode.h"

namespace kibitz::server {

// The caps of one Api: the config plus what the service can do.
struct Caps {
  const Config& config;
  int max_threads = 1;  // per analysis: min(max_threads_per_job or all, service threads)
};

struct AnalyzeCall {
  engine::AnalysisRequest request;            // limits and counts capped
  bool pov_white = true;                      // scores from White's side (else the side to move)
  nlohmann::json limits;                      // the limits applied, echoed in every result
  engine::PositionInfo position;              // the analysed position (after the moves)
  std::string cache_key;                      // "" when the result must not be cached (infinite)
  Priority priority = Priority::interactive;  // for the scheduler
};

// POST /v1/analyze, POST /v1/jobs and WebSocket "analyze" bodies.
Expected<AnalyzeCall, Reply> decode_analyze(const nlohmann::json& body, const Caps& caps,
                                            engine::Service& service, Priority priority,
                                            bool allow_infinite);
// What every answer to this call echoes (game, position, point of view,
// limits, lines).
ResultContext context_of(const AnalyzeCall& call);

struct MovesCall {
  GameKind game = GameKind::chess;
  ChessVariant variant = ChessVariant::automatic;
  std::string fen;
  std::vector<std::string> moves;
};
Expected<MovesCall, Reply> decode_moves(const nlohmann::json& body, const Caps& caps);

struct PerftCall {
  GameKind game = GameKind::chess;
  ChessVariant variant = ChessVariant::automatic;  // the rules fen was read by
  std::string fen;                                 // normalised
  int depth = 1;                                   // capped
};
Expected<PerftCall, Reply> decode_perft(const nlohmann::json& body, const Caps& caps,
                                        engine::Service& service);

struct AnnotateCall {
  GameKind game = GameKind::chess;
  record::Game record;
  review::Options options;
  nlohmann::json limits;      // per position, as applied
  nlohmann::json thresholds;  // as applied
  int plies = 0;
  Priority priority = Priority::batch;  // for the scheduler
};
// POST /v1/games/annotate and WebSocket "annotate": {"pgn"} or {"pdn"}.
Expected<AnnotateCall, Reply> decode_annotate(const nlohmann::json& body, const Caps& caps,
                                              engine::Service& service);

// The HTTP status of an engine error code.
Reply engine_error(const Error& e);

}  // namespace kibitz::server
