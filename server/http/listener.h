// Accepts connections and starts an HttpSession for each, handing them out
// round-robin over the I/O threads' io_contexts; a connection over a
// connection cap (ConnectionLimits) gets a RefusalSession instead.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <string>
#include <vector>

#include "beast.h"

namespace kibitz::server {

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  // Accepts on contexts[0]; connections go to each context in turn.
  Listener(std::vector<net::io_context*> contexts, ServerContext& ctx);
  // Binds and listens; "" or an error message naming the address.
  std::string open(const std::string& address, int port);
  int port() const { return port_; }
  void start();
  void close();  // stops accepting (thread-safe: posts)

 private:
  void accept();
  void admit(Socket&& socket);
  std::vector<net::io_context*> contexts_;
  size_t next_ = 0;
  ServerContext& ctx_;
  tcp::acceptor acceptor_;
  net::steady_timer retry_;
  int port_ = 0;
};

}  // namespace kibitz::server
