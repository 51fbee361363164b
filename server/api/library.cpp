#include "server/api/library.h"

#include <spdlog/spdlog.h>

#include <charconv>

#include "chess/nnue_network.h"
#include "server/api/encode.h"
#include "server/api/eval_lines.h"
#include "server/api/metrics.h"
#include "server/api/work.h"
#include "server/store/json_text.h"
#include "server/store/result_codec.h"

namespace kibitz::server {

using nlohmann::json;

namespace {

// A kept analysis and what evaluated it.
struct Kept {
  engine::Result result;
  std::string eval;
};

// The analysis of a stored body; its "eval" is what evaluated when it was
// kept (kKeptEvalUnknown in bodies kept before the library wrote it).
std::optional<Kept> read_kept(const std::optional<store::Eval>& found) {
  if (!found) return std::nullopt;
  const json body = json::parse(found->body, nullptr, false);
  auto r = store::result_from_json(body);
  if (!r) return std::nullopt;
  const auto eval = body.find("eval");  // an object: result_from_json read it
  return Kept{std::move(*r), eval != body.end() && eval->is_string() ? eval->get<std::string>()
                                                                     : kKeptEvalUnknown};
}

// The kept analysis as an answer to `context`: its first `multipv` lines,
// encoded as a search's result would be, its engine's "eval" the one that
// made it (not the one evaluating now: a library outlives a change of
// network, and instances with other networks share one).
json answer_json(const Kept& kept, const ResultContext& context) {
  engine::Result r = kept.result;
  if (r.lines.size() > size_t(context.multipv)) r.lines.resize(size_t(context.multipv));
  r.stopped = false;
  json body = encode_result(r, context);
  body["engine"]["eval"] = kept.eval;
  body["source"] = "library";
  return body;
}

}  // namespace

std::string library_key(const AnalyzeCall& call) {
  const auto& r = call.request;
  if (r.limits.infinite || !r.searchmoves.empty()) return {};
  // A Chess960 position keys apart from a standard one with the same FEN:
  // their castling moves are written differently, and the rights mean other
  // rooks when the FEN is X-FEN.
  return std::string(game_name(r.game)) + (call.position.chess960 ? "960" : "") + '|' +
         call.position.fen + '|' + std::to_string(call.position.history_key);
}

bool library_may_answer(ApiCore& core, const AnalyzeCall& call) {
  const auto& limits = call.request.limits;
  if (!limits.depth || limits.nodes || limits.movetime_ms || !core.store) return false;
  // While the store is unreachable (Redis stalled) the look-up is skipped
  // at once: the analysis searches instead of waiting for the timeout.
  return !library_key(call).empty() && core.store->available();
}

std::optional<Reply> library_answer(ApiCore& core, const AnalyzeCall& call) {
  if (!library_may_answer(core, call)) return std::nullopt;
  const std::string key = library_key(call);
  auto kept =
      read_kept(core.store->find_eval(key, call.request.multipv, *call.request.limits.depth));
  if (!kept) {
    ++core.library.misses;
    return std::nullopt;
  }
  ++core.library.hits;
  return Reply{
      200, answer_json(*kept, context_of(call)), nullptr, {{"X-Kibitz-Source", "library"}}};
}

void library_keep(ApiCore& core, const AnalyzeCall& call, const engine::Result& r) {
  if (!core.store || r.stopped || r.error || r.depth < core.config.store.library_min_depth ||
      int(r.lines.size()) < call.request.multipv || r.lines.empty() || r.lines[0].moves.empty())
    return;
  const std::string key = library_key(call);
  if (key.empty()) return;
  store::Eval e;
  e.depth = r.depth;
  e.multipv = call.request.multipv;
  json body = store::result_to_json(r);
  body["eval"] = nnue::describe();
  e.body = to_wire(body);
  core.store->put_eval(key, e);
}

Reply library_lookup(ApiCore& core, std::string_view game, std::string_view fen,
                     std::string_view multipv, std::string_view variant) {
  json request = {{"game", game.empty() ? "chess" : std::string(game)}, {"limits", {{"depth", 1}}}};
  if (!fen.empty()) request["fen"] = std::string(fen);
  if (!variant.empty()) request["variant"] = std::string(variant);
  if (!multipv.empty()) {
    int n = 0;
    auto [p, ec] = std::from_chars(multipv.data(), multipv.data() + multipv.size(), n);
    if (ec != std::errc() || p != multipv.data() + multipv.size() || n < 1)
      return error_reply(400, "invalid_request", "'multipv' must be a positive integer");
    request["multipv"] = n;
  }
  const Caps caps{core.config, 1};
  auto call = decode_analyze(request, caps, core.service, Priority::interactive, false);
  if (!call) return call.error();
  const std::string key = library_key(*call);
  auto kept =
      read_kept(core.store ? core.store->find_eval(key, call->request.multipv, 0) : std::nullopt);
  if (!kept) {
    ++core.library.misses;
    return error_reply(404, "not_found",
                       "no analysis of this position with at least " +
                           std::to_string(call->request.multipv) + " line(s) in the library");
  }
  ++core.library.hits;
  ResultContext context;
  context.game = call->request.game;
  context.chess960 = call->position.chess960;
  context.fen = call->position.fen;
  context.limits = {{"depth", kept->result.depth}};
  context.multipv = call->request.multipv;
  return Reply{200, answer_json(*kept, context), nullptr, {}};
}

namespace {

// Lichess's errors are {"error": "text"}.
Reply lichess_error(int status, std::string message) {
  return Reply{status, json{{"error", std::move(message)}}, nullptr, {}};
}

// `variant` "standard" or "chess960" as Kibitz's request field; "" lets the
// castling rights tell (as Lichess's "fromPosition" and no variant do).
std::optional<AnalyzeCall> position_call(ApiCore& core, const std::string& fen, int multipv,
                                         std::string_view variant) {
  json request = {{"fen", fen}, {"limits", {{"depth", 1}}}, {"multipv", multipv}};
  if (!variant.empty()) request["variant"] = std::string(variant);
  auto call =
      decode_analyze(request, Caps{core.config, 1}, core.service, Priority::interactive, false);
  if (!call) return std::nullopt;
  return std::move(*call);
}

// The FEN with the counters of the database's positions ("0 1"), which
// keys what `kibitz library import` kept; "" when `fen` has them already.
std::string with_zero_counters(const std::string& fen) {
  const size_t last = fen.rfind(' ');
  const size_t before = last == std::string::npos ? last : fen.rfind(' ', last - 1);
  if (before == std::string::npos) return {};
  std::string out = fen.substr(0, before) + " 0 1";
  return out == fen ? std::string() : out;
}

}  // namespace

Reply cloud_eval_lookup(ApiCore& core, std::string_view fen, std::string_view multipv,
                        std::string_view variant) {
  static const char kNone[] = "No cloud evaluation available for that position";
  // Lichess keeps evaluations per variant; this library keeps standard
  // chess ("fromPosition" is standard chess from a set-up position) and
  // Chess960, keyed apart: any other variant has none, as an unknown
  // position has none.
  if (!variant.empty() && variant != "standard" && variant != "fromPosition" &&
      variant != "chess960")
    return lichess_error(404, kNone);
  const std::string_view as = variant == "fromPosition" ? std::string_view() : variant;
  if (fen.empty()) return lichess_error(400, "Missing parameter: fen");
  int lines = 1;
  if (!multipv.empty()) {
    auto [p, ec] = std::from_chars(multipv.data(), multipv.data() + multipv.size(), lines);
    if (ec != std::errc() || p != multipv.data() + multipv.size() || lines < 1)
      return lichess_error(400, "multiPv must be a positive integer");
  }
  lines = std::min(lines, core.config.max_multipv);
  auto call = position_call(core, std::string(fen), lines, as);
  if (!call) return lichess_error(400, "Invalid FEN");
  std::optional<store::Eval> found;
  if (core.store) {
    found = core.store->find_eval(library_key(*call), lines, 0);
    if (!found)
      if (const std::string zero = with_zero_counters(call->position.fen); !zero.empty())
        if (auto imported = position_call(core, zero, lines, as))
          found = core.store->find_eval(library_key(*imported), lines, 0);
  }
  const auto read = read_kept(found);
  if (!read) {
    ++core.library.misses;
    return lichess_error(404, kNone);
  }
  ++core.library.hits;
  const engine::Result* kept = &read->result;
  json pvs = json::array();
  for (size_t i = 0; i < kept->lines.size() && i < size_t(lines); ++i) {
    const engine::Line& l = kept->lines[i];
    std::string moves;
    for (size_t m = 0; m < l.moves.size(); ++m) {
      if (m) moves += ' ';
      // Chess960's castling is king takes rook already (its rook need not
      // stand on the a- or h-file); standard chess's is made so.
      moves += m < l.san.size() && !call->position.chess960 ? lichess_uci(l.moves[m], l.san[m])
                                                            : l.moves[m];
    }
    const int white = kept->white_to_move ? l.score.value : -l.score.value;
    pvs.push_back({{"moves", std::move(moves)},
                   {l.score.kind == engine::ScoreKind::mate ? "mate" : "cp", white}});
  }
  return Reply{200,
               {{"fen", call->position.fen},
                {"knodes", kept->nodes / 1000},
                {"depth", kept->depth},
                {"pvs", std::move(pvs)}},
               nullptr,
               {}};
}

std::string library_metrics(ApiCore& core) {
  if (!core.store) return {};
  const auto stats = core.store->library_stats();
  return prometheus_metric("kibitz_library_bytes", "gauge", "Size of the evaluation library.",
                           uint64_t(stats.bytes)) +
         prometheus_metric("kibitz_library_entries", "gauge",
                           "Analyses kept in the evaluation library.", uint64_t(stats.entries)) +
         prometheus_metric("kibitz_library_hits_total", "counter",
                           "Lookups answered from the evaluation library.",
                           core.library.hits.load()) +
         prometheus_metric("kibitz_library_misses_total", "counter",
                           "Lookups the evaluation library could not answer.",
                           core.library.misses.load());
}

}  // namespace kibitz::server
