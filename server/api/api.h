// The server's operations as JSON in, JSON out: what the HTTP and WebSocket
// transport (server/http) calls. No networking here.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/expected.h"
#include "engine/analysis.h"
#include "engine/service.h"
#include "server/api/config.h"
#include "server/api/priority.h"
#include "server/store/store.h"

namespace kibitz::server {

// The outcome of every operation, the one answer the API gives every
// transport (HTTP, NDJSON, WebSocket, jobs, the CLI): a result (200) or an
// error ({"error": {"code", "message"}} with its status), its wire text
// made once (wire()), and whether the result cache answered it.
struct Reply {
  int status = 200;
  nlohmann::json body;  // sent as application/json
  // When set, the body already serialised (a cached result): sent as is,
  // and `body` is null. Saves copying and serialising a cache hit.
  std::shared_ptr<const std::string> text;
  std::vector<std::pair<std::string, std::string>> headers;  // e.g. Retry-After
  // The transport answers after this pause: a client refused at a cap
  // again within the second (RefusalMemo) waits for its refusal, on a
  // timer, so that a flood of them costs the server one answer a second per
  // connection rather than as many as the client can send.
  std::chrono::milliseconds hold{0};
  // Answered from the result cache (headers carry X-Kibitz-Cache: hit for
  // HTTP clients; a transport asks this flag, not the header).
  bool cached = false;

  bool ok() const { return status == 200; }
  // The body's wire text (to_wire), made at most once: `text` when set,
  // else serialised from `body` now and kept in `text`.
  const std::shared_ptr<const std::string>& wire();
  // The body as JSON: `body`, or, for an answer that holds only its text
  // (a cache hit), parsed from it once and kept in `body`.
  nlohmann::json& json_body();
  // The error object ({"code", "message"}) of an error reply; {} otherwise.
  nlohmann::json error() const;
};

// A result from the cache: its serialised text as stored, marked cached.
Reply cache_hit_reply(std::shared_ptr<const std::string> text);
Reply cache_hit_reply(nlohmann::json body);

// {"error": {"code", "message"}} with the status for that code.
Reply error_reply(int status, std::string code, std::string message);
// 500 {"error": {"code": "internal"}}: what an exception turns into.
Reply internal_reply(std::string_view what);
// Parses a request body without exceptions, with the JSON depth cap:
// invalid_json (400) naming the offset.
Expected<nlohmann::json, Reply> parse_body(std::string_view body, const Config&);

// Job submissions with bodies this large or larger are read at low
// priority, at most kBulkPerClient of one client's at once (Api::bulk_call).
inline constexpr size_t kBulkBodyBytes = 64 * 1024;
inline constexpr int kBulkPerClient = 2;
Reply bulk_full_reply();

// The one callback shape from work to whoever asked for it (an HTTP
// session, a WebSocket, a job, the CLI). Called from search threads: a
// receiver with a strand posts to it.
struct Reporter {
  std::function<void(nlohmann::json)> on_progress;  // optional: each completed iteration / ply
  std::function<void(Reply)> on_done;               // exactly once: the result (200) or an error
};

// Who asks and how: the scheduler shares the search threads fairly between
// owners (an API key, else the client's address) and runs interactive work
// before batch work.
struct Caller {
  std::string owner;
  Priority priority = Priority::interactive;
  bool allow_infinite = false;  // "limits.infinite" (WebSocket only)
  // The Idempotency-Key header of a job submission, as sent (api/idempotency.h).
  std::optional<std::string> idempotency_key = std::nullopt;
};

class Ticket {  // a running request; cancel() is idempotent, thread-safe
 public:
  virtual ~Ticket() = default;
  virtual void cancel() = 0;
};

class Metrics;  // server/api/metrics.h

// Every operation decodes its request once, into one unit of work (an
// analysis, a review, a perft) that the scheduler -- the queue in front of
// the search threads -- starts when its threads are free. (Other bounded
// queues stand before it: the store's calls, big submissions, a cluster's
// shared job queue, and a connection's outgoing lines or messages.)
// Errors are replies, never exceptions. make_api's implementation
// (api.cpp) is a façade over the rooms listed there.
class Api {
 public:
  virtual ~Api() = default;
  // POST /v1/analyze (sync or NDJSON) and WebSocket "analyze". A cached or
  // immediate answer calls on_done before this returns (a cache hit with
  // `text` set, `cached`, and the header X-Kibitz-Cache: hit).
  virtual std::shared_ptr<Ticket> analyze(const nlohmann::json& request, const Caller& caller,
                                          Reporter reporter) = 0;
  // Whole-game review as a stream (WebSocket "annotate"): on_progress gets
  // {"ply", "plies"} objects, on_done the review.
  virtual std::shared_ptr<Ticket> annotate_stream(const nlohmann::json& request,
                                                  const Caller& caller, Reporter reporter) = 0;
  // POST /v1/perft: scheduled like a search (cancellable, with a deadline).
  virtual std::shared_ptr<Ticket> perft(const nlohmann::json& request, const Caller& caller,
                                        Reporter reporter) = 0;
  virtual Reply moves(const nlohmann::json& request) = 0;  // POST /v1/moves
  // POST /v1/batch (server/api/batch.h): on_progress gets each position's
  // line ({"index", ...its result} or {"index", "error"}) as it ends,
  // on_done {"summary", "results"} once they all have, or the batch's
  // error. An error at once calls on_done before this returns (nullptr).
  virtual std::shared_ptr<Ticket> batch(const nlohmann::json& request, const Caller& caller,
                                        Reporter reporter) {
    (void)request, (void)caller;
    if (reporter.on_done) reporter.on_done(error_reply(404, "not_found", "no batches here"));
    return nullptr;
  }
  // POST /v1/jobs and POST /v1/games/annotate -> 202 with the job's id.
  virtual Reply submit_job(const nlohmann::json& request, const Caller& caller) = 0;
  virtual Reply annotate(const nlohmann::json& request, const Caller& caller) = 0;
  // A job submission (`kind` "analyze" or "annotate") that this client is
  // refused now at a cap, known without its body: the transport answers it
  // before parsing the body. Never waits for the store. nullopt: go on.
  // keyed: it has an Idempotency-Key (a repeat answers the job it made).
  virtual std::optional<Reply> refused_early(std::string_view kind, const Caller& caller,
                                             bool keyed) {
    (void)kind;
    (void)caller;
    (void)keyed;
    return std::nullopt;
  }
  virtual Reply get_job(std::string_view id) = 0;
  // GET /v1/evals: the deepest kept analysis of a position (404 without).
  virtual Reply evals(std::string_view game, std::string_view fen, std::string_view multipv,
                      std::string_view variant) {
    (void)game, (void)fen, (void)multipv, (void)variant;
    return error_reply(404, "not_found", "no evaluation library");
  }
  virtual Reply delete_job(std::string_view id) = 0;
  // GET /api/cloud-eval (library.h cloud_eval_lookup): Lichess's shape,
  // read from the evaluation library (so, on a store thread).
  virtual Reply cloud_eval(std::string_view fen, std::string_view multipv,
                           std::string_view variant) {
    (void)fen, (void)multipv, (void)variant;
    return Reply{404, {{"error", "No cloud evaluation available for that position"}}, nullptr, {}};
  }
  // GET /v1/tablebase (server/api/tablebase.h): the Syzygy tables' answer.
  virtual Reply tablebase(std::string_view fen) {
    (void)fen;
    return error_reply(404, "no_tablebases", "no Syzygy tables are loaded");
  }
  // DELETE /v1/jobs/{id} as the network calls it: `done` gets
  // delete_job's answer (on another thread); the cancellation is stored on
  // a store thread, as store_call's calls are, but no thread waits for the
  // job's stop: a client deleting many running jobs at once holds no store
  // thread while their searches stop. Exactly once.
  virtual void delete_job_then(std::string_view id, std::function<void(Reply)> done) {
    store_call([this, id = std::string(id)] { return delete_job(id); }, std::move(done));
  }
  // Runs `call` -- one that may wait for the store: submit_job, annotate,
  // get_job, delete_job, evals -- on the store's own threads, never the
  // caller's, and gives its reply to `done` there: a network thread never
  // waits for SQLite or Redis. When as many calls wait already as the
  // store's queue holds (store.queue_size), `done` gets 503
  // storage_unavailable at once, on the calling thread. Exactly once.
  virtual void store_call(std::function<Reply()> call, std::function<void(Reply)> done) {
    done(call());
  }
  // A job submission of kBulkBodyBytes or more (a long game, a big batch):
  // `call` reads it (parses, decodes) and stores it on a thread of its own
  // at the lowest priority (nice 19), never an I/O or store thread, so that
  // a client sending big bodies spends the CPU nothing else wants first.
  // At most kBulkPerClient of one owner's at once: more get 429
  // client_work_cap on the calling thread (bulk_full tells before the body
  // is read). Exactly once, like store_call.
  virtual void bulk_call(const std::string& owner, std::function<Reply()> call,
                         std::function<void(Reply)> done) {
    (void)owner;
    done(call());
  }
  virtual bool bulk_full(const std::string& owner) const {
    (void)owner;
    return false;
  }
  virtual Reply info() = 0;        // GET /v1/info
  virtual bool ready() const = 0;  // GET /readyz
  virtual void shutdown() = 0;     // refuse new work (503 shutting_down), cancel everything
  virtual Metrics& metrics() = 0;
  virtual const Config& config() const = 0;
};

// With a store (server/store), jobs kept there from before run again at once
// (a review from its last finished plies) and finished ones are readable;
// without one, a memory store of config.store.library_mib.
std::unique_ptr<Api> make_api(const Config& config, engine::Service& service,
                              std::shared_ptr<store::Store> store = nullptr);

}  // namespace kibitz::server
