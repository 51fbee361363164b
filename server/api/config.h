// The server's settings: embedded defaults (config/kibitz.json, compiled in),
// then an optional file, then KIBITZ_* environment variables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/expected.h"
#include "server/store/store.h"

namespace kibitz::server {

struct Config {
  std::string address = "127.0.0.1";
  int port = 8080;
  int io_threads = 2;
  int search_threads = 0;  // 0: all hardware threads
  size_t hash_mib_chess = 64, hash_mib_draughts = 64;
  size_t queue_size = 64;        // queued analyses before 429 queue_full
  int64_t live_slice_ms = 2000;  // a live search yields its threads after this when work waits
  // Per client (an API key, else its address; README "Limits and caps").
  size_t max_work_per_client = 16;         // queued + running searches, reviews, perfts
  int max_threads_per_client = 0;          // running at once; 0: half the pool, rounded up
  size_t max_jobs_per_client = 200;        // jobs kept (queued, running and finished)
  int interactive_reserved_threads = 1;    // threads jobs and reviews never take
  size_t interactive_reserved_queue = 16;  // queue places jobs and reviews never take
  // caps on what a client controls
  size_t max_body_bytes = 1 << 20;  // 413 payload_too_large
  size_t max_header_bytes = 16384;
  int max_json_depth = 32;
  size_t max_moves = 1000;            // length of "moves"
  size_t max_batch_positions = 1000;  // positions of one batch (POST /v1/batch, batch jobs)
  int max_depth = 64;
  uint64_t max_nodes = 100'000'000;
  int64_t max_movetime_ms = 60'000;
  int64_t default_movetime_ms = 2'000;  // when no limit given
  int max_multipv = 5;
  int max_threads_per_job = 0;  // 0: search_threads
  int max_perft_depth_chess = 6, max_perft_depth_draughts = 10;
  size_t ws_max_message_bytes = 65536;
  int ws_messages_per_second = 20;
  int ws_max_searches_per_connection = 4;
  int read_timeout_ms = 10'000, idle_timeout_ms = 120'000;
  // Open connections (HTTP and WebSocket): all together (lowered to fit the
  // descriptor limit; 503 server_busy above it) and per client address or
  // IPv6 /64 (429 too_many_connections; 0 = no cap).
  size_t max_connections = 10'000;
  size_t max_connections_per_client = 256;
  size_t max_websockets_per_client = 256;  // per key or client, whatever the address
  // Proxies (addresses or ranges, comma-separated) whose X-Forwarded-For
  // names the client; "": none, the client is the connection's address.
  std::string trusted_proxies;
  int64_t job_deadline_ms = 600'000;
  int job_retention_s = 600;
  size_t max_jobs = 1000;
  // A job still unfinished after its search was started this often (each
  // time the server stopped under it) ends failed/crashed; 0 = never.
  int job_max_attempts = 2;
  // At SIGTERM: new work is refused (503 shutting_down, which a load
  // balancer retries elsewhere) while running work has this long to finish
  // before it is stopped; 0: stopped at once.
  int drain_ms = 0;
  size_t cache_entries = 4096;
  std::string web_root;  // "": <dir of the executable>/web, if it exists
  std::string log_level = "info";
  // The chess evaluation: "builtin" (the network built in, with its share of
  // the hand-written evaluation), "" or "classical" (hand-written), or a
  // network file (core/chess/nnue_network.h).
  std::string eval_file = "builtin";
  // Syzygy endgame tables (core/chess/syzygy.h): folders separated by ':';
  // "": none. A folder that cannot be read, or a path without a table, is
  // refused at start.
  std::string syzygy_path;
  nlohmann::json access = nlohmann::json::object();  // decoded by server/access
  // "store": where jobs and the evaluation library are kept. The object as
  // given (merged key by key over the defaults), and decoded.
  nlohmann::json store_object = nlohmann::json::object();
  store::Settings store;
};

// Embedded defaults = config/kibitz.json (JSON with // comments, compiled in).
// path "" = embedded defaults only. Then KIBITZ_<UPPER_NAME> env vars override
// (KIBITZ_PORT, KIBITZ_ADDRESS, KIBITZ_SEARCH_THREADS ...). Errors name the key.
Expected<Config, std::string> load_config(const std::string& path);
nlohmann::json to_json(const Config&);

}  // namespace kibitz::server
