#include "server.h"

#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
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
      : ctx{api, access, config},
        contexts(make_contexts(config.io_threads)),
        signals(*contexts.front()) {
    for (auto& c : contexts) work.push_back(net::make_work_guard(*c));
    ctx.web_root = config.web_root.empty() ? default_web_root() : canonical_root(config.web_root);
  }

  // Declared first, destroyed last: sessions that die with the io_context
  // still use it.
  ServerContext ctx;
  // One single-threaded io_context per I/O thread (concurrency hint 1).
  std::vector<std::unique_ptr<net::io_context>> contexts;
  std::vector<net::executor_work_guard<net::io_context::executor_type>> work;
  net::signal_set signals;
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
  std::vector<net::io_context*> contexts;
  for (auto& c : impl_->contexts) contexts.push_back(c.get());
  impl_->listener = std::make_shared<Listener>(std::move(contexts), impl_->ctx);
  const std::string error =
      impl_->listener->open(impl_->ctx.config.address, impl_->ctx.config.port);
  if (!error.empty()) return Unexpected(error);
  return impl_->listener->port();
}

void Server::handle_signals() {
  impl_->signals.add(SIGINT);
  impl_->signals.add(SIGTERM);
  impl_->signals.async_wait([this](beast::error_code ec, int signal) {
    if (ec) return;
    spdlog::info("signal {}: shutting down", signal);
    stop();
  });
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
  {
    std::unique_lock lock(m.mutex);
    m.cv.wait(lock, [&] { return m.stop_requested; });
  }
  const auto started = SteadyClock::now();
  m.ctx.stopping = true;
  if (m.listener) m.listener->close();
  beast::error_code ec;
  m.signals.cancel(ec);
  m.ctx.api.shutdown();
  m.ctx.sessions.for_each([](Session& s) { s.shutdown(); });
  while (m.ctx.sessions.size() > 0 && SteadyClock::now() - started < kGracePeriod)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (const size_t left = m.ctx.sessions.size())
    spdlog::warn("shutdown: {} connection(s) still open after the grace period", left);
  m.work.clear();
  for (auto& c : m.contexts) c->stop();
  for (auto& t : threads) t.join();
  m.ctx.gate->close();
  spdlog::info("stopped after {:.0f} ms", seconds_since(started) * 1e3);
}

}  // namespace kibitz::server
