#include "refusal_session.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace kibitz::server {

RefusalSession::RefusalSession(Socket&& socket, ServerContext& ctx, ConnectionLimits::Refusal why,
                               std::string client)
    : ctx_(ctx), stream_(std::move(socket)), why_(why), client_(std::move(client)) {}

RefusalSession::~RefusalSession() { ctx_.connections.end_refusal(client_); }

void RefusalSession::start() {
  parser_.header_limit(static_cast<std::uint32_t>(ctx_.config.max_header_bytes));
  stream_.expires_after(
      std::chrono::milliseconds(std::min(kRefusalReadMs, ctx_.config.read_timeout_ms)));
  http::async_read_header(
      stream_, buffer_, parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
}

void RefusalSession::on_header(beast::error_code ec) {
  // Silent, too slow or not HTTP: closed without an answer.
  if (ec) return;
  const auto& req = parser_.get();
  const auto target = req.target();
  const auto path = target.substr(0, target.find('?'));
  const bool head = req.method() == http::verb::head;
  const bool health = path == "/healthz" && (head || req.method() == http::verb::get);
  const bool per_client = why_ == ConnectionLimits::Refusal::per_client;
  nlohmann::json body;
  int status = 200;
  if (health) {
    body = {{"status", "ok"}};
  } else {
    status = per_client ? 429 : 503;
    std::string message =
        per_client
            ? "too many open connections from this address (at most " +
                  std::to_string(ctx_.connections.per_client_cap()) + "); close one or retry later"
            : "the server has as many open connections as it takes (" +
                  std::to_string(ctx_.connections.overall_cap()) + "); retry later";
    body = {{"error",
             {{"code", per_client ? "too_many_connections" : "server_busy"},
              {"message", std::move(message)}}}};
    res_.set(http::field::retry_after, std::to_string(kRetryAfterS));
  }
  res_.version(req.version() == 10 ? 10 : 11);
  res_.result(static_cast<http::status>(status));
  res_.set(http::field::server, "kibitz");
  res_.set(http::field::content_type, "application/json");
  res_.keep_alive(false);
  res_.body() = to_wire(body);
  res_.prepare_payload();
  if (head) res_.body().clear();  // the length of the GET's body, without it
  stream_.expires_after(std::chrono::milliseconds(kRefusalReadMs));
  http::async_write(stream_, res_, [self = shared_from_this()](beast::error_code wec, size_t) {
    if (wec) return;
    beast::error_code sec;
    self->stream_.socket().shutdown(tcp::socket::shutdown_send, sec);
    self->drain();
  });
}

// Reads what the client still sends (a body, a pipelined request) until it
// closes or the time is up: closing with unread bytes would send a reset,
// which can destroy the answer before the client has read it.
void RefusalSession::drain() {
  stream_.async_read_some(net::buffer(sink_),
                          [self = shared_from_this()](beast::error_code ec, size_t) {
                            if (!ec) self->drain();
                          });
}

}  // namespace kibitz::server
