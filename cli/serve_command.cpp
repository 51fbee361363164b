// kibitz serve [--config FILE] [--address A] [--port N] ...
// Runs the analysis server until SIGINT/SIGTERM. Settings come from the
// embedded defaults (config/kibitz.json), then --config FILE, then KIBITZ_*
// environment variables, then these flags. With --port 0 the system picks a
// free port; the line "listening on ADDRESS:PORT" on stdout tells which.
#include <spdlog/spdlog.h>

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>
#include <thread>

#include "chess/syzygy.h"
#include "commands.h"
#include "engine/service.h"
#include "server/api/api.h"
#include "server/api/config.h"
#include "server/api/logging.h"
#include "server/http/server.h"

#if KIBITZ_HAVE_ACCESS
#include "server/access/access.h"
#endif

namespace kibitz::cli {

namespace {

struct ServeOptions {
  std::string config_file;
  std::optional<std::string> address, log_level, web_root;
  std::optional<int> port, io_threads, search_threads;
  std::optional<size_t> hash_chess, hash_draughts;
  int search_nice = 19;
  std::string search_policy = "nice";  // or "idle" (SCHED_IDLE), or "batch-idle"
};

int run_serve(const ServeOptions& o) {
  // Before any thread starts (logging, store, search pool, I/O): SIGINT and
  // SIGTERM then wait for the server's own thread to take them.
  server::Server::block_shutdown_signals();
  auto loaded = server::load_config(o.config_file);
  if (!loaded) {
    std::fprintf(stderr, "kibitz serve: %s\n", loaded.error().c_str());
    return kUsageError;
  }
  server::Config config = std::move(*loaded);
  if (o.address) config.address = *o.address;
  if (o.port) config.port = *o.port;
  if (o.io_threads) config.io_threads = *o.io_threads;
  if (o.search_threads) config.search_threads = *o.search_threads;
  if (o.hash_chess) config.hash_mib_chess = *o.hash_chess;
  if (o.hash_draughts) config.hash_mib_draughts = *o.hash_draughts;
  if (o.log_level) config.log_level = *o.log_level;
  if (o.web_root) config.web_root = *o.web_root;
  if (eval_file_option())
    config.eval_file = *eval_file_option();
  else
    select_eval(config.eval_file, "kibitz serve");
  // A path that cannot be used stops the start: tables an operator asked
  // for must not be silently missing.
  if (syzygy_path_option())
    config.syzygy_path = *syzygy_path_option();
  else if (!select_syzygy(config.syzygy_path, "kibitz serve"))
    return kUsageError;

  // Logs go to stderr; stdout carries only the "listening on" line.
  if (spdlog::level::from_str(config.log_level) == spdlog::level::off &&
      config.log_level != "off") {
    std::fprintf(stderr, "kibitz serve: log_level: unknown level \"%s\"\n",
                 config.log_level.c_str());
    return kUsageError;
  }
  server::configure_logging(config.log_level);

  server::AccessControl* access = nullptr;
#if KIBITZ_HAVE_ACCESS
  auto made = server::AccessControl::create(config.access);
  if (!made) {
    std::fprintf(stderr, "kibitz serve: %s\n", made.error().c_str());
    return kUsageError;
  }
  std::unique_ptr<server::AccessControl> access_owner = std::move(*made);
  access = access_owner.get();
#endif

  engine::ServiceOptions so;
  so.threads = config.search_threads > 0
                   ? config.search_threads
                   : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  so.hash_mib[0] = config.hash_mib_chess;
  so.hash_mib[1] = config.hash_mib_draughts;
  // Search threads below the I/O threads: the server answers at once while
  // every core searches.
  so.search_nice = o.search_nice;
  so.search_idle_policy = o.search_policy == "idle";
  so.background_idle_policy = o.search_policy == "batch-idle";
  so.on_task_error = [](const std::string& what) {
    spdlog::error("a search thread caught an exception that escaped its task: {}", what);
  };
  // The store before anything starts: a file that cannot be used (corrupt,
  // from a newer Kibitz, held by another server) is one line and exit 3,
  // and the file is left as it is.
  auto store = server::store::open(config.store);
  if (!store) {
    std::fprintf(stderr, "kibitz serve: %s\n", store.error().c_str());
    return kStoreError;
  }
  auto service = engine::make_service(so);
  auto api = server::make_api(config, *service, *store);
  {
    server::Server srv(*api, access, config);
    auto port = srv.listen();
    if (!port) {
      std::fprintf(stderr, "kibitz serve: %s\n", port.error().c_str());
      return 1;
    }
    srv.handle_signals();
    spdlog::info("kibitz {} serving on {}:{} ({} search threads, {} I/O threads, web root {})",
                 KIBITZ_VERSION, config.address, *port, service->threads(), config.io_threads,
                 srv.web_root().empty() ? std::string("none") : srv.web_root());
    if (syzygy::largest() > 0)
      spdlog::info("Syzygy tablebases: {} in {}", syzygy::describe(), syzygy::path());
    std::printf("listening on %s:%d\n", config.address.c_str(), *port);
    std::fflush(stdout);
    srv.run();
  }  // the server (and its io_context) goes before the api its sessions use
  api.reset();
  service.reset();
  if (*store) (*store)->flush();
  spdlog::default_logger()->flush();
  return 0;
}

}  // namespace

Action add_serve_command(CLI::App& app) {
  auto* sub = app.add_subcommand("serve", "Run the HTTP + WebSocket analysis server");
  auto o = std::make_shared<ServeOptions>();
  sub->add_option("--config", o->config_file,
                  "Settings file (JSON with // comments); only the keys it changes")
      ->check(CLI::ExistingFile);
  sub->add_option("--address", o->address, "Listening address (default 127.0.0.1)");
  sub->add_option("--port", o->port, "TCP port, 0 = any free port (default 8080)")
      ->check(CLI::Range(0, 65535));
  sub->add_option("--io-threads", o->io_threads, "Network I/O threads (default 2)")
      ->check(CLI::Range(1, 256));
  sub->add_option("--search-threads", o->search_threads,
                  "Search threads, 0 = every hardware thread (default 0)")
      ->check(CLI::Range(0, 1024));
  sub->add_option("--hash-chess", o->hash_chess, "Chess transposition table in MiB (default 64)")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--hash-draughts", o->hash_draughts,
                  "Draughts transposition table in MiB (default 64)")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--log-level", o->log_level,
                  "trace, debug, info, warn, error, critical or off (default info)");
  sub->add_option("--search-nice", o->search_nice,
                  "Nice value of the search threads above the I/O threads, 0 = same (default 19)")
      ->check(CLI::Range(0, 19));
  sub->add_option("--search-policy", o->search_policy,
                  "nice: the search threads run at --search-nice (default); idle: also under "
                  "SCHED_IDLE, taking only CPU time nothing else wants; batch-idle: interactive "
                  "searches at --search-nice, jobs and reviews on threads under SCHED_IDLE (for "
                  "several instances on the same cores: one's interactive searches go before "
                  "another's jobs)")
      ->check(CLI::IsMember({"nice", "idle", "batch-idle"}));
  sub->add_option("--web-root", o->web_root,
                  "Folder of the web page (default <folder of kibitz>/web)");
  sub->footer(
      "Precedence: flags, then KIBITZ_* environment variables (KIBITZ_PORT, KIBITZ_QUEUE_SIZE, "
      "...; every key of config/kibitz.json), then --config FILE, then the embedded defaults.");
  return [o] { return run_serve(*o); };
}

}  // namespace kibitz::cli
