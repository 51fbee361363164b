// The HTTP + WebSocket server: an io_context on Config::io_threads threads
// (apart from the search threads, so it answers while every core searches),
// a listener, and one session per connection.
//
//   Server server(api, access, config);
//   auto port = server.listen();      // port 0: the system picks one
//   server.handle_signals();          // SIGINT/SIGTERM -> stop()
//   server.run();                     // until stop(); then a graceful shutdown
//
// Shutdown: stop accepting, Api::shutdown() (refuse new work, cancel every
// search), close WebSockets with 1001 and idle connections at once, let
// answers in progress go out, and give up on stragglers after a grace period.
#pragma once

#include <memory>
#include <string>

#include "common/expected.h"
#include "server/api/api.h"
#include "server/api/config.h"

namespace kibitz::server {

class AccessControl;

class Server {
 public:
  // `access` may be null (everything allowed); it must outlive the server.
  // config.web_root "" means <dir of the executable>/web.
  Server(Api& api, AccessControl* access, const Config& config);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds config.address:config.port; the port it listens on.
  Expected<int, std::string> listen();
  void handle_signals();
  // Blocks until stop(), then shuts down (at most ~3 s).
  void run();
  void stop();  // thread-safe

  const std::string& web_root() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kibitz::server
