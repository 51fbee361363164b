// Accepts connections and starts an HttpSession on its own strand for each.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <string>

#include "beast.h"

namespace kibitz::server {

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  Listener(net::io_context& ioc, ServerContext& ctx);
  // Binds and listens; "" or an error message naming the address.
  std::string open(const std::string& address, int port);
  int port() const { return port_; }
  void start();
  void close();  // stops accepting (thread-safe: posts)

 private:
  void accept();
  net::io_context& ioc_;
  ServerContext& ctx_;
  tcp::acceptor acceptor_;
  net::steady_timer retry_;
  int port_ = 0;
};

}  // namespace kibitz::server
