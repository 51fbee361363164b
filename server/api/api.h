// The server's operations as JSON in, JSON out: what the HTTP and WebSocket
// transport (server/http) calls. No networking here.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/expected.h"
#include "engine/analysis.h"
#include "engine/service.h"
#include "server/api/config.h"

namespace kibitz::server {

struct Reply {
  int status = 200;
  nlohmann::json body;                                       // sent as application/json
  std::vector<std::pair<std::string, std::string>> headers;  // e.g. Retry-After
};

// {"error": {"code", "message"}} with the status for that code.
Reply error_reply(int status, std::string code, std::string message);
// Parses a request body without exceptions, with the JSON depth cap:
// invalid_json (400) naming the offset.
Expected<nlohmann::json, Reply> parse_body(std::string_view body, const Config&);

class Ticket {  // a running request; cancel() is idempotent, thread-safe
 public:
  virtual ~Ticket() = default;
  virtual void cancel() = 0;
};

struct StreamCallbacks {
  // Called from search threads: the receiver must post to its own strand.
  std::function<void(nlohmann::json)> on_info;  // one result object per completed iteration
  std::function<void(Reply)> on_done;           // exactly once: final result (200) or error
  // Who asks (an API key, else the client's address): the scheduler shares
  // the search threads fairly between owners.
  std::string owner;
};

class Metrics;  // server/api/metrics.h

class Api {
 public:
  virtual ~Api() = default;
  // POST /v1/analyze (sync or NDJSON) and WebSocket "analyze" (fields as the
  // REST body; "limits.infinite" only allowed when allow_infinite).
  virtual std::shared_ptr<Ticket> analyze(const nlohmann::json& request, engine::Priority priority,
                                          bool allow_infinite, StreamCallbacks callbacks) = 0;
  // The fast path of POST /v1/analyze (not NDJSON) for repeated requests:
  // the cached result already serialised (as body.dump() with invalid UTF-8
  // replaced), or nullptr when the request is not answered from the cache,
  // is invalid, or the server is shutting down; then call analyze(). Saves
  // copying and serialising the result on every cache hit.
  virtual std::shared_ptr<const std::string> cached_analysis(const nlohmann::json& request) = 0;
  // Whole-game review as a stream (WebSocket "annotate"): on_info gets
  // {"ply", "plies", ...} progress objects, on_done the review result.
  virtual std::shared_ptr<Ticket> annotate_stream(const nlohmann::json& request,
                                                  StreamCallbacks callbacks) = 0;
  // These may complete on another thread (perft runs off the I/O threads).
  virtual void moves(const nlohmann::json& request, std::function<void(Reply)> done) = 0;
  virtual void perft(const nlohmann::json& request, std::function<void(Reply)> done) = 0;
  virtual Reply submit_job(const nlohmann::json& request) = 0;  // POST /v1/jobs -> 202
  virtual Reply annotate(const nlohmann::json& request) = 0;    // POST /v1/games/annotate -> 202
  virtual Reply get_job(std::string_view id) = 0;
  virtual Reply delete_job(std::string_view id) = 0;
  virtual Reply info() = 0;        // GET /v1/info
  virtual bool ready() const = 0;  // GET /readyz
  virtual void shutdown() = 0;     // refuse new work (503 shutting_down), cancel everything
  virtual Metrics& metrics() = 0;
  virtual const Config& config() const = 0;
};

std::unique_ptr<Api> make_api(const Config& config, engine::Service& service);

}  // namespace kibitz::server
