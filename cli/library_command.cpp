// kibitz library import FILE [--config F]
// kibitz library export [--output FILE] [--config F]
// The evaluation library (the store of `kibitz serve`, store.path or
// KIBITZ_STORE_PATH) to and from the line format of Lichess's evaluation
// database (server/api/eval_lines.h). The store is opened as the server
// opens it: a SQLite file that a running server holds is refused (stop the
// server first, or give the copy another path).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "engine/service.h"
#include "server/api/config.h"
#include "server/api/eval_lines.h"
#include "server/api/logging.h"
#include "server/store/store.h"

namespace kibitz::cli {

namespace {

struct LibraryOptions {
  std::string config, input, output;
};

// The store and a one-thread service (the rules only: moves are checked,
// nothing is searched).
struct Opened {
  server::Config config;
  std::shared_ptr<server::store::Store> store;
  std::unique_ptr<engine::Service> service;
};

Expected<Opened, int> open_library(const LibraryOptions& o, const char* who) {
  auto config = server::load_config(o.config);
  if (!config) {
    std::fprintf(stderr, "%s: %s\n", who, config.error().c_str());
    return Unexpected(kUsageError);
  }
  server::configure_logging(config->log_level == "info" ? "warn" : config->log_level);
  if (config->store.backend == "memory") {
    std::fprintf(stderr, "%s: the memory store keeps nothing; set store.path (SQLite)\n", who);
    return Unexpected(kUsageError);
  }
  auto store = server::store::open(config->store);
  if (!store) {
    std::fprintf(stderr, "%s: %s\n", who, store.error().c_str());
    return Unexpected(kStoreError);
  }
  engine::ServiceOptions so;
  so.threads = 1;
  so.hash_mib[0] = so.hash_mib[1] = 1;
  Opened out{std::move(*config), std::move(*store), engine::make_service(so)};
  return out;
}

int run_import(const LibraryOptions& o) {
  constexpr const char* who = "kibitz library import";
  std::ifstream in(o.input, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "%s: cannot open %s\n", who, o.input.c_str());
    return kUsageError;
  }
  auto lib = open_library(o, who);
  if (!lib) return lib.error();
  auto done = server::import_eval_lines(in, lib->config, *lib->service, *lib->store);
  if (!done) {
    std::fprintf(stderr, "%s: %s: %s; nothing was imported\n", who, o.input.c_str(),
                 done.error().c_str());
    return kUsageError;
  }
  std::fprintf(stderr, "%s: %zu positions, %zu analyses\n", who, done->lines, done->evals);
  return 0;
}

int run_export(const LibraryOptions& o) {
  constexpr const char* who = "kibitz library export";
  auto lib = open_library(o, who);
  if (!lib) return lib.error();
  std::ofstream file;
  if (!o.output.empty()) {
    file.open(o.output, std::ios::binary | std::ios::trunc);
    if (!file) {
      std::fprintf(stderr, "%s: cannot write %s\n", who, o.output.c_str());
      return kUsageError;
    }
  }
  std::ostream& out = o.output.empty() ? std::cout : file;
  auto done = server::export_eval_lines(*lib->store, out);
  out.flush();
  if (!done) {
    std::fprintf(stderr, "%s: %s\n", who, done.error().c_str());
    return 1;
  }
  std::fprintf(stderr, "%s: %zu positions\n", who, *done);
  return 0;
}

}  // namespace

Action add_library_command(CLI::App& app) {
  auto o = std::make_shared<LibraryOptions>();
  CLI::App* cmd = app.add_subcommand(
      "library", "The evaluation library in the line format of Lichess's evaluation database");
  cmd->require_subcommand(1);
  CLI::App* imp = cmd->add_subcommand(
      "import", "Add every analysis of FILE (checked whole first: a bad line imports nothing)");
  imp->add_option("file", o->input, "Lines of Lichess's evaluation database (JSON a line)")
      ->required();
  imp->add_option("--config", o->config, "Config file (store.path; KIBITZ_* apply too)");
  CLI::App* exp = cmd->add_subcommand("export", "Write every chess analysis of the library");
  exp->add_option("--output,-o", o->output, "File to write (default: stdout)");
  exp->add_option("--config", o->config, "Config file (store.path; KIBITZ_* apply too)");
  return [o, imp] { return imp->parsed() ? run_import(*o) : run_export(*o); };
}

}  // namespace kibitz::cli
