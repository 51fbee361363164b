#include "http_session.h"

#include <spdlog/spdlog.h>

#include <optional>

#include <boost/asio/write.hpp>

#include "client_id.h"
#include "ws_session.h"

namespace kibitz::server {

namespace {

constexpr size_t kIdleReadChunk = 4096;

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
  Caller o;
  o.owner = client_owner(request_client(head), key_id);
  if (big && ctx_.api.bulk_full(o.owner)) return bulk_full_reply();
  return ctx_.api.refused_early(kind, o, keyed);
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

Caller HttpSession::caller() const {
  Caller o;
  o.owner = client_owner(ex_.client, ex_.key_id);
  return o;
}

// A job submission's caller, with its Idempotency-Key header; several are
// joined as HTTP joins a repeated field (", "), which no key can hold.
Caller HttpSession::job_caller(const Request& req) const {
  Caller o = caller();
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
