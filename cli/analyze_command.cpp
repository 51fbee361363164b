// kibitz analyze --game G --fen F [--moves M ...] [--depth N] [--nodes N]
//                [--movetime MS] [--multipv K] [--threads T] [--pov P]
// One analysis through the server's API, printed as the JSON POST
// /v1/analyze answers.
#include <cstdio>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "engine/service.h"
#include "server/api/api.h"
#include "server/api/config.h"
#include "server/api/logging.h"
#include "server/store/json_text.h"

namespace kibitz::cli {

namespace {

struct AnalyzeOptions {
  std::string game = "chess", fen, pov = "white", config, variant;
  std::vector<std::string> moves;
  int depth = 0, multipv = 1, threads = 0;
  uint64_t nodes = 0;
  int64_t movetime_ms = 0;
};

int run_analyze(const AnalyzeOptions& o) {
  auto config = server::load_config(o.config);
  if (!config) {
    std::fprintf(stderr, "kibitz analyze: %s\n", config.error().c_str());
    return kUsageError;
  }
  if (!eval_file_option()) select_eval(config->eval_file, "kibitz analyze");
  if (!syzygy_path_option() && !select_syzygy(config->syzygy_path, "kibitz analyze"))
    return kUsageError;
  // Results on stdout, the log (one line per analysis) on stderr.
  server::configure_logging(config->log_level == "info" ? "warn" : config->log_level);
  nlohmann::json request = {{"game", o.game}, {"pov", o.pov}, {"multipv", o.multipv}};
  if (!o.fen.empty()) request["fen"] = o.fen;
  if (!o.variant.empty()) request["variant"] = o.variant;
  if (!o.moves.empty()) request["moves"] = o.moves;
  nlohmann::json limits = nlohmann::json::object();
  if (o.depth) limits["depth"] = o.depth;
  if (o.nodes) limits["nodes"] = o.nodes;
  if (o.movetime_ms) limits["movetime_ms"] = o.movetime_ms;
  request["limits"] = limits;

  const int hardware = int(std::max(1u, std::thread::hardware_concurrency()));
  const int pool = config->search_threads > 0 ? config->search_threads : hardware;
  request["threads"] = o.threads > 0 ? o.threads : pool;
  engine::ServiceOptions so;
  so.threads = pool;
  so.hash_mib[0] = config->hash_mib_chess;
  so.hash_mib[1] = config->hash_mib_draughts;
  auto service = engine::make_service(so);
  int status = 0;
  {
    auto api = server::make_api(*config, *service);
    std::promise<server::Reply> promise;
    server::Reporter reporter;
    reporter.on_done = [&promise](server::Reply r) { promise.set_value(std::move(r)); };
    auto ticket = api->analyze(request, server::Caller{}, std::move(reporter));
    server::Reply reply = promise.get_future().get();
    const std::string& text = *reply.wire();  // a cache hit holds its text alone
    if (reply.ok()) {
      std::printf("%s\n", text.c_str());
    } else {
      std::fprintf(stderr, "%s\n", text.c_str());
      status = reply.status < 500 ? kUsageError : 1;
    }
  }
  return status;
}

}  // namespace

Action add_analyze_command(CLI::App& app) {
  auto o = std::make_shared<AnalyzeOptions>();
  CLI::App* cmd =
      app.add_subcommand("analyze", "Analyse one position; prints the JSON of POST /v1/analyze");
  cmd->add_option("--game", o->game, "chess or draughts")
      ->check(CLI::IsMember({"chess", "draughts"}))
      ->capture_default_str();
  cmd->add_option("--fen", o->fen, "Start position (default: the initial position)");
  cmd->add_option("--moves", o->moves, "Moves played from the position (UCI or PDN)");
  cmd->add_option("--variant", o->variant, "Chess rules: standard or chess960")
      ->check(CLI::IsMember({"standard", "chess960"}));
  cmd->add_option("--depth", o->depth, "Depth in plies")->check(CLI::Range(1, 256));
  cmd->add_option("--nodes", o->nodes, "Nodes to search");
  cmd->add_option("--movetime", o->movetime_ms, "Milliseconds to search")
      ->check(CLI::Range(int64_t{1}, int64_t{86'400'000}));
  cmd->add_option("--multipv", o->multipv, "Lines to show")->check(CLI::Range(1, 256));
  cmd->add_option("--threads", o->threads, "Search threads (default: all)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--pov", o->pov, "Scores from white's side or the side_to_move")
      ->check(CLI::IsMember({"white", "side_to_move"}))
      ->capture_default_str();
  cmd->add_option("--config", o->config, "Config file (caps and defaults; KIBITZ_* apply too)");
  return [o] { return run_analyze(*o); };
}

}  // namespace kibitz::cli
