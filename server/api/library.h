// The evaluation library: finished analyses kept by position in the store
// (server/store), the deepest per number of lines. A depth-limited request
// that a kept analysis already meets (its depth and lines at least those
// asked) is answered from it at once, with "source": "library"; GET
// /v1/evals returns the deepest kept analysis of a position, for both games.
#pragma once

#include <atomic>
#include <optional>
#include <string>

#include "engine/analysis.h"
#include "server/api/api.h"
#include "server/api/request.h"

namespace kibitz::server {

struct ApiCore;

// What evaluated a kept analysis is kept beside it and answered as its
// engine's "eval": nnue::describe() when a search kept it, kKeptEvalImported
// for what `kibitz library import` read (another program's analyses), and
// kKeptEvalUnknown for what was kept before the library wrote it.
inline constexpr const char* kKeptEvalImported = "imported";
inline constexpr const char* kKeptEvalUnknown = "unknown";

struct LibraryCounters {
  std::atomic<uint64_t> hits{0}, misses{0};
};

// The position as the library keys it: game, normalised FEN and the history
// that can still matter (repetitions); "" when the request cannot be kept or
// answered (infinite, searchmoves).
std::string library_key(const AnalyzeCall& call);

// Whether the library may answer this request (a depth only, a position it
// can key) while the store is reachable: false means library_answer would
// not look, so the caller need not leave its thread for it.
bool library_may_answer(ApiCore& core, const AnalyzeCall& call);

// The answer from the library, when the request asks for a depth only and a
// kept analysis meets it.
std::optional<Reply> library_answer(ApiCore& core, const AnalyzeCall& call);

// Keeps a search that ran to its own limits, when it is deep enough.
void library_keep(ApiCore& core, const AnalyzeCall& call, const engine::Result& r);

// GET /v1/evals?game=&fen=&multipv=&variant=: 200 with the analysis, 404
// not_found.
Reply library_lookup(ApiCore& core, std::string_view game, std::string_view fen,
                     std::string_view multipv, std::string_view variant = {});

// GET /api/cloud-eval?fen=&multiPv=&variant=: the deepest kept analysis
// with at least multiPv lines (1 by default, at most max_multipv) in the
// shape of Lichess's cloud evaluation ({"fen", "knodes", "depth", "pvs":
// [{"moves", "cp" | "mate"}]}, White's point of view, castling as king
// takes rook), 404 with Lichess's body when there is none.
Reply cloud_eval_lookup(ApiCore& core, std::string_view fen, std::string_view multipv,
                        std::string_view variant);

// The library's Prometheus lines: size, entries, hits and misses.
std::string library_metrics(ApiCore& core);

}  // namespace kibitz::server
