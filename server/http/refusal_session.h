// A connection over a connection cap (ConnectionLimits): its request's
// header is read within a short time (kRefusalReadMs, at most
// read_timeout_ms) and answered, whatever it asks (a WebSocket upgrade
// too), with 429 too_many_connections (the client's cap) or 503 server_busy
// (the server's), Retry-After and "Connection: close"; then the connection
// closes. What the client sends after the header is read and dropped for
// as long, so that closing does not reset the connection before the client
// has read the answer. A client that sends nothing is closed after that
// time. Only ConnectionLimits::kMaxRefusing are answered at once (and
// kMaxRefusingPerClient of one client); beyond them a connection over a cap
// is closed at accept.
//
// GET or HEAD /healthz is answered 200 as ever, even over a cap: a liveness
// probe must not fail (and restart the process) because clients hold every
// connection. /readyz gets the 503: the instance takes no more for now.
#pragma once

#include <memory>

#include "beast.h"
#include "connection_limits.h"

namespace kibitz::server {

class RefusalSession : public std::enable_shared_from_this<RefusalSession> {
 public:
  static constexpr int kRefusalReadMs = 2000;
  static constexpr int kRetryAfterS = 1;
  // Takes the socket; begin_refusal(client) has been counted,
  // end_refusal(client) is called when this session ends.
  RefusalSession(Socket&& socket, ServerContext& ctx, ConnectionLimits::Refusal why,
                 std::string client);
  ~RefusalSession();
  void start();

 private:
  void on_header(beast::error_code ec);
  void drain();

  ServerContext& ctx_;
  Stream stream_;
  ConnectionLimits::Refusal why_;
  std::string client_;
  beast::flat_buffer buffer_;
  http::request_parser<http::empty_body> parser_;
  http::response<http::string_body> res_;
  std::array<char, 4096> sink_{};
};

}  // namespace kibitz::server
