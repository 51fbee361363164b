// Who may use the server, how often and from which web pages: API keys with
// scopes, token-bucket rate limits per key and per IP, the CORS allow-list
// and a cap on concurrent searches per key. Off by default: an empty config
// allows everything and adds no CORS headers (same origin only).
//
// The `access` object of the server config (every field optional):
//   {
//     "keys": [                               // none: no key needed
//       {"id": "alice",                       // name in logs and metrics
//        "token": "s3cret",                   // the bearer token, or
//        "token_env": "KIBITZ_KEY_ALICE",     //   read it from this env var
//        "scopes": ["analyze", "ws", "info"], // or ["*"]; default ["*"]
//        "rate": {"per_second": 5, "burst": 10},  // overrides rate_limit.per_key
//        "max_concurrent_searches": 2}        // overrides the default below
//     ],
//     "anonymous_scopes": ["info"],           // open without a key while keys
//                                             // exist (default: none)
//     "rate_limit": {
//       "per_key": {"per_second": 0, "burst": 0},  // 0: unlimited
//       "per_ip": {"per_second": 0, "burst": 0},   // every request and WebSocket
//                                             // message, keyed or not (IPv6: per /64)
//       "max_tracked_ips": 10000              // idle/oldest buckets evicted beyond
//     },
//     "max_concurrent_searches_per_key": 0,   // 0: unlimited
//     "max_concurrent_searches_per_ip": 0,    // for anonymous clients; 0: unlimited
//     "cors": {
//       "allowed_origins": ["https://example.org"],  // exact; "*" = any
//       "max_age_s": 600                      // preflight cache time
//     }
//   }
// Scopes: analyze, jobs, moves, perft, annotate, ws, info, metrics.
// Unknown fields are errors (a typo must not silently open the server).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"

namespace kibitz::server {

struct AccessRequest {
  std::string_view
      scope;  // "analyze", "jobs", "moves", "perft", "annotate", "ws", "info", "metrics"
  std::string_view method;         // "GET", "POST", "OPTIONS" ...
  std::string_view authorization;  // the Authorization header, may be empty
  std::string_view origin;         // the Origin header, may be empty
  std::string_view host;           // the Host header
  // The client's address as the transport counts it (server/http
  // client_id.h: IPv4, or an IPv6 /64): the per-IP limits are per client.
  std::string ip;
  // A token given another way than the Authorization header (browsers cannot
  // set headers on a WebSocket: e.g. from ?access_token=); may be empty.
  std::string_view access_token;
};

struct AccessDecision {
  bool allowed = true;
  int status = 0;
  std::string code, message;  // when refused: 401 unauthorized, 403 forbidden, 429 rate_limited
  int retry_after_s = 0;      // 429: send as Retry-After
  // CORS headers (and WWW-Authenticate on 401) to add to the response,
  // refused or not, so a permitted page can read the error.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string key_id;  // who, for per-key limits and logs ("" = anonymous)
};

// One running search counted against its key's (or anonymous IP's) cap.
// Move-only; gives the slot back when destroyed or released. Safe to outlive
// the AccessControl. To keep one in a copyable callback, hold it in a
// std::shared_ptr<SearchSlot>.
class SearchSlot {
 public:
  SearchSlot() = default;
  SearchSlot(SearchSlot&& other) noexcept;
  SearchSlot& operator=(SearchSlot&& other) noexcept;
  SearchSlot(const SearchSlot&) = delete;
  SearchSlot& operator=(const SearchSlot&) = delete;
  ~SearchSlot();
  void release();
  bool held() const { return static_cast<bool>(release_); }

 private:
  friend class AccessControl;
  explicit SearchSlot(std::function<void()> release) : release_(std::move(release)) {}
  std::function<void()> release_;
};

class AccessControl {  // thread-safe
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // Errors name the offending key, e.g. "access.keys[1].scopes: unknown scope \"prft\"".
  static Expected<std::unique_ptr<AccessControl>, std::string> create(
      const nlohmann::json& access_config);
  // The same with an injected clock (tests).
  static Expected<std::unique_ptr<AccessControl>, std::string> create(
      const nlohmann::json& access_config, Clock clock);
  ~AccessControl();
  AccessControl(const AccessControl&) = delete;
  AccessControl& operator=(const AccessControl&) = delete;

  // Every request (not /healthz /readyz), and the WebSocket upgrade (scope
  // "ws"). Consumes a rate-limit token when allowed. A WebSocket upgrade from
  // a cross-origin page that is not in the allow-list is refused 403 (browsers
  // do not apply CORS to WebSockets).
  AccessDecision check(const AccessRequest& request);
  // OPTIONS: CORS preflight answer headers (send with 204). Allowed origin:
  // Access-Control-Allow-Origin/-Methods/-Headers/-Max-Age + Vary: Origin;
  // any other origin: no CORS headers. Counts against the per-IP limit.
  AccessDecision preflight(const AccessRequest& request);
  // A later scope check for a client already admitted by check(), without
  // consuming a rate-limit token: e.g. a WebSocket "analyze" or "annotate"
  // message on a connection opened with key `key_id`.
  AccessDecision authorize(std::string_view key_id, std::string_view scope) const;
  // One more request of a client already admitted by check(), such as a
  // WebSocket message: a token from the same per-key and per-IP buckets
  // that check() draws on (refused 429 rate_limited with retry_after_s
  // when either is empty, taking from neither). `ip` is the client's
  // address as check() was given it.
  AccessDecision charge(std::string_view key_id, const std::string& ip);
  // Before starting a search (sync/NDJSON analyze, WebSocket analyze, job):
  // a held slot, or an empty one when `key_id` (or, anonymous, `ip`) already
  // runs its cap; then answer refused_search().
  SearchSlot acquire_search(std::string_view key_id, std::string_view ip);
  // 429 rate_limited "too many concurrent searches" with Retry-After 1.
  AccessDecision refused_search(std::string_view key_id) const;

  // Who an Authorization header names, without charging or checking a
  // scope: the key's id, "" without a key (or without keys configured), or
  // nullopt for an unknown or malformed one (check() answers it 401).
  std::optional<std::string> identify(std::string_view authorization) const;
  // True when any rule is configured (false: check() always allows).
  bool enabled() const;
  // Number of per-IP buckets held (tests of the memory bound).
  size_t tracked_ips() const;

 private:
  struct State;
  explicit AccessControl(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

}  // namespace kibitz::server
