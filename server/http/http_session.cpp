#include "http_session.h"

#include <spdlog/spdlog.h>
#include <mutex>
#include <optional>

#include <boost/asio/write.hpp>
#include <boost/beast/http/file_body.hpp>

#include "answer_memo.h"
#include "client_id.h"
#include "openapi_document.h"
#include "static_files.h"
#include "ws_session.h"

namespace kibitz::server {

namespace {

constexpr size_t kIdleReadChunk = 4096;

bool wants_ndjson(const http::request<http::string_body>& req) {
  const auto accept = req[http::field::accept];
  return accept.find("application/x-ndjson") != beast::string_view::npos;
}

std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }

bool is_cache_hit(const Reply& r) {
  for (const auto& [name, value] : r.headers)
    if (name == "X-Kibitz-Cache") return value == "hit";
  return false;
}

}  // namespace

HttpSession::HttpSession(Socket&& socket, ServerContext& ctx, ConnectionSlot slot)
    : ctx_(ctx), stream_(std::move(socket)), slot_(std::move(slot)) {
  beast::error_code ec;
  const auto remote = stream_.socket().remote_endpoint(ec);
  ip_ = ec ? "?" : remote.address().to_string();
  if (!ec) peer_ = remote.address();
  stream_.socket().set_option(tcp::no_delay(true), ec);
}

HttpSession::~HttpSession() {
  if (ex_.ticket) ex_.ticket->cancel();
  ctx_.sessions.remove(this);
}

void HttpSession::start() {
  ctx_.sessions.add(this, weak_from_this());
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
    self->contain("start", [&] { self->read_request(); });
  });
}

void HttpSession::shutdown() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    self->contain("shutdown", [&] {
      self->stopping_ = true;
      // Idle between requests: nothing is lost by closing now. Busy: the
      // answer in progress goes out with "Connection: close".
      if (!self->busy_) self->close();
    });
  });
}

void HttpSession::close() {
  self_.reset();  // every caller is a handler that holds its own reference
  if (closed_) return;
  closed_ = true;
  if (hold_) hold_->cancel();
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.close();
}

// Between requests the connection may idle (idle_timeout_ms); once the first
// byte of a request is here, the whole request must arrive within
// read_timeout_ms, so a trickling client cannot hold the connection.
void HttpSession::read_request() {
  if (stopping_ || closed_) return close();
  busy_ = false;
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(ctx_.config.max_header_bytes));
  parser_->body_limit(ctx_.config.max_body_bytes);
  if (buffer_.size() > 0) return read_header();
  stream_.expires_after(std::chrono::milliseconds(seq_ == 0 ? ctx_.config.read_timeout_ms
                                                            : ctx_.config.idle_timeout_ms));
  stream_.async_read_some(buffer_.prepare(kIdleReadChunk),
                          [self = shared_from_this()](beast::error_code ec, size_t n) {
                            self->contain("read", [&] {
                              if (ec) return self->fail_read(ec);
                              self->buffer_.commit(n);
                              self->read_header();
                            });
                          });
}

void HttpSession::read_header() {
  busy_ = true;
  stream_.expires_after(std::chrono::milliseconds(ctx_.config.read_timeout_ms));
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = shared_from_this()](beast::error_code ec, size_t) {
                            self->contain("read header", [&] { self->on_header(ec); });
                          });
}

void HttpSession::on_header(beast::error_code ec) {
  if (ec) return fail_read(ec);
  auto& req = parser_->get();
  // Refuse an announced oversized body before reading any of it.
  if (const auto length = parser_->content_length();
      length && *length > ctx_.config.max_body_bytes) {
    return fail_read(http::error::body_limit);
  }
  const auto announced = parser_->content_length();
  if (auto no = refused_before_body(
          req, announced ? std::optional<std::uint64_t>(*announced) : std::nullopt)) {
    refusal_ = std::move(no);
    // No 100 Continue: a client that waits for it sends no body, and is
    // answered once the wait ends (the body, if any, is read and dropped).
    discard_.emplace(std::move(*parser_));
    discard_->body_limit(ctx_.config.max_body_bytes);
    parser_.reset();
    if (discard_->is_done()) return on_discarded({});  // no body at all
    return discard_body();
  }
  if (beast::iequals(req[http::field::expect], "100-continue")) {
    auto res = std::make_shared<http::response<http::empty_body>>(http::status::continue_, 11);
    http::async_write(stream_, *res,
                      [self = shared_from_this(), res](beast::error_code wec, size_t) {
                        self->contain("write 100", [&] {
                          if (wec) return self->close();
                          self->read_body();
                        });
                      });
    return;
  }
  read_body();
}

// Only the submissions that can be refused without their body, from a
// client access control knows or with no access control: one with big
// submissions of its own being read already (whatever its Idempotency-Key:
// a repeat of one of those would be told "in use" anyway), or one at a cap
// (Api::refused_early, which tells how a key counts).
std::optional<Reply> HttpSession::refused_before_body(const Request& head,
                                                      std::optional<std::uint64_t> length) {
  if (head.method() != http::verb::post) return std::nullopt;
  const std::string_view target = sv(head.target());
  const std::string_view path = target.substr(0, target.find('?'));
  const char* kind = path == "/v1/jobs"             ? "analyze"
                     : path == "/v1/games/annotate" ? "annotate"
                                                    : nullptr;
  if (!kind) return std::nullopt;
  const bool big = length && *length >= kBulkBodyBytes;
  const bool keyed = head.count("Idempotency-Key") > 0;
  std::string key_id;
#if KIBITZ_HAVE_ACCESS
  if (ctx_.access) {
    auto who = ctx_.access->identify(sv(head[http::field::authorization]));
    if (!who) return std::nullopt;  // check() answers it, after the body
    key_id = std::move(*who);
  }
#endif
  Origin o;
  o.owner = client_owner(request_client(head), key_id);
  if (big && ctx_.api.bulk_full(o.owner)) return bulk_full_reply();
  return ctx_.api.refused_early(kind, o, keyed);
}

// A reply with a hold (Reply::hold: a client refused at a cap again within
// the second) is sent when the hold ends, on a timer: the connection waits,
// no thread does.
void HttpSession::reply_after_hold(Reply r) {
  if (!hold_) hold_.emplace(stream_.get_executor());
  const auto pause = r.hold;
  r.hold = {};
  hold_->expires_after(pause);
  hold_->async_wait(
      [self = shared_from_this(), seq = ex_.seq, r = std::move(r)](beast::error_code ec) mutable {
        self->contain("hold", [&] {
          if (ec || self->closed_ || self->ex_.seq != seq || !self->busy_) return;
          self->reply(std::move(r));
        });
      });
}

void HttpSession::discard_body() {
  constexpr size_t kScratch = 64 * 1024;
  if (!scratch_) scratch_ = std::make_unique<char[]>(kScratch);
  auto& body = discard_->get().body();
  body.data = scratch_.get();
  body.size = kScratch;
  http::async_read_some(stream_, buffer_, *discard_,
                        [self = shared_from_this()](beast::error_code ec, size_t) {
                          self->contain("drop body", [&] { self->on_discarded(ec); });
                        });
}

void HttpSession::on_discarded(beast::error_code ec) {
  if (ec == http::error::need_buffer) ec = {};
  if (ec) {
    discard_.reset();
    refusal_.reset();
    return fail_read(ec);
  }
  if (!discard_->is_done()) return discard_body();
  stream_.expires_never();
  // Answered as any request is (logged, counted, access checked), with
  // an empty body and the refusal decided from its header.
  Request req(std::move(discard_->release().base()));
  discard_.reset();
  contain("request", [&] { handle(std::move(req)); });
}

void HttpSession::read_body() {
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, size_t) {
                     self->contain("read body", [&] { self->on_body(ec); });
                   });
}

void HttpSession::on_body(beast::error_code ec) {
  if (ec) return fail_read(ec);
  stream_.expires_never();
  contain("request", [&] { handle(parser_->release()); });
}

void HttpSession::fail_read(beast::error_code ec) {
  // A peer that hangs up or times out between requests is the normal end.
  if (ec == http::error::end_of_stream || ec == net::error::operation_aborted ||
      ec == beast::error::timeout || ec == net::error::eof || ec == net::error::connection_reset ||
      closed_) {
    return close();
  }
  // Errors in a request we can still answer; the connection closes after.
  ++seq_;
  ex_ = Exchange{};
  ex_.seq = seq_;
  ex_.start = SteadyClock::now();
  ex_.method = parser_ && parser_->is_header_done()
                   ? std::string(sv(parser_->get().method_string()))
                   : std::string("?");
  ex_.target = parser_ && parser_->is_header_done() ? std::string(sv(parser_->get().target()))
                                                    : std::string("?");
  ex_.keep_alive = false;
  busy_ = true;
  if (ec == http::error::body_limit) {
    return reply_error(
        413, "payload_too_large",
        "request body exceeds " + std::to_string(ctx_.config.max_body_bytes) + " bytes");
  }
  if (ec == http::error::header_limit) {
    return reply_error(
        413, "payload_too_large",
        "request headers exceed " + std::to_string(ctx_.config.max_header_bytes) + " bytes");
  }
  reply_error(400, "invalid_request", "malformed HTTP request: " + ec.message());
}

void HttpSession::handle(Request&& req) {
  ++seq_;
  ex_ = Exchange{};
  ex_.early_refusal = std::move(refusal_);
  refusal_.reset();
  ex_.seq = seq_;
  ex_.start = SteadyClock::now();
  self_ = shared_from_this();
  ex_.method = std::string(sv(req.method_string()));
  ex_.target = std::string(sv(req.target()));
  ex_.client = request_client(req);
  ex_.version = req.version();
  // A connection accepted after shutdown walked the sessions is answered
  // once and closed too.
  ex_.keep_alive = req.keep_alive() && !stopping_ && !ctx_.stopping;
  if (ex_.target == "*" && req.method() == http::verb::options) {  // OPTIONS *: the server
    http::response<http::empty_body> res{http::status::no_content, ex_.version};
    res.set(http::field::allow, "GET, HEAD, POST, DELETE, OPTIONS");
    return send(std::move(res));
  }
  auto parsed = parse_target(ex_.target);
  if (!parsed)
    return reply_error(400, "invalid_request",
                       "malformed request target: " + parsed.error().message());
  // The parsed target and route.id view ex_.target, which lives as long as
  // the exchange.
  ex_.parsed = *parsed;
  ex_.route = match_route(ex_.method, ex_.parsed.path());
  if (ex_.route.route == Route::ws && websocket::is_upgrade(req) && ex_.method == "GET") {
    if (!check_access(req)) return;
    if (ctx_.ws_flooders.flooded(client_owner(ex_.client, ex_.key_id))) {
      Reply r = error_reply(429, "rate_limited",
                            "this client's WebSocket was closed for sending too many messages "
                            "moments ago; retry in a few seconds");
      r.headers.emplace_back("Retry-After", std::to_string(FloodMemo::kFor.count()));
      r.hold = FloodMemo::kHold;
      return reply(std::move(r));
    }
    return upgrade(std::move(req));
  }
  // ?access_token= is for the WebSocket upgrade alone (browsers cannot set
  // headers there). Anywhere else a token in the URL would end up in proxy
  // logs and histories for nothing: refused, so the client learns to use
  // the header rather than getting a puzzling 401.
  if (ex_.parsed.query_param("access_token"))
    return reply_error(400, "invalid_request",
                       "the access_token query parameter is accepted only on the WebSocket "
                       "upgrade (GET /v1/ws); send the key as \"Authorization: Bearer KEY\"");
  dispatch_route(req);
}

bool HttpSession::check_access(const Request& req) {
#if KIBITZ_HAVE_ACCESS
  if (!ctx_.access || ex_.route.scope.empty()) return true;
  AccessRequest ar;
  ar.scope = ex_.route.scope;
  ar.method = ex_.method;
  ar.authorization = sv(req[http::field::authorization]);
  ar.origin = sv(req[http::field::origin]);
  ar.host = sv(req[http::field::host]);
  ar.ip = ex_.client;
  // Only the upgrade gets this far with one (handle() refuses it elsewhere).
  const auto token =
      ex_.route.route == Route::ws ? ex_.parsed.query_param("access_token") : std::nullopt;
  if (token) ar.access_token = *token;
  AccessDecision d = ctx_.access->check(ar);
  ex_.extra = std::move(d.headers);
  ex_.key_id = std::move(d.key_id);
  if (d.allowed) return true;
  Headers headers;
  if (d.retry_after_s > 0) headers.emplace_back("Retry-After", std::to_string(d.retry_after_s));
  reply_error(d.status ? d.status : 403, d.code.empty() ? "forbidden" : d.code, d.message,
              std::move(headers));
  return false;
#else
  (void)req;
  return true;
#endif
}

void HttpSession::dispatch_route(Request& req) {
  const RouteMatch& route = ex_.route;
  if (ex_.method == "OPTIONS" && route.route != Route::not_found) {
    http::response<http::empty_body> res{http::status::no_content, ex_.version};
#if KIBITZ_HAVE_ACCESS
    if (ctx_.access) {
      AccessRequest ar;
      ar.scope = route.scope.empty() ? std::string_view("info") : route.scope;
      ar.method = ex_.method;
      ar.origin = sv(req[http::field::origin]);
      ar.host = sv(req[http::field::host]);
      ar.ip = ex_.client;
      ex_.extra = ctx_.access->preflight(ar).headers;
    }
#endif
    res.set(http::field::allow, route.allow);
    return send(std::move(res));
  }
  if (route.route == Route::not_found)
    return reply_error(404, "not_found", "no such endpoint: " + loggable(ex_.parsed.path(), 100));
  if (!route.method_allowed) {
    return reply_error(405, "method_not_allowed",
                       ex_.method + " is not allowed on " + std::string(route.name),
                       {{"Allow", std::string(route.allow)}});
  }
  if (!check_access(req)) return;

  Api& api = ctx_.api;
  const auto parse = [&]() -> std::optional<nlohmann::json> {
    auto body = parse_body(req.body(), ctx_.config);
    if (!body) {
      reply(body.error());
      return std::nullopt;
    }
    return std::move(*body);
  };
  const auto deliver = [weak = weak_from_this(), gate = ctx_.gate, seq = ex_.seq](Reply r) {
    post_to(weak, gate, [seq, r = std::move(r)](HttpSession& s) mutable {
      if (s.ex_.seq == seq && s.busy_) s.reply(std::move(r));
    });
  };
  // A call that may wait for the store runs on the store's threads (never
  // this I/O thread); its answer comes back to this strand, for this
  // exchange only (deliver).
  const auto via_store = [&](std::function<Reply()> call) {
    api.store_call(std::move(call), deliver);
  };
  // A big submission is read (parsed and decoded) and stored on the bulk
  // thread at nice 19, not here (Api::bulk_call); `submit` takes its JSON.
  using Submit = Reply (*)(Api&, const nlohmann::json&, const Origin&);
  const auto bulk = [&](Submit submit) {
    Origin o = job_origin(req);
    const std::string owner = o.owner;
    api.bulk_call(
        owner,
        [&api, submit, o = std::move(o), text = std::move(req.body())] {
          auto body = parse_body(text, api.config());
          return body ? submit(api, *body, o) : std::move(body.error());
        },
        deliver);
  };

  switch (route.route) {
    case Route::healthz: {
      Reply r;
      r.body = {{"status", "ok"}};
      return reply(std::move(r));
    }
    case Route::readyz: {
      // Not ready: shutting down, or the store (Redis) cannot be reached,
      // as the store's health thread last saw it (no round trip here).
      if (!api.ready()) {
        if (ctx_.stopping) return reply_error(503, "shutting_down", "not ready: shutting down");
        return reply_error(503, "storage_unavailable",
                           "not ready: the store cannot be reached; retry later");
      }
      Reply r;
      r.body = {{"status", "ready"}};
      return reply(std::move(r));
    }
    case Route::metrics: {
      return send_body(
          200, "text/plain; version=0.0.4; charset=utf-8",
          std::make_shared<const std::string>(api.metrics().render() + ctx_.connections.render()));
    }
    case Route::info:
      return reply(api.info());
    case Route::openapi: {
      static const auto document = std::make_shared<const std::string>(kOpenApiDocument);
      return send_body(200, "application/yaml", document, {{"Cache-Control", "no-cache"}});
    }
    case Route::analyze:
      if (answer_from_memo(req)) return;
      if (auto body = parse()) handle_analyze(req, *body);
      return;
    case Route::jobs:
      if (ex_.early_refusal) return reply(std::move(*ex_.early_refusal));
      if (req.body().size() >= kBulkBodyBytes)
        return bulk(
            [](Api& a, const nlohmann::json& b, const Origin& o) { return a.submit_job(b, o); });
      if (auto body = parse())
        via_store([&api, body = std::move(*body), o = job_origin(req)] {
          return api.submit_job(body, o);
        });
      return;
    case Route::job:
      if (ex_.method == "DELETE")
        return via_store([&api, id = std::string(route.id)] { return api.delete_job(id); });
      return via_store([&api, id = std::string(route.id)] { return api.get_job(id); });
    case Route::evals:
      return via_store([&api, game = ex_.parsed.query_param("game").value_or(""),
                        fen = ex_.parsed.query_param("fen").value_or(""),
                        multipv = ex_.parsed.query_param("multipv").value_or("")] {
        return api.evals(game, fen, multipv);
      });
    case Route::moves:
      if (auto body = parse()) reply(api.moves(*body));
      return;
    case Route::tablebase:
      return reply(api.tablebase(ex_.parsed.query_param("fen").value_or("")));
    case Route::perft:
      // A count holds a search thread like a search: it takes the same slot.
      if (auto body = parse(); body && take_search_slot()) {
        Reporter reporter;
        reporter.on_done = deliver;
        ex_.ticket = api.perft(*body, origin(), std::move(reporter));
        // Like a search: a client that goes away stops its count (an
        // answer given at once has been posted already and runs first).
        net::post(stream_.get_executor(), [self = shared_from_this(), seq = ex_.seq] {
          self->contain("watch", [&] {
            if (self->ex_.seq == seq && self->busy_ && !self->ex_.watching)
              self->watch_disconnect();
          });
        });
      }
      return;
    case Route::annotate:
      if (ex_.early_refusal) return reply(std::move(*ex_.early_refusal));
      if (req.body().size() >= kBulkBodyBytes)
        return bulk(
            [](Api& a, const nlohmann::json& b, const Origin& o) { return a.annotate(b, o); });
      if (auto body = parse())
        via_store(
            [&api, body = std::move(*body), o = job_origin(req)] { return api.annotate(body, o); });
      return;
    case Route::ws:
      return reply_error(426, "invalid_request", "GET /v1/ws needs a WebSocket upgrade",
                         {{"Upgrade", "websocket"}});
    case Route::static_file:
      return handle_static(req);
    case Route::not_found:
      break;
  }
  reply_error(404, "not_found", "no such endpoint");
}

// A synchronous request whose identical body was answered from the result
// cache before is answered from the same entry (answer_memo.h), before its
// body is even parsed; the rest takes the one route through the Api.
bool HttpSession::answer_from_memo(const Request& req) {
  if (wants_ndjson(req) || ctx_.stopping) return false;
  auto text = AnswerMemo::of_this_thread(&ctx_).find(req.body());
  if (!text) return false;
  ctx_.api.metrics().cache_hit();
  send_body(200, "application/json", std::move(text), {{"X-Kibitz-Cache", "hit"}});
  return true;
}

// The key's (or address's) concurrent-search slot, held while the search
// or count runs: false when refused (answered already).
bool HttpSession::take_search_slot() {
#if KIBITZ_HAVE_ACCESS
  if (ctx_.access) {
    SearchSlot slot = ctx_.access->acquire_search(ex_.key_id, ex_.client);
    if (!slot.held()) {
      AccessDecision d = ctx_.access->refused_search(ex_.key_id);
      Headers headers;
      if (d.retry_after_s > 0) headers.emplace_back("Retry-After", std::to_string(d.retry_after_s));
      for (auto& h : d.headers) headers.push_back(std::move(h));
      reply_error(d.status ? d.status : 429, d.code.empty() ? "rate_limited" : d.code, d.message,
                  std::move(headers));
      return false;
    }
    ex_.slot = std::make_shared<SearchSlot>(std::move(slot));
  }
#endif
  return true;
}

void HttpSession::handle_analyze(Request& req, const nlohmann::json& body) {
  const bool streaming = wants_ndjson(req);
  if (!take_search_slot()) return;
  if (streaming) {
    // The header goes out with the first line (write_stream), so an invalid
    // request still gets a plain JSON error with its status. HTTP/1.0 has no
    // chunks: the end of the connection ends the stream.
    ex_.chunked = ex_.version >= 11;
    if (!ex_.chunked) ex_.keep_alive = false;
    ex_.stream.emplace();
  }
  Reporter cb;
  auto weak = weak_from_this();
  auto gate = ctx_.gate;
  const uint64_t seq = ex_.seq;
  if (streaming) {
    cb.on_progress = [weak, gate, seq](nlohmann::json j) {
      std::string line = to_wire(j) + "\n";  // serialised on the search thread
      post_to(weak, gate, [seq, line = std::move(line)](HttpSession& s) mutable {
        s.on_stream_info(seq, std::move(line));
      });
    };
  }
  // An answer that comes at once (a cached result, an invalid request) is
  // sent from here, without a trip through the strand's queue.
  // (A search thread may answer while analyze() is still returning: the
  // mutex decides whether that answer is taken here or posted.) A stream's
  // final line is always posted: a search that ends before analyze()
  // returns has posted its iterations first, and they go out before it.
  struct Inline {
    std::mutex mutex;
    bool open = true;
    std::optional<Reply> reply;
  };
  auto inline_answer = std::make_shared<Inline>();
  cb.on_done = [weak, gate, seq, inline_answer, streaming](Reply r) {
    if (!streaming) {
      std::lock_guard lock(inline_answer->mutex);
      if (inline_answer->open) {
        inline_answer->reply = std::move(r);
        return;
      }
    }
    post_to(weak, gate, [seq, r = std::move(r)](HttpSession& s) mutable {
      s.on_analyze_done(seq, std::move(r));
    });
  };
  ex_.ticket = ctx_.api.analyze(body, origin(), std::move(cb));
  std::optional<Reply> now;
  {
    std::lock_guard lock(inline_answer->mutex);
    inline_answer->open = false;
    now = std::move(inline_answer->reply);
  }
  if (now) {
    if (!streaming && now->status == 200 && now->text && is_cache_hit(*now))
      AnswerMemo::of_this_thread(&ctx_).remember(req.body(), now->text);
    return on_analyze_done(seq, std::move(*now));
  }
  // A cached or invalid request has already posted its answer, which runs
  // before this: only a real search is watched for the client hanging up.
  net::post(stream_.get_executor(), [self = shared_from_this(), seq] {
    self->contain("watch", [&] {
      if (self->ex_.seq == seq && self->busy_ && !self->ex_.watching) self->watch_disconnect();
    });
  });
}

void HttpSession::on_stream_info(uint64_t seq, std::string line) {
  if (seq != ex_.seq || !busy_ || !ex_.stream) return;
  ex_.stream->push_update(std::move(line));
  write_stream();
}

void HttpSession::on_analyze_done(uint64_t seq, Reply r) {
  if (seq != ex_.seq || !busy_) return;
  ex_.ticket.reset();
  ex_.slot.reset();
  if (!ex_.stream) return reply(std::move(r));
  if (!ex_.stream->started() && r.status != 200) {
    ex_.stream.reset();  // nothing sent yet: a normal error response
    return reply(std::move(r));
  }
  // Mid-stream errors (e.g. shutting down) become the last line.
  ex_.stream->push_final((r.text ? *r.text : to_wire(r.body)) + "\n");
  write_stream();
}

// One write in flight: the queued lines go out together, after the header
// when they are the first. A 200 header written by Beast's serializer, then
// the lines as Beast's chunks (the last chunk with the final line), or raw
// to an HTTP/1.0 client.
void HttpSession::write_stream() {
  if (closed_ || !ex_.stream || ex_.stream->writing()) return;
  const bool first = !ex_.stream->started();
  auto batch = ex_.stream->take();
  if (!batch) return;
  auto lines = std::make_shared<const NdjsonStream::Batch>(std::move(*batch));
  ex_.answering = true;
  stream_.expires_after(std::chrono::milliseconds(ctx_.config.idle_timeout_ms));
  if (!first) return write_stream_lines(std::move(lines));
  ex_.stream_head = std::make_unique<StreamHead>();
  auto& res = ex_.stream_head->res;
  res.version(ex_.version);
  res.result(http::status::ok);
  res.set(http::field::content_type, "application/x-ndjson");
  res.set(http::field::cache_control, "no-store");
  if (ex_.chunked) res.chunked(true);
  const bool keep_alive = ex_.keep_alive && !stopping_;
  stamp(res, keep_alive);
  if (!keep_alive) res.set(http::field::connection, "close");
  http::async_write_header(stream_, ex_.stream_head->sr,
                           [self = shared_from_this(), lines](beast::error_code ec, size_t n) {
                             self->contain("write stream", [&] {
                               self->ex_.stream_head.reset();
                               if (ec) return self->on_stream_written(ec, n);
                               self->ex_.stream_bytes += n;
                               self->write_stream_lines(lines);
                             });
                           });
}

void HttpSession::write_stream_lines(std::shared_ptr<const NdjsonStream::Batch> batch) {
  auto done = [self = shared_from_this(), batch](beast::error_code ec, size_t n) {
    self->contain("write stream", [&] { self->on_stream_written(ec, n); });
  };
  const auto lines = net::buffer(batch->lines);
  if (!ex_.chunked) return net::async_write(stream_, lines, std::move(done));
  if (!batch->last) return net::async_write(stream_, http::make_chunk(lines), std::move(done));
  net::async_write(stream_, beast::buffers_cat(http::make_chunk(lines), http::make_chunk_last()),
                   std::move(done));
}

void HttpSession::on_stream_written(beast::error_code ec, size_t bytes) {
  stream_.expires_never();
  if (!ex_.stream) return;
  ex_.stream->finish_write();
  ex_.stream_bytes += bytes;
  if (ec) {
    // The client went away mid-stream: stop its search.
    if (ex_.ticket) ex_.ticket->cancel();
    finish_exchange(499, ex_.stream_bytes);
    return close();
  }
  if (!ex_.stream->ended()) return write_stream();
  finish_exchange(200, ex_.stream_bytes);
  if (!ex_.keep_alive || stopping_) return close();
  read_request();
}

// While a search runs nothing is read, so a hang-up would go unnoticed until
// the answer is written. Waiting on the socket sees it:
// - an error (a reset) means the client is gone: its search is cancelled;
// - the end of the stream (a FIN) only means the client sends nothing more.
//   It may have half-closed its socket (shutdown(SHUT_WR)) and still read
//   the answer, or closed it whole: TCP tells the two apart only when we
//   write, which a closed socket answers with a reset. So the answer goes
//   on (and the connection closes after it), and the watch now waits for
//   that reset: a streamed answer sees it after its next line, a
//   synchronous one when its result is written (every search has a time
//   cap, so a vanished client holds its search for a bounded time);
// - bytes to read are a pipelined request, read after this answer.
void HttpSession::watch_disconnect() {
  ex_.watching = true;
  stream_.socket().async_wait(peer_eof_ ? tcp::socket::wait_error : tcp::socket::wait_read,
                              [self = shared_from_this(), seq = ex_.seq](beast::error_code ec) {
                                self->contain("watch", [&] { self->on_readable(seq, ec); });
                              });
}

void HttpSession::on_readable(uint64_t seq, beast::error_code ec) {
  if (seq != ex_.seq || !busy_ || closed_) return;
  ex_.watching = false;
  // After the end of the stream only an error or a hang-up wakes the watch.
  bool gone = static_cast<bool>(ec) || peer_eof_;
  if (!gone) {
    char c;
    beast::error_code pec;
    stream_.socket().non_blocking(true, pec);
    const size_t n = stream_.socket().receive(net::buffer(&c, 1), tcp::socket::message_peek, pec);
    if (pec == net::error::would_block) return watch_disconnect();  // spurious wake-up
    if (pec == net::error::eof || (!pec && n == 0)) {
      spdlog::debug("http {} {} {}: the client sends nothing more; answering it", ip_, ex_.method,
                    loggable_target(ex_.target));
      peer_eof_ = true;
      ex_.keep_alive = false;
      return watch_disconnect();
    }
    gone = static_cast<bool>(pec);
    // n > 0: a pipelined request; it is read after this answer.
  }
  if (!gone) return;
  spdlog::debug("http {} {} {}: client went away, search cancelled", ip_, ex_.method,
                loggable_target(ex_.target));
  if (ex_.ticket) ex_.ticket->cancel();
  ex_.ticket.reset();
  finish_exchange(499, 0);
  close();
}

void HttpSession::handle_static(const Request& req) {
  const std::string_view path = ex_.parsed.path();
  const StaticLookup found = resolve_static(ctx_.web_root, path);
  if (found.status == StaticStatus::bad_path)
    return reply_error(400, "invalid_request", found.reason);
  if (found.status == StaticStatus::not_found)
    return reply_error(404, "not_found", "no such file: " + loggable(path, 100));
  beast::error_code ec;
  http::file_body::value_type file;
  file.open(found.file.path.c_str(), beast::file_mode::scan, ec);
  if (ec) return reply_error(404, "not_found", "cannot open " + loggable(path, 100));
  const auto size = file.size();
  if (req.method() == http::verb::head) {
    http::response<http::empty_body> res{http::status::ok, ex_.version};
    res.set(http::field::content_type, found.file.content_type);
    res.set(http::field::cache_control, found.file.cache_control);
    res.content_length(size);
    return send(std::move(res));
  }
  http::response<http::file_body> res{std::piecewise_construct, std::make_tuple(std::move(file)),
                                      std::make_tuple(http::status::ok, ex_.version)};
  res.set(http::field::content_type, found.file.content_type);
  res.set(http::field::cache_control, found.file.cache_control);
  res.content_length(size);
  send(std::move(res));
}

void HttpSession::upgrade(Request&& req) {
  // The client (its key, or its address: behind a trusted proxy the one
  // forwarded) has at most max_websockets_per_client WebSockets open here,
  // from any addresses: a WebSocket holds a proxy's connection to this
  // instance for as long as it is open.
  const std::string owner = client_owner(ex_.client, ex_.key_id);
  ConnectionSlot key_slot = ctx_.connections.admit_websocket(owner);
  if (!key_slot.held()) {
    ex_.keep_alive = false;
    return reply_error(
        429, "too_many_connections",
        (ex_.key_id.empty() ? "client " + ex_.client : "API key \"" + ex_.key_id + "\"") + " has " +
            std::to_string(ctx_.connections.websockets_per_client_cap()) +
            " WebSockets open; close one or retry later",
        {{"Retry-After", "1"}});
  }
  ctx_.api.metrics().observe_request("/v1/ws", "GET", 101, seconds_since(ex_.start));
  spdlog::info("http {} GET {} 101", ip_, loggable_target(ex_.target));
  busy_ = false;
  closed_ = true;  // the socket now belongs to the WebSocket session
  self_.reset();   // nothing more to answer here; the caller holds a reference
  // The WebSocket session is registered before this one leaves the
  // registry: shutdown, waiting for the registry to empty, never sees a
  // moment without the connection and stops the I/O threads under it.
  std::make_shared<WsSession>(std::move(stream_), ctx_, ip_, ex_.client, ex_.key_id,
                              std::move(ex_.extra), std::move(slot_), std::move(key_slot))
      ->start(std::move(req));
  ctx_.sessions.remove(this);
}

void HttpSession::reply(Reply r) {
  if (r.hold.count() > 0) return reply_after_hold(std::move(r));
  // A cached answer is sent from the cache's own string, not copied.
  if (!r.text) r.text = std::make_shared<const std::string>(to_wire(r.body));
  send_body(r.status, "application/json", std::move(r.text), r.headers);
}

// The connection's client, unless the connection comes from a trusted
// proxy: then the nearest address in X-Forwarded-For that is not a trusted
// proxy (a client's own X-Forwarded-For entries stand to the left of what
// its proxies appended, and are not believed). A header that names no
// address there leaves the connection's client.
std::string HttpSession::request_client(const Request& req) const {
  if (ctx_.trusted_proxies.empty() || !ctx_.trusted_proxies.contains(peer_)) return slot_.client();
  std::vector<std::string_view> hops;
  auto [first, last] = req.equal_range("X-Forwarded-For");
  for (auto it = first; it != last; ++it) {
    std::string_view v = sv(it->value());
    while (!v.empty()) {
      const size_t comma = v.find(',');
      std::string_view hop = v.substr(0, comma);
      v = comma == std::string_view::npos ? std::string_view{} : v.substr(comma + 1);
      while (!hop.empty() && (hop.front() == ' ' || hop.front() == '\t')) hop.remove_prefix(1);
      while (!hop.empty() && (hop.back() == ' ' || hop.back() == '\t')) hop.remove_suffix(1);
      hops.push_back(hop);
    }
  }
  for (auto it = hops.rbegin(); it != hops.rend(); ++it) {
    beast::error_code ec;
    const auto address = boost::asio::ip::make_address(std::string(it->substr(0, 64)), ec);
    if (ec) break;
    if (!ctx_.trusted_proxies.contains(address)) return client_address(address);
  }
  return slot_.client();
}

Origin HttpSession::origin() const {
  Origin o;
  o.owner = client_owner(ex_.client, ex_.key_id);
  return o;
}

// A job submission's origin, with its Idempotency-Key header; several are
// joined as HTTP joins a repeated field (", "), which no key can hold.
Origin HttpSession::job_origin(const Request& req) const {
  Origin o = origin();
  auto [first, last] = req.equal_range("Idempotency-Key");
  for (auto it = first; it != last; ++it) {
    if (o.idempotency_key)
      *o.idempotency_key += ", ";
    else
      o.idempotency_key.emplace();
    *o.idempotency_key += sv(it->value());
  }
  return o;
}

namespace {

// The header of `res` as Beast's serializer writes it, into `out`.
template <class Body>
void serialize_header(http::response<Body>& res, std::string& out) {
  http::response_serializer<Body> sr{res};
  sr.split(true);  // stop after the header
  out.clear();
  beast::error_code ec;
  while (!sr.is_header_done()) {
    sr.next(ec, [&](beast::error_code&, const auto& buffers) {
      size_t n = 0;  // one walk over the serializer's buffer sequence
      for (auto it = net::buffer_sequence_begin(buffers); it != net::buffer_sequence_end(buffers);
           ++it) {
        const net::const_buffer b = *it;
        out.append(static_cast<const char*>(b.data()), b.size());
        n += b.size();
      }
      sr.consume(n);
    });
    if (ec) throw beast::system_error(ec);
  }
}

bool header_safe(std::string_view s) { return s.find_first_of("\r\n") == std::string_view::npos; }

// A header from elsewhere (a Reply's, access control's): never one that
// would split the response.
template <class Fields>
void set_header(Fields& fields, std::string_view name, std::string_view value) {
  if (!name.empty() && header_safe(name) && header_safe(value)) fields.set(name, value);
}

}  // namespace

void HttpSession::send_body(int status, std::string_view content_type,
                            std::shared_ptr<const std::string> body, const Headers& headers) {
  const auto set_fields = [&](auto& res) {
    res.set(http::field::content_type, content_type);
    for (const auto& [k, v] : headers) set_header(res, k, v);
    res.content_length(body->size());
  };
  if (ex_.method == "HEAD") {  // the header of the GET, without its body
    http::response<http::empty_body> res{static_cast<http::status>(status), ex_.version};
    set_fields(res);
    return send(std::move(res));
  }
  // The same answer as the last one on this connection (a client asking
  // the same thing again) goes out behind the header Beast wrote for it.
  const bool keep_alive = ex_.keep_alive && !stopping_;
  const bool reusable = ex_.extra.empty();
  if (reusable && last_head_.body == body && last_head_.status == status &&
      last_head_.keep_alive == keep_alive && last_head_.version == ex_.version &&
      last_head_.content_type == content_type && last_head_.headers == headers) {
    ex_.ticket.reset();
    ex_.slot.reset();
    const net::const_buffer view = net::buffer(*body);  // before body is moved
    return write_head_and_body(view, last_head_.close_after, status, std::move(body));
  }
  // The body views the string, kept alive by send() until it is written.
  http::response<http::span_body<const char>> res{static_cast<http::status>(status), ex_.version};
  set_fields(res);
  res.body() = {body->data(), body->size()};
  // With its length set, a response needs the end of the connection
  // exactly when it does not keep it alive (Beast's need_eof()).
  const bool close_after = !keep_alive;
  send(std::move(res), body);
  if (!reusable) return;
  last_head_.body = std::move(body);
  last_head_.status = status;
  last_head_.keep_alive = keep_alive;
  last_head_.version = ex_.version;
  last_head_.close_after = close_after;
  last_head_.content_type.assign(content_type);
  last_head_.headers = headers;
}

void HttpSession::reply_error(int status, std::string code, std::string message, Headers headers) {
  Reply r = error_reply(status, std::move(code), std::move(message));
  for (auto& h : headers) r.headers.push_back(std::move(h));
  reply(std::move(r));
}

template <class Message>
void HttpSession::stamp(Message& res, bool keep_alive) {
  res.set(http::field::server, "kibitz");
  for (auto& [k, v] : ex_.extra) set_header(res, k, v);
  res.keep_alive(keep_alive);
}

// A body in memory (or none) goes out in one write of two buffers: the
// header, made by Beast's serializer into a buffer the session reuses, and
// the body where it already is. Cheaper than http::async_write, whose
// buffer sequences are walked again on every step; a file body is streamed
// by http::async_write.
template <class Body>
void HttpSession::send(http::response<Body>&& res, std::shared_ptr<const void> keep) {
  ex_.ticket.reset();
  ex_.slot.reset();
  stamp(res, ex_.keep_alive && !stopping_);
  const int status = static_cast<int>(res.result_int());
  ex_.answering = true;
  stream_.expires_after(std::chrono::milliseconds(ctx_.config.idle_timeout_ms));
  if constexpr (std::is_same_v<Body, http::empty_body> ||
                std::is_same_v<Body, http::span_body<const char>>) {
    last_head_.body.reset();  // head_ is about to hold another header
    serialize_header(res, head_);
    net::const_buffer body;
    if constexpr (!std::is_same_v<Body, http::empty_body>) body = net::buffer(res.body());
    write_head_and_body(body, res.need_eof(), status, std::move(keep));
  } else {
    auto msg = std::make_shared<http::response<Body>>(std::move(res));
    http::async_write(stream_, *msg,
                      [self = shared_from_this(), msg, keep = std::move(keep), status](
                          beast::error_code ec, size_t n) {
                        self->contain("write",
                                      [&] { self->on_written(ec, n, msg->need_eof(), status); });
                      });
  }
}

void HttpSession::write_head_and_body(net::const_buffer body, bool close_after, int status,
                                      std::shared_ptr<const void> keep) {
  ex_.answering = true;
  stream_.expires_after(std::chrono::milliseconds(ctx_.config.idle_timeout_ms));
  const std::array<net::const_buffer, 2> buffers{net::buffer(head_), body};
  net::async_write(stream_, buffers,
                   [self = shared_from_this(), keep = std::move(keep), close_after, status](
                       beast::error_code ec, size_t n) {
                     self->contain("write", [&] { self->on_written(ec, n, close_after, status); });
                   });
}

void HttpSession::on_written(beast::error_code ec, size_t bytes, bool close_after, int status) {
  stream_.expires_never();
  finish_exchange(status, bytes);
  if (ec || close_after || stopping_) return close();
  read_request();
}

void HttpSession::on_exception(const char* where, const char* what) noexcept {
  try {
    spdlog::error("http {} {} {} (request {}, route {}): exception in {}: {}", ip_,
                  loggable(ex_.method, 16), loggable_target(ex_.target), ex_.seq, ex_.route.name,
                  where, loggable(what));
    if (ex_.ticket) ex_.ticket->cancel();
    ex_.ticket.reset();
    ex_.slot.reset();
    if (busy_ && !closed_ && !ex_.answering) {
      // Nothing of the answer has gone out: the client gets a 500. After a
      // request handler the connection is in a known state and goes on;
      // after a failure in reading or writing it closes.
      ex_.stream.reset();
      if (std::string_view(where) != "request") ex_.keep_alive = false;
      return reply_error(500, "internal", "internal error: " + loggable(what));
    }
    if (busy_) finish_exchange(500, 0);
    close();
  } catch (...) {
    // Even the 500 failed: drop the connection, keep the process.
    beast::error_code ec;
    stream_.socket().close(ec);
  }
}

void HttpSession::finish_exchange(int status, uint64_t bytes) {
  self_.reset();  // called from handlers that hold their own reference
  if (!busy_) return;
  busy_ = false;
  const double seconds = seconds_since(ex_.start);
  ctx_.api.metrics().observe_request(ex_.route.name, ex_.method, status, seconds);
  if (!spdlog::should_log(spdlog::level::info)) return;
  spdlog::info("http {} {} {} {} {}B {:.1f}ms{}{}", ip_, loggable(ex_.method, 16),
               loggable_target(ex_.target), status, bytes, seconds * 1e3,
               ex_.key_id.empty() ? "" : " key=", ex_.key_id);
}

}  // namespace kibitz::server
