#include "server.h"

#include <spdlog/spdlog.h>

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <condition_variable>
#include <optional>
#include <thread>
#include <vector>

#include "beast.h"
#include "common/thread_slice.h"
#include "listener.h"
#include "static_files.h"

namespace kibitz::server {

namespace {
// Answers in progress get this long to go out once shutdown starts.
constexpr auto kGracePeriod = std::chrono::milliseconds(3000);
constexpr auto kIoSlice = std::chrono::microseconds(100);
}  // namespace

// Runs an I/O thread's io_context until it is stopped. Every handler
// contains its own exceptions; one that still escapes is logged and the
// loop goes on (run() may be called again after a handler threw), so one
// connection's failure never ends the process.
static void run_contained(net::io_context& ioc) {
  // The shortest slice the kernel grants: a request wakes this thread and
  // it preempts a search thread at once rather than after that thread's
  // slice (EEVDF). The search threads also run at a higher nice value.
  (void)set_thread_slice(kIoSlice);
  for (;;) {
    try {
      ioc.run();
      return;
    } catch (const std::exception& e) {
      spdlog::error("I/O thread: an exception escaped a handler: {}", e.what());
    } catch (...) {
      spdlog::error("I/O thread: an exception of unknown type escaped a handler");
    }
  }
}

static std::vector<std::unique_ptr<net::io_context>> make_contexts(int n) {
  std::vector<std::unique_ptr<net::io_context>> v;
  for (int i = 0; i < std::max(1, n); ++i) v.push_back(std::make_unique<net::io_context>(1));
  return v;
}

struct Server::Impl {
  Impl(Api& api, AccessControl* access, const Config& config)
      : ctx{api, access, config}, contexts(make_contexts(config.io_threads)) {
    for (auto& c : contexts) work.push_back(net::make_work_guard(*c));
    ctx.web_root = config.web_root.empty() ? default_web_root() : canonical_root(config.web_root);
  }

  // Declared first, destroyed last: sessions that die with the io_context
  // still use it.
  ServerContext ctx;
  // One single-threaded io_context per I/O thread (concurrency hint 1).
  std::vector<std::unique_ptr<net::io_context>> contexts;
  std::vector<net::executor_work_guard<net::io_context::executor_type>> work;
  bool take_signals = false;
  std::atomic<bool> signals_done{false};
  std::shared_ptr<Listener> listener;
  std::mutex mutex;
  std::condition_variable cv;
  bool stop_requested = false;
};

Server::Server(Api& api, AccessControl* access, const Config& config)
    : impl_(std::make_unique<Impl>(api, access, config)) {}

Server::~Server() {
  // No search callback may reach the io_context once it is being destroyed.
  impl_->ctx.gate->close();
}

const std::string& Server::web_root() const { return impl_->ctx.web_root; }

Expected<int, std::string> Server::listen() {
  // The connection caps, within what the descriptor limit allows.
  std::string note;
  const size_t cap = connection_cap_for_fd_limit(impl_->ctx.config.max_connections, &note);
  if (cap < impl_->ctx.config.max_connections)
    spdlog::warn("{}", note);
  else if (!note.empty())
    spdlog::info("{}", note);
  impl_->ctx.connections.configure(cap, impl_->ctx.config.max_connections_per_client,
                                   impl_->ctx.config.max_websockets_per_client);
  std::vector<net::io_context*> contexts;
  for (auto& c : impl_->contexts) contexts.push_back(c.get());
  impl_->listener = std::make_shared<Listener>(std::move(contexts), impl_->ctx);
  const std::string error =
      impl_->listener->open(impl_->ctx.config.address, impl_->ctx.config.port);
  if (!error.empty()) return Unexpected(error);
  return impl_->listener->port();
}

static sigset_t shutdown_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

void Server::block_shutdown_signals() {
  const sigset_t set = shutdown_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void Server::handle_signals() {
  block_shutdown_signals();  // this thread too, in case the caller did not
  impl_->take_signals = true;
}

// Taken synchronously rather than by an asynchronous handler (Asio's
// signal_set), which runs on whichever thread the kernel picks: under
// ThreadSanitizer a SIGTERM was seen never to reach it, the server searching
// on with its I/O threads idle and no "shutting down" in its log (CI's TSan
// stage; here once in about 800 starts). Returns when a signal came or run()
// is over.
static void take_signals(Server& server, const std::atomic<bool>& done) {
  const sigset_t set = shutdown_signals();
  const timespec slice{0, 100'000'000};  // how soon it sees `done`
  while (!done.load(std::memory_order_acquire)) {
    const int signal = sigtimedwait(&set, nullptr, &slice);
    if (signal == SIGINT || signal == SIGTERM) {
      spdlog::info("signal {}: shutting down", signal);
      server.stop();
      return;
    }
  }
}

void Server::stop() {
  std::lock_guard lock(impl_->mutex);
  impl_->stop_requested = true;
  impl_->cv.notify_all();
}

void Server::run() {
  Impl& m = *impl_;
  if (m.listener) m.listener->start();
  std::vector<std::thread> threads;
  for (auto& c : m.contexts) threads.emplace_back([&ioc = *c] { run_contained(ioc); });
  std::thread signals;
  if (m.take_signals) signals = std::thread([this, &m] { take_signals(*this, m.signals_done); });
  {
    std::unique_lock lock(m.mutex);
    m.cv.wait(lock, [&] { return m.stop_requested; });
  }
  const auto started = SteadyClock::now();
  m.ctx.stopping = true;
  if (m.listener) m.listener->close();
  m.signals_done.store(true, std::memory_order_release);
  m.ctx.api.shutdown();  // returns once running work had its drain_ms
  // The grace for answers in progress starts after the drain: an analysis
  // that ended in the drain's last moment still has all of it to go out,
  // and a WebSocket its close frame.
  const auto drained = SteadyClock::now();
  m.ctx.sessions.for_each([](Session& s) { s.shutdown(); });
  while (m.ctx.sessions.size() > 0 && SteadyClock::now() - drained < kGracePeriod)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (const size_t left = m.ctx.sessions.size())
    spdlog::warn("shutdown: {} connection(s) still open after the grace period", left);
  m.work.clear();
  for (auto& c : m.contexts) c->stop();
  for (auto& t : threads) t.join();
  m.ctx.gate->close();
  if (signals.joinable()) signals.join();  // within its 100 ms slice
  spdlog::info("stopped after {:.0f} ms", seconds_since(started) * 1e3);
}

}  // namespace kibitz::server
