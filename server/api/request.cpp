#include "server/api/request.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "server/api/json_util.h"

namespace kibitz::server {

namespace {

using nlohmann::json;

constexpr size_t kMaxFenLength = 512;
constexpr size_t kMaxMoveLength = 64;  // the longest draughts capture path is far shorter
constexpr size_t kMaxSearchMoves = 256;

Reply bad(std::string message) { return error_reply(400, "invalid_request", std::move(message)); }

using Status = Expected<bool, Reply>;

// An optional integer field of `obj`, at least `min`; huge values saturate
// (they are capped later). `name` is how the message names it.
Expected<std::optional<int64_t>, Reply> opt_int(const json& obj, const char* key,
                                                const std::string& name, int64_t min) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<int64_t>();
  int64_t v = 0;
  if (it->is_number_unsigned())
    v = it->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())
            ? std::numeric_limits<int64_t>::max()
            : it->get<int64_t>();
  else if (it->is_number_integer())
    v = it->get<int64_t>();
  else if (it->is_number_float() && std::isfinite(it->get<double>()) &&
           it->get<double>() == std::floor(it->get<double>()))
    // 1e6 is how many clients write a million; whole numbers only.
    v = it->get<double>() >= 9.2e18    ? std::numeric_limits<int64_t>::max()
        : it->get<double>() <= -9.2e18 ? std::numeric_limits<int64_t>::min()
                                       : int64_t(it->get<double>());
  else
    return Unexpected(bad("'" + name + "' must be an integer"));
  if (v < min)
    return Unexpected(bad("'" + name + "' must be at least " + std::to_string(min) + ", not " +
                          std::to_string(v)));
  return std::optional<int64_t>(v);
}

Status require_object(const json& body) {
  if (!body.is_object()) return Unexpected(bad("the request body must be a JSON object"));
  return true;
}

Expected<GameKind, Reply> decode_game(const json& body) {
  auto it = body.find("game");
  if (it == body.end() || it->is_null()) return GameKind::chess;
  if (it->is_string())
    if (auto g = parse_game(it->get_ref<const std::string&>())) return *g;
  return Unexpected(bad("'game' must be \"chess\" or \"draughts\""));
}

// "variant": "standard" or "chess960" (chess only); absent: the position's
// castling rights tell.
Expected<ChessVariant, Reply> decode_variant(const json& body, GameKind game) {
  auto it = body.find("variant");
  if (it == body.end() || it->is_null()) return ChessVariant::automatic;
  const auto v = it->is_string() ? parse_variant(it->get_ref<const std::string&>()) : std::nullopt;
  if (!v) return Unexpected(bad("'variant' must be \"standard\" or \"chess960\""));
  if (game != GameKind::chess && *v == ChessVariant::chess960)
    return Unexpected(bad("'variant' chess960 is for chess; draughts has no variant"));
  return *v;
}

// The rules a decoded position was read by: what every later read of its
// (normalised) FEN must use.
ChessVariant rules_of(bool chess960, GameKind game) {
  if (game != GameKind::chess) return ChessVariant::automatic;
  return chess960 ? ChessVariant::chess960 : ChessVariant::standard;
}

Expected<std::string, Reply> decode_fen(const json& body) {
  auto it = body.find("fen");
  if (it == body.end() || it->is_null()) return std::string();
  if (!it->is_string()) return Unexpected(bad("'fen' must be a string"));
  const auto& s = it->get_ref<const std::string&>();
  if (s.size() > kMaxFenLength)
    return Unexpected(
        error_reply(400, "invalid_fen",
                    "'fen' is longer than " + std::to_string(kMaxFenLength) + " characters"));
  return s;
}

Expected<std::vector<std::string>, Reply> decode_move_list(const json& body, const char* key,
                                                           size_t max) {
  std::vector<std::string> out;
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return out;
  const std::string name = key;
  if (!it->is_array()) return Unexpected(bad("'" + name + "' must be an array of strings"));
  if (it->size() > max)
    return Unexpected(bad("'" + name + "' has " + std::to_string(it->size()) +
                          " entries; at most " + std::to_string(max) + " are allowed"));
  out.reserve(it->size());
  for (size_t i = 0; i < it->size(); ++i) {
    const json& m = (*it)[i];
    const std::string where = name + "[" + std::to_string(i) + "]";
    if (!m.is_string()) return Unexpected(bad("'" + where + "' must be a string"));
    const auto& s = m.get_ref<const std::string&>();
    if (s.empty() || s.size() > kMaxMoveLength)
      return Unexpected(error_reply(
          400, "illegal_move", where + ": not a move ('" + s.substr(0, kMaxMoveLength) + "')"));
    out.push_back(s);
  }
  return out;
}

struct LimitsOut {
  engine::Limits limits;
  json applied = json::object();
};

// "limits": {"depth", "nodes", "movetime_ms", "infinite"}, each capped.
// With `default_movetime` a request without any limit searches that long.
Expected<LimitsOut, Reply> decode_limits(const json& body, const Config& c, bool allow_infinite,
                                         std::optional<int64_t> default_movetime) {
  LimitsOut out;
  auto it = body.find("limits");
  const json empty = json::object();
  const json* l = &empty;
  if (it != body.end() && !it->is_null()) {
    if (!it->is_object()) return Unexpected(bad("'limits' must be an object"));
    l = &*it;
  }
  for (const auto& [key, value] : l->items()) {
    (void)value;
    if (key != "depth" && key != "nodes" && key != "movetime_ms" && key != "infinite")
      return Unexpected(
          bad("'limits." + key + "' is not a limit (depth, nodes, movetime_ms, infinite)"));
  }
  auto depth = opt_int(*l, "depth", "limits.depth", 1);
  if (!depth) return Unexpected(depth.error());
  auto nodes = opt_int(*l, "nodes", "limits.nodes", 1);
  if (!nodes) return Unexpected(nodes.error());
  auto movetime = opt_int(*l, "movetime_ms", "limits.movetime_ms", 1);
  if (!movetime) return Unexpected(movetime.error());
  bool infinite = false;
  if (auto inf = l->find("infinite"); inf != l->end() && !inf->is_null()) {
    if (!inf->is_boolean()) return Unexpected(bad("'limits.infinite' must be true or false"));
    infinite = inf->get<bool>();
    if (infinite && !allow_infinite)
      return Unexpected(
          bad("'limits.infinite' is only allowed over the WebSocket; give depth, "
              "nodes or movetime_ms"));
  }
  if (*depth) {
    out.limits.depth = int(std::min<int64_t>(**depth, c.max_depth));
    out.applied["depth"] = *out.limits.depth;
  }
  if (*nodes) {
    out.limits.nodes = uint64_t(std::min<uint64_t>(uint64_t(**nodes), c.max_nodes));
    out.applied["nodes"] = *out.limits.nodes;
  }
  if (*movetime) {
    out.limits.movetime_ms = std::min<int64_t>(**movetime, c.max_movetime_ms);
    out.applied["movetime_ms"] = *out.limits.movetime_ms;
  }
  if (infinite) {
    out.limits.infinite = true;
    out.applied["infinite"] = true;
  }
  if (!infinite && !*depth && !*nodes && !*movetime && default_movetime) {
    out.limits.movetime_ms = std::min<int64_t>(*default_movetime, c.max_movetime_ms);
    out.applied["movetime_ms"] = *out.limits.movetime_ms;
  }
  return out;
}

Expected<int, Reply> decode_multipv(const json& body, const Config& c) {
  auto mpv = opt_int(body, "multipv", "multipv", 1);
  if (!mpv) return Unexpected(mpv.error());
  return int(std::min<int64_t>(mpv->value_or(1), c.max_multipv));
}

}  // namespace

Reply engine_error(const Error& e) {
  const bool client =
      e.code == "invalid_fen" || e.code == "illegal_move" || e.code == "invalid_request";
  return error_reply(client ? 400 : 500, client ? e.code : "internal", e.message);
}

ResultContext context_of(const AnalyzeCall& call) {
  ResultContext c;
  c.game = call.request.game;
  c.chess960 = call.position.chess960;
  c.fen = call.position.fen;
  c.pov_white = call.pov_white;
  c.limits = call.limits;
  c.multipv = call.request.multipv;
  return c;
}

Expected<AnalyzeCall, Reply> decode_analyze(const json& body, const Caps& caps,
                                            engine::Service& service, Priority priority,
                                            bool allow_infinite) {
  const Config& c = caps.config;
  if (auto ok = require_object(body); !ok) return Unexpected(ok.error());
  AnalyzeCall call;
  engine::AnalysisRequest& r = call.request;
  call.priority = priority;
  auto game = decode_game(body);
  if (!game) return Unexpected(game.error());
  r.game = *game;
  auto variant = decode_variant(body, r.game);
  if (!variant) return Unexpected(variant.error());
  auto fen = decode_fen(body);
  if (!fen) return Unexpected(fen.error());
  r.fen = std::move(*fen);
  auto moves = decode_move_list(body, "moves", c.max_moves);
  if (!moves) return Unexpected(moves.error());
  r.moves = std::move(*moves);
  auto searchmoves = decode_move_list(body, "searchmoves", kMaxSearchMoves);
  if (!searchmoves) return Unexpected(searchmoves.error());
  r.searchmoves = std::move(*searchmoves);
  auto limits = decode_limits(body, c, allow_infinite, c.default_movetime_ms);
  if (!limits) return Unexpected(limits.error());
  r.limits = limits->limits;
  call.limits = std::move(limits->applied);
  auto mpv = decode_multipv(body, c);
  if (!mpv) return Unexpected(mpv.error());
  r.multipv = *mpv;
  auto threads = opt_int(body, "threads", "threads", 1);
  if (!threads) return Unexpected(threads.error());
  r.threads = int(std::min<int64_t>(threads->value_or(1), caps.max_threads));
  if (auto p = body.find("pov"); p != body.end() && !p->is_null()) {
    if (*p == "white")
      call.pov_white = true;
    else if (*p == "side_to_move")
      call.pov_white = false;
    else
      return Unexpected(bad("'pov' must be \"white\" or \"side_to_move\""));
  }
  // Decoded once: the search starts from this very position.
  auto pos = service.prepare(r.game, r.fen, r.moves, *variant);
  if (!pos) return Unexpected(engine_error(pos.error()));
  r.position = *pos;
  call.position = (*pos)->info();
  r.variant = rules_of(call.position.chess960, r.game);
  // searchmoves are checked here, before any queue: a bad one is the
  // client's error whatever the load, and in a position without moves too.
  for (size_t i = 0; i < r.searchmoves.size(); ++i)
    if (auto why = (*pos)->illegal(r.searchmoves[i]))
      return Unexpected(
          error_reply(400, "illegal_move", "searchmoves[" + std::to_string(i) + "]: " + *why));
  if (!r.limits.infinite) {
    // The history is part of the key: the same position reached through
    // other moves may be a repetition, and search differently.
    std::string key = std::string(game_name(r.game)) + (call.position.chess960 ? "960" : "") + '|' +
                      std::to_string(call.position.key) + '|' +
                      std::to_string(call.position.history_key) + '|' + call.position.fen + '|' +
                      call.limits.dump() + '|' + std::to_string(r.multipv) + '|' +
                      (call.pov_white ? "w" : "s");
    for (const auto& m : r.searchmoves) key += '|' + m;
    call.cache_key = std::move(key);
  }
  return call;
}

Expected<MovesCall, Reply> decode_moves(const json& body, const Caps& caps) {
  if (auto ok = require_object(body); !ok) return Unexpected(ok.error());
  MovesCall call;
  auto game = decode_game(body);
  if (!game) return Unexpected(game.error());
  call.game = *game;
  auto variant = decode_variant(body, call.game);
  if (!variant) return Unexpected(variant.error());
  call.variant = *variant;
  auto fen = decode_fen(body);
  if (!fen) return Unexpected(fen.error());
  call.fen = std::move(*fen);
  auto moves = decode_move_list(body, "moves", caps.config.max_moves);
  if (!moves) return Unexpected(moves.error());
  call.moves = std::move(*moves);
  return call;
}

Expected<PerftCall, Reply> decode_perft(const json& body, const Caps& caps,
                                        engine::Service& service) {
  if (auto ok = require_object(body); !ok) return Unexpected(ok.error());
  PerftCall call;
  auto game = decode_game(body);
  if (!game) return Unexpected(game.error());
  call.game = *game;
  auto variant = decode_variant(body, call.game);
  if (!variant) return Unexpected(variant.error());
  auto fen = decode_fen(body);
  if (!fen) return Unexpected(fen.error());
  auto depth = opt_int(body, "depth", "depth", 0);
  if (!depth) return Unexpected(depth.error());
  if (!*depth) return Unexpected(bad("'depth' is required"));
  const int cap = call.game == GameKind::chess ? caps.config.max_perft_depth_chess
                                               : caps.config.max_perft_depth_draughts;
  call.depth = int(std::min<int64_t>(**depth, cap));
  auto pos = service.position(call.game, *fen, {}, *variant);
  if (!pos) return Unexpected(engine_error(pos.error()));
  call.fen = pos->fen;
  call.variant = rules_of(pos->chess960, call.game);
  return call;
}

Expected<AnnotateCall, Reply> decode_annotate(const json& body, const Caps& caps,
                                              engine::Service& service) {
  const Config& c = caps.config;
  if (auto ok = require_object(body); !ok) return Unexpected(ok.error());
  AnnotateCall call;
  const auto pgn = body.find("pgn");
  const auto pdn = body.find("pdn");
  const bool has_pgn = pgn != body.end() && !pgn->is_null();
  const bool has_pdn = pdn != body.end() && !pdn->is_null();
  if (has_pgn == has_pdn)
    return Unexpected(bad("give the game as exactly one of 'pgn' (chess) or 'pdn' (draughts)"));
  const json& text = has_pgn ? *pgn : *pdn;
  const std::string field = has_pgn ? "pgn" : "pdn";
  if (!text.is_string()) return Unexpected(bad("'" + field + "' must be a string"));
  call.game = has_pgn ? GameKind::chess : GameKind::draughts;

  record::ReadOptions ro;
  // The review replays the main line and writes it back with its comments
  // and NAGs: variations are checked but not kept, and what is kept is
  // compact (record.h: record::held_bound, README "Limits and caps").
  ro.keep_variations = false;
  ro.compact = true;
  ro.max_games = 2;  // enough to tell "more than one"
  ro.max_plies = std::max<size_t>(1, c.max_moves);
  ro.max_text = c.max_body_bytes;
  auto games = record::read(text.get_ref<const std::string&>(), ro);
  if (!games) {
    const auto& e = games.error();
    return Unexpected(bad("'" + field + "': game " + std::to_string(e.game) + ", ply " +
                          std::to_string(e.ply) + ", line " + std::to_string(e.line) +
                          (e.token.empty() ? "" : ", token '" + e.token + "'") + ": " + e.message));
  }
  if (games->empty()) return Unexpected(bad("'" + field + "' holds no game"));
  if (games->size() > 1)
    return Unexpected(bad("'" + field + "' holds more than one game; send one game per request"));
  call.record = std::move(games->front());
  auto variant = decode_variant(body, call.game);
  if (!variant) return Unexpected(variant.error());
  if (call.game == GameKind::chess) {
    auto v = review::game_variant(call.record, *variant);
    if (!v) return Unexpected(engine_error(v.error()));
    *variant = *v;
  }

  // Replay now, so that a bad game is a 400 at once rather than a failed job.
  std::string fen;
  if (const std::string* f = call.record.tag("FEN")) fen = *f;
  std::vector<std::string> moves;
  for (const auto& n : call.record.main.moves) moves.push_back(n.move);
  if (moves.empty()) return Unexpected(bad("'" + field + "': the game has no moves"));
  auto replay = service.replay(call.game, fen, moves, *variant);
  if (!replay) return Unexpected(engine_error(replay.error()));
  call.plies = int(replay->moves.size());
  call.options.variant = rules_of(replay->chess960, call.game);

  auto limits = decode_limits(body, c, false, std::nullopt);
  if (!limits) return Unexpected(limits.error());
  call.options.limits = limits->limits;
  call.limits = std::move(limits->applied);
  if (call.limits.empty()) {  // the review's own default, within the caps
    const uint64_t nodes = std::min<uint64_t>(200'000, c.max_nodes);
    call.options.limits.nodes = nodes;
    call.limits["nodes"] = nodes;
  }
  auto mpv = decode_multipv(body, c);
  if (!mpv) return Unexpected(mpv.error());
  call.options.multipv = *mpv;

  review::Thresholds& t = call.options.thresholds;
  if (auto th = body.find("thresholds"); th != body.end() && !th->is_null()) {
    if (!th->is_object()) return Unexpected(bad("'thresholds' must be an object"));
    for (const auto& [key, value] : th->items()) {
      double* slot = key == "inaccuracy" ? &t.inaccuracy
                     : key == "mistake"  ? &t.mistake
                     : key == "blunder"  ? &t.blunder
                                         : nullptr;
      if (!slot)
        return Unexpected(
            bad("'thresholds." + key + "' is not a threshold (inaccuracy, mistake, blunder)"));
      if (!value.is_number() || !(value.get<double>() > 0) || !(value.get<double>() <= 2))
        return Unexpected(bad("'thresholds." + key +
                              "' must be a number above 0 and at most 2 (a drop in winning "
                              "chances on the -1..1 scale)"));
      *slot = value.get<double>();
    }
    if (!(t.inaccuracy <= t.mistake && t.mistake <= t.blunder))
      return Unexpected(bad("'thresholds' must satisfy inaccuracy <= mistake <= blunder"));
  }
  call.thresholds = {{"inaccuracy", t.inaccuracy}, {"mistake", t.mistake}, {"blunder", t.blunder}};
  call.options.parallel = caps.max_threads;
  return call;
}

}  // namespace kibitz::server
