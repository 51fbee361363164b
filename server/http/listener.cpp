#include "listener.h"

#include <spdlog/spdlog.h>

#include "client_id.h"
#include "http_session.h"
#include "refusal_session.h"

namespace kibitz::server {

Listener::Listener(std::vector<net::io_context*> contexts, ServerContext& ctx)
    : contexts_(std::move(contexts)),
      ctx_(ctx),
      acceptor_(*contexts_.front()),
      retry_(acceptor_.get_executor()) {}

std::string Listener::open(const std::string& address, int port) {
  beast::error_code ec;
  const auto ip = net::ip::make_address(address, ec);
  if (ec) return "invalid address \"" + address + "\": " + ec.message();
  if (port < 0 || port > 65535) return "invalid port " + std::to_string(port);
  const tcp::endpoint endpoint{ip, static_cast<unsigned short>(port)};
  const auto where = address + ":" + std::to_string(port);
  acceptor_.open(endpoint.protocol(), ec);
  if (ec) return "cannot open a socket for " + where + ": " + ec.message();
  acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  acceptor_.bind(endpoint, ec);
  if (ec) return "cannot bind " + where + ": " + ec.message();
  acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return "cannot listen on " + where + ": " + ec.message();
  port_ = acceptor_.local_endpoint(ec).port();
  return {};
}

void Listener::start() {
  net::dispatch(acceptor_.get_executor(), [self = shared_from_this()] { self->accept(); });
}

void Listener::close() {
  net::post(acceptor_.get_executor(), [self = shared_from_this()] {
    beast::error_code ec;
    self->acceptor_.close(ec);
    self->retry_.cancel();
  });
}

void Listener::accept() {
  // Each I/O thread runs its own io_context, so a connection's handlers all
  // run on one thread, one at a time: the context is the connection's strand,
  // without the locking of a context shared by several threads.
  net::io_context& target = *contexts_[next_++ % contexts_.size()];
  acceptor_.async_accept(target, [self = shared_from_this()](beast::error_code ec, Socket s) {
    if (ec == net::error::operation_aborted || !self->acceptor_.is_open()) return;
    if (ec) {
      // E.g. out of file descriptors: back off instead of spinning.
      spdlog::warn("accept: {}", ec.message());
      self->retry_.expires_after(std::chrono::milliseconds(50));
      self->retry_.async_wait([self](beast::error_code wec) {
        if (!wec) self->accept();
      });
      return;
    }
    try {
      self->admit(std::move(s));
    } catch (const std::exception& e) {  // e.g. out of memory: this connection is dropped
      spdlog::error("accept: a connection could not be started: {}", e.what());
    } catch (...) {
      spdlog::error("accept: a connection could not be started: an exception of unknown type");
    }
    self->accept();
  });
}

// Counts the connection against its client's cap and the server's; over
// either it is answered by a RefusalSession (or, when too many refusals are
// under way, closed at once) and never becomes a session.
void Listener::admit(Socket&& socket) {
  beast::error_code ec;
  const auto remote = socket.remote_endpoint(ec);
  if (ec) return;  // already gone
  ConnectionLimits::Refusal why{};
  std::string client = client_address(remote.address());
  ConnectionSlot slot = ctx_.connections.admit(client, &why);
  if (slot.held()) {
    std::make_shared<HttpSession>(std::move(socket), ctx_, std::move(slot))->start();
    return;
  }
  spdlog::debug("accept: {} refused: {}", remote.address().to_string(),
                why == ConnectionLimits::Refusal::per_client ? "too many connections from it"
                                                             : "too many connections");
  if (!ctx_.connections.begin_refusal(client)) return;  // closed as `socket` goes
  std::shared_ptr<RefusalSession> refusal;
  try {
    refusal = std::make_shared<RefusalSession>(std::move(socket), ctx_, why, client);
  } catch (...) {
    ctx_.connections.end_refusal(client);  // the session that would have ended it never was
    throw;
  }
  refusal->start();
}

}  // namespace kibitz::server
