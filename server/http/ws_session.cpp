#include "ws_session.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "client_id.h"

namespace kibitz::server {

namespace {

constexpr size_t kMaxIdLength = 64;

access_detail::RateSpec connection_rate(const Config& config) {
  const double rate = std::max(1, config.ws_messages_per_second);
  return {rate, rate};  // a second's worth at once
}

}  // namespace

WsSession::WsSession(Stream&& stream, ServerContext& ctx, std::string ip, std::string client,
                     std::string key_id, Headers extra, ConnectionSlot slot,
                     ConnectionSlot key_slot)
    : ctx_(ctx),
      ws_(std::move(stream)),
      ip_(std::move(ip)),
      slot_(std::move(slot)),
      key_slot_(std::move(key_slot)),
      client_(std::move(client)),
      key_id_(std::move(key_id)),
      extra_(std::move(extra)),
      rate_(connection_rate(ctx_.config)),
      bucket_(rate_, SteadyClock::now()),
      idle_timer_(ws_.get_executor()) {}

WsSession::~WsSession() {
  for (auto& [id, search] : searches_)
    if (search.ticket) search.ticket->cancel();
  if (open_) ctx_.api.metrics().ws_connection_closed();
  ctx_.sessions.remove(this);
}

void WsSession::start(http::request<http::string_body>&& req) {
  ctx_.sessions.add(this, weak_from_this());
  // The WebSocket layer has its own timeouts (handshake, idle with pings).
  beast::get_lowest_layer(ws_).expires_never();
  // Handshake within the read timeout; a silent peer is pinged and dropped
  // after the idle timeout.
  websocket::stream_base::timeout timeouts{};
  timeouts.handshake_timeout = std::chrono::milliseconds(ctx_.config.read_timeout_ms);
  timeouts.idle_timeout = std::chrono::milliseconds(ctx_.config.idle_timeout_ms);
  timeouts.keep_alive_pings = true;
  ws_.set_option(timeouts);
  ws_.set_option(websocket::stream_base::decorator([extra = extra_](websocket::response_type& res) {
    res.set(http::field::server, "kibitz");
    for (auto& [k, v] : extra) res.set(k, v);
  }));
  ws_.read_message_max(ctx_.config.ws_max_message_bytes);
  ws_.auto_fragment(false);
  auto self = shared_from_this();
  ws_.async_accept(req, [self](beast::error_code ec) {
    self->contain("handshake", [&] { self->on_accept(ec); });
  });
}

void WsSession::on_accept(beast::error_code ec) {
  if (ec) {
    spdlog::debug("ws {}: handshake failed: {}", ip_, ec.message());
    return;
  }
  open_ = true;
  ctx_.api.metrics().ws_connection_opened();
  // A close asked for while the handshake was going on (shutdown began, or
  // a failure) goes out now that the connection is open: never dropped
  // without a close frame.
  if (pending_close_) return send_close(*pending_close_);
  // A session started after shutdown walked the sessions closes itself.
  if (ctx_.stopping) return close_with(websocket::close_code::going_away, "shutting down");
  last_heard_ = SteadyClock::now();
  watch_idle();
  read();
}

void WsSession::watch_idle() {
  const auto idle = std::chrono::milliseconds(ctx_.config.idle_timeout_ms);
  // While a search runs the client is waiting for it, not idle: looked at
  // again a whole timeout later.
  idle_timer_.expires_at(searches_.empty() ? last_heard_ + idle : SteadyClock::now() + idle);
  // Weak: a connection that ends is not kept (nor its connection slot held)
  // until the timer fires.
  idle_timer_.async_wait([weak = weak_from_this()](beast::error_code ec) {
    if (ec) return;
    if (auto self = weak.lock()) self->contain("idle", [&] { self->on_idle_check(); });
  });
}

void WsSession::on_idle_check() {
  if (closing_) return;
  const auto idle = std::chrono::milliseconds(ctx_.config.idle_timeout_ms);
  if (searches_.empty() && SteadyClock::now() - last_heard_ >= idle) {
    spdlog::debug("ws {}: closed after {} ms without a message", ip_, ctx_.config.idle_timeout_ms);
    return close_with(websocket::close_code::normal, "idle timeout");
  }
  watch_idle();
}

void WsSession::shutdown() {
  net::post(ws_.get_executor(), [self = shared_from_this()] {
    self->contain("shutdown",
                  [&] { self->close_with(websocket::close_code::going_away, "shutting down"); });
  });
}

void WsSession::read() {
  if (reading_ || closing_) return;
  // Backpressure: a client that does not read its answers is not read either.
  if (outbox_.size() >= kMaxQueued) return;
  reading_ = true;
  ws_.async_read(buffer_, [self = shared_from_this()](beast::error_code ec, size_t n) {
    self->contain("read", [&] { self->on_read(ec, n); });
  });
}

void WsSession::on_read(beast::error_code ec, size_t) {
  reading_ = false;
  if (ec) {
    // Closed by the peer, by us, or a protocol violation that Beast answered
    // with its own close code (1009 too big, 1007 bad UTF-8): in every case
    // the searches of this connection stop.
    if (ec != websocket::error::closed && ec != net::error::operation_aborted)
      spdlog::info("ws {}: connection ended: {}", ip_, ec.message());
    closing_ = true;
    cancel_all();
    return;
  }
  const std::string text = beast::buffers_to_string(buffer_.data());
  buffer_.consume(buffer_.size());
  last_heard_ = SteadyClock::now();
  int retry_after_s = 0;
  std::string refused;
  if (!ws_.got_text()) {
    send_error(nullptr, "invalid_request", "messages must be JSON text frames");
  } else if (refused = charge_message(&retry_after_s); !refused.empty()) {
    ++strikes_;
    if (strikes_ > std::max(1, ctx_.config.ws_messages_per_second)) {
      ctx_.ws_flooders.note(client_owner(client_, key_id_));
      return close_with(websocket::close_code::policy_error, "too many messages");
    }
    send_error(nullptr, "rate_limited", refused, retry_after_s);
  } else {
    // An accepted message takes back one refusal only: a client that keeps
    // sending over the limit is closed however fast this server reads (a
    // slow reader refills tokens between the messages of a flood).
    strikes_ = std::max(0, strikes_ - 1);
    // A message whose handling throws is answered with an internal error
    // for its id; the connection reads on.
    handling_id_ = nullptr;
    contain("message", [&] { handle_message(text); });
  }
  read();
}

std::string WsSession::charge_message(int* retry_after_s) {
  bucket_.refill(rate_, SteadyClock::now());
  if (!bucket_.has_token()) {
    *retry_after_s = bucket_.retry_after_s(rate_);
    return "more than " + std::to_string(ctx_.config.ws_messages_per_second) +
           " messages per second on this connection";
  }
#if KIBITZ_HAVE_ACCESS
  // The client's own rate, shared with its HTTP requests and its other
  // connections: a refused message takes no token from either bucket.
  if (ctx_.access) {
    AccessDecision d = ctx_.access->charge(key_id_, client_);
    if (!d.allowed) {
      *retry_after_s = std::max(1, d.retry_after_s);
      return d.message;
    }
  }
#endif
  bucket_.take();
  return {};
}

void WsSession::handle_message(std::string_view text) {
  auto parsed = parse_body(text, ctx_.config);
  if (!parsed) return send_reply_error(nullptr, parsed.error());
  nlohmann::json& msg = *parsed;
  if (!msg.is_object()) return send_error(nullptr, "invalid_request", "a message is a JSON object");
  nlohmann::json id_json = msg.contains("id") ? msg["id"] : nlohmann::json(nullptr);
  const auto type_it = msg.find("type");
  if (type_it == msg.end() || !type_it->is_string())
    return send_error(id_json, "invalid_request", "\"type\" must be a string");
  const std::string type = type_it->get<std::string>();
  if (type != "analyze" && type != "stop" && type != "annotate")
    return send_error(
        id_json, "invalid_request",
        "unknown message type \"" + type.substr(0, 32) + "\" (analyze, stop or annotate)");
  if (!id_json.is_string() || id_json.get_ref<const std::string&>().empty() ||
      id_json.get_ref<const std::string&>().size() > kMaxIdLength) {
    return send_error(id_json.is_string() ? id_json : nlohmann::json(nullptr), "invalid_request",
                      "\"id\" must be a non-empty string of at most " +
                          std::to_string(kMaxIdLength) + " characters");
  }
  const std::string id = id_json.get<std::string>();
  handling_id_ = id;
  if (type == "stop") return stop_search(id);
  msg.erase("type");
  msg.erase("id");
  start_search(id, type == "annotate", std::move(msg));
}

void WsSession::start_search(const std::string& id, bool annotate, nlohmann::json request) {
  if (ctx_.stopping) return send_error(id, "shutting_down", "the server is shutting down");
  std::shared_ptr<void> slot;
#if KIBITZ_HAVE_ACCESS
  if (ctx_.access) {
    AccessDecision d = ctx_.access->authorize(key_id_, annotate ? "annotate" : "analyze");
    if (!d.allowed) return send_error(id, d.code, d.message);
  }
#endif
  // A new search with a running id replaces it: the old one is cancelled and
  // nothing more of it is sent.
  if (auto it = searches_.find(id); it != searches_.end()) {
    if (it->second.ticket) it->second.ticket->cancel();
    outbox_.drop(id, it->second.gen);
    searches_.erase(it);
  }
  const size_t cap = static_cast<size_t>(std::max(1, ctx_.config.ws_max_searches_per_connection));
  if (searches_.size() >= cap) {
    return send_error(
        id, "rate_limited",
        "at most " + std::to_string(cap) + " searches at once on one connection; stop one first");
  }
#if KIBITZ_HAVE_ACCESS
  if (auto d = ctx_.take_search_slot(key_id_, client_, slot))
    return send_error(id, d->code, d->message, d->retry_after_s);
#endif
  const uint64_t gen = ++next_gen_;
  auto weak = weak_from_this();
  auto gate = ctx_.gate;
  Reporter cb;
  Caller caller;
  caller.owner = client_owner(client_, key_id_);
  caller.allow_infinite = !annotate;
  const char* update_type = annotate ? "progress" : "info";
  const char* final_type = annotate ? "review" : "bestmove";
  cb.on_progress = [weak, gate, id, gen, update_type](nlohmann::json j) {
    std::string text;
    try {
      j["type"] = update_type;
      j["id"] = id;
      text = to_wire(j);  // serialised on the search thread
    } catch (const std::exception& e) {
      spdlog::error("ws search {}: a progress message could not be made: {}", loggable(id),
                    e.what());
      return;  // one update less; the final message still comes
    }
    post_to(weak, gate, [id, gen, text = std::move(text)](WsSession& s) mutable {
      s.on_update(id, gen, std::move(text));
    });
  };
  cb.on_done = [weak, gate, id, gen, final_type](Reply r) {
    std::string text;
    try {
      nlohmann::json j;
      if (r.ok()) {
        j = std::move(r.json_body());
        j["type"] = final_type;
        j["id"] = id;
      } else {
        j = {{"type", "error"}, {"id", id}, {"error", r.error()}};
      }
      text = to_wire(j);
    } catch (const std::exception& e) {
      spdlog::error("ws search {}: the final message could not be made: {}", loggable(id),
                    e.what());
      text = to_wire({{"type", "error"},
                      {"id", id},
                      {"error", {{"code", "internal"}, {"message", "internal error"}}}});
    }
    post_to(weak, gate, [id, gen, text = std::move(text)](WsSession& s) mutable {
      s.on_done(id, gen, std::move(text));
    });
  };
  // Callbacks are posted, never run inline, so the entry made after the
  // call exists before any of them is handled even when the answer is
  // immediate; a call that throws leaves no entry behind.
  auto ticket = annotate ? ctx_.api.annotate_stream(request, caller, std::move(cb))
                         : ctx_.api.analyze(request, caller, std::move(cb));
  Search& search = searches_[id];
  search.gen = gen;
  search.slot = std::move(slot);
  search.ticket = std::move(ticket);
}

void WsSession::on_update(const std::string& id, uint64_t gen, std::string text) {
  auto it = searches_.find(id);
  if (closing_ || it == searches_.end() || it->second.gen != gen) return;
  outbox_.push(id, gen, Outbox::Kind::update, std::make_shared<const std::string>(std::move(text)));
  write();
}

void WsSession::on_done(const std::string& id, uint64_t gen, std::string text) {
  auto it = searches_.find(id);
  if (it == searches_.end() || it->second.gen != gen) return;
  searches_.erase(it);
  last_heard_ = SteadyClock::now();  // idle from when the client has its answer
  if (closing_) return;
  outbox_.push(id, gen, Outbox::Kind::kept, std::make_shared<const std::string>(std::move(text)));
  write();
}

void WsSession::stop_search(const std::string& id) {
  // The search ends with its bestmove (the best found so far). A stop for
  // an id that already finished is not an error: the two crossed.
  if (auto it = searches_.find(id); it != searches_.end() && it->second.ticket)
    it->second.ticket->cancel();
}

void WsSession::send_error(const nlohmann::json& id, const std::string& code,
                           const std::string& message, int retry_after_s) {
  nlohmann::json j = {
      {"type", "error"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
  if (retry_after_s > 0) j["error"]["retry_after_s"] = retry_after_s;
  outbox_.push("", 0, Outbox::Kind::kept, std::make_shared<const std::string>(to_wire(j)));
  write();
}

void WsSession::send_reply_error(const nlohmann::json& id, const Reply& reply) {
  const auto& e = reply.body.contains("error") ? reply.body["error"] : nlohmann::json::object();
  send_error(id, e.value("code", "invalid_request"), e.value("message", "invalid message"));
}

void WsSession::write() {
  if (closing_) return;
  auto text = outbox_.start_write();
  if (!text) return;
  ws_.text(true);
  ws_.async_write(net::buffer(*text),
                  [self = shared_from_this(), text](beast::error_code ec, size_t n) {
                    self->contain("write", [&] { self->on_write(ec, n); });
                  });
}

void WsSession::on_write(beast::error_code ec, size_t) {
  outbox_.finish_write();
  if (ec) {
    closing_ = true;
    cancel_all();
    return;
  }
  write();
  read();  // resumes reading if backpressure paused it
}

void WsSession::on_exception(const char* where, const char* what) noexcept {
  try {
    spdlog::error("ws {} (message id {}): exception in {}: {}", ip_,
                  handling_id_.is_string() ? loggable(handling_id_.get<std::string>()) : "null",
                  where, loggable(what));
    if (std::string_view(where) == "message") {
      // The message is answered; the connection goes on.
      send_error(handling_id_, "internal", "internal error: " + loggable(what));
      return;
    }
    // In the transport itself: this connection's state is not known to be
    // sound, so it ends (1011); the others go on.
    close_with(websocket::close_code::internal_error, "internal error");
  } catch (...) {
    closing_ = true;
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().close(ec);
  }
}

void WsSession::cancel_all() {
  idle_timer_.cancel();
  for (auto& [id, search] : searches_)
    if (search.ticket) search.ticket->cancel();
  searches_.clear();
}

void WsSession::close_with(websocket::close_code code, const char* reason) {
  if (closing_) return;
  closing_ = true;
  cancel_all();
  // In the handshake: the close frame follows it (on_accept).
  if (!open_) {
    pending_close_ = websocket::close_reason(code, reason);
    return;
  }
  send_close(websocket::close_reason(code, reason));
}

void WsSession::send_close(const websocket::close_reason& reason) {
  ws_.async_close(reason, [self = shared_from_this()](beast::error_code) {});
}

}  // namespace kibitz::server
