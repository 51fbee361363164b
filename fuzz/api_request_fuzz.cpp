// JSON request decoding of every endpoint: the bytes of a request body go
// through server::parse_body and the decoder of one endpoint (the first
// byte picks it), exactly as the HTTP and WebSocket layers call them.
// Invariants: refusals are 4xx with a non-empty code and message that
// serialise strictly (valid UTF-8); what is accepted respects every cap of
// the config; decoding is deterministic (same cache key twice); accepted
// move and perft requests can be carried out and encoded.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "engine/service.h"
#include "server/api/api.h"
#include "server/api/config.h"
#include "server/api/encode.h"
#include "server/api/request.h"

using namespace kibitz;
using namespace kibitz::server;
using nlohmann::json;

namespace {

struct World {
  Config config;
  std::unique_ptr<engine::Service> service;
  World() {
    auto loaded = load_config("");
    if (!loaded) std::abort();
    config = std::move(*loaded);
    // Small caps keep each run fast; the decoders must honour whatever is set.
    config.max_moves = 300;
    config.max_perft_depth_chess = 2;
    config.max_perft_depth_draughts = 3;
    engine::ServiceOptions options;
    options.threads = 1;
    options.hash_mib[0] = options.hash_mib[1] = 1;
    service = engine::make_service(options);
  }
};

World& world() {
  static World w;
  return w;
}

// Every byte of what goes on the wire must be valid UTF-8: a strict dump.
std::string strict_dump(const json& j) {
  try {
    return j.dump();
  } catch (const json::exception&) {
    std::abort();
  }
}

void check_refusal(const Reply& r) {
  if (r.status < 400 || r.status >= 500) std::abort();
  const json& e = r.body.at("error");
  if (!e.at("code").is_string() || e.at("code").get_ref<const std::string&>().empty()) std::abort();
  if (!e.at("message").is_string() || e.at("message").get_ref<const std::string&>().empty())
    std::abort();
  strict_dump(r.body);
}

void check_analyze(const json& body, Priority priority, bool allow_infinite) {
  World& w = world();
  const Caps caps{w.config, w.service->threads()};
  auto call = decode_analyze(body, caps, *w.service, priority, allow_infinite);
  if (!call) return check_refusal(call.error());
  const auto& r = call->request;
  const auto& l = r.limits;
  if (l.infinite && !allow_infinite) std::abort();
  if (l.depth && (*l.depth < 1 || *l.depth > w.config.max_depth)) std::abort();
  if (l.nodes && (*l.nodes < 1 || *l.nodes > w.config.max_nodes)) std::abort();
  if (l.movetime_ms && (*l.movetime_ms < 1 || *l.movetime_ms > w.config.max_movetime_ms))
    std::abort();
  if (!l.infinite && !l.depth && !l.nodes && !l.movetime_ms) std::abort();  // every search ends
  if (r.multipv < 1 || r.multipv > w.config.max_multipv) std::abort();
  if (r.threads < 1 || r.threads > caps.max_threads) std::abort();
  if (r.moves.size() > w.config.max_moves) std::abort();
  if (call->priority != priority) std::abort();
  if (l.infinite != call->cache_key.empty()) std::abort();
  strict_dump(call->limits);
  // Deterministic: the same body decodes to the same request.
  auto again = decode_analyze(body, caps, *w.service, priority, allow_infinite);
  if (!again || again->cache_key != call->cache_key || again->position.fen != call->position.fen)
    std::abort();
  // The answer for a finished position is built without a search.
  if (call->position.legal_moves == 0) {
    ResultContext c{r.game,       call->position.fen, call->pov_white,
                    call->limits, r.multipv,          call->position.chess960};
    strict_dump(encode_terminal(call->position, 0, c));
  }
}

void check_moves(const json& body) {
  World& w = world();
  auto call = decode_moves(body, Caps{w.config, 1});
  if (!call) return check_refusal(call.error());
  if (call->moves.size() > w.config.max_moves) std::abort();
  auto report = w.service->moves(call->game, call->fen, call->moves, call->variant);
  if (!report) {
    if (report.error().code != "invalid_fen" && report.error().code != "illegal_move") std::abort();
    return check_refusal(engine_error(report.error()));
  }
  strict_dump(encode_moves(call->game, *report));
}

void check_perft(const json& body) {
  World& w = world();
  auto call = decode_perft(body, Caps{w.config, 1}, *w.service);
  if (!call) return check_refusal(call.error());
  const int cap = call->game == GameKind::chess ? w.config.max_perft_depth_chess
                                                : w.config.max_perft_depth_draughts;
  if (call->depth < 0 || call->depth > cap) std::abort();  // perft(0) = 1 is allowed
  auto report = w.service->perft(call->game, call->fen, call->depth, false, call->variant);
  if (!report) std::abort();  // a decoded request names a valid position
}

void check_annotate(const json& body) {
  World& w = world();
  auto call = decode_annotate(body, Caps{w.config, 1}, *w.service);
  if (!call) return check_refusal(call.error());
  if (call->plies < 1 || size_t(call->plies) > w.config.max_moves) std::abort();
  if (call->options.multipv < 1 || call->options.multipv > w.config.max_multipv) std::abort();
  const auto& l = call->options.limits;
  if (l.infinite || (!l.depth && !l.nodes && !l.movetime_ms)) std::abort();
  strict_dump(call->limits);
  strict_dump(call->thresholds);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 8192) return 0;
  World& w = world();
  const int endpoint = data[0] % 6;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  auto body = parse_body(text, w.config);
  if (!body) {
    check_refusal(body.error());
    if (body.error().body["error"]["code"] != "invalid_json") std::abort();
    return 0;
  }
  switch (endpoint) {
    case 0:
      check_analyze(*body, Priority::interactive, false);
      break;  // POST /v1/analyze
    case 1:
      check_analyze(*body, Priority::interactive, true);
      break;  // WebSocket analyze
    case 2:
      check_analyze(*body, Priority::batch, false);
      break;  // POST /v1/jobs
    case 3:
      check_moves(*body);
      break;  // POST /v1/moves
    case 4:
      check_perft(*body);
      break;  // POST /v1/perft
    case 5:
      check_annotate(*body);
      break;  // POST /v1/games/annotate, WebSocket annotate
  }
  return 0;
}
