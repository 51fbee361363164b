// The HTTP + WebSocket server: an io_context on Config::io_threads threads
// (apart from the search threads, so it answers while every core searches),
// a listener, and one session per connection.
//
//   Server::block_shutdown_signals(); // first, before any thread starts
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

  // Blocks SIGINT and SIGTERM in the calling thread, and so in every thread
  // it starts afterwards. Call it before any thread exists (search pool,
  // store, I/O): the signals then wait, pending, for the one thread that
  // takes them synchronously (handle_signals), so no signal handler ever
  // runs on a search or I/O thread, and one sent during start-up is taken
  // once the server runs.
  static void block_shutdown_signals();
  // Binds config.address:config.port; the port it listens on.
  Expected<int, std::string> listen();
  // run() takes SIGINT and SIGTERM (blocked by block_shutdown_signals) on a
  // thread of its own with sigtimedwait, and stops on the first.
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
