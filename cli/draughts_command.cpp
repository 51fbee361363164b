// kibitz draughts [--movetime MS] [--depth N] [--nodes N] [--hash MB] [--threads T] FEN|-
// A small Russian draughts engine front end for match tools: a FEN in, one
// move out ("c3-d4", "c3:e5:g3"), as the CheckerBoard drivers answer. With
// "-" it reads one position per line on stdin and answers each on its own
// line, keeping its table between them (no start-up cost per move). A line
// may carry the moves played since the FEN after it ("FEN c3-d4 f6-g5"), so
// the search sees repetitions. "none" (exit status 2 in one-shot mode) when
// the side to move has no legal move.
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "engine/service.h"

namespace kibitz::cli {

namespace {

struct DraughtsOptions {
  std::string fen;
  int64_t movetime_ms = 0;
  int depth = 0, threads = 1;
  uint64_t nodes = 0;
  size_t hash_mib = 16;
};

enum class Answer { move, none, error };

// One answer: the move, "none" (no legal move), or an error on stderr.
Answer answer(engine::Service& service, const DraughtsOptions& o, const std::string& line) {
  std::istringstream words(line);
  std::string fen, word;
  words >> fen;
  std::vector<std::string> moves;
  while (words >> word) moves.push_back(word);
  engine::AnalysisRequest req;
  req.game = GameKind::draughts;
  req.fen = fen;
  req.moves = std::move(moves);
  req.threads = o.threads;
  if (o.movetime_ms) req.limits.movetime_ms = o.movetime_ms;
  if (o.depth) req.limits.depth = o.depth;
  if (o.nodes) req.limits.nodes = o.nodes;
  if (!o.movetime_ms && !o.depth && !o.nodes) req.limits.movetime_ms = 100;
  engine::Result result;
  auto handle = service.analyze(req, {nullptr, [&result](const engine::Result& r) { result = r; }});
  if (!handle) {
    std::fprintf(stderr, "kibitz draughts: %s\n", handle.error().message.c_str());
    return Answer::error;
  }
  (*handle)->wait();
  if (result.error) {
    std::fprintf(stderr, "kibitz draughts: search failed: %s\n", result.error->c_str());
    return Answer::error;
  }
  if (!result.bestmove) {
    std::printf("none\n");
    std::fflush(stdout);
    return Answer::none;
  }
  std::printf("%s\n", result.bestmove->c_str());
  std::fflush(stdout);
  return Answer::move;
}

int run_draughts(const DraughtsOptions& o) {
  engine::ServiceOptions so;
  so.threads = o.threads;
  so.hash_mib[0] = 1;  // chess: unused
  so.hash_mib[1] = o.hash_mib;
  auto service = engine::make_service(so);
  if (o.fen != "-") {
    const Answer a = answer(*service, o, o.fen);
    return a == Answer::move ? 0 : a == Answer::none ? 2 : kUsageError;
  }
  int status = 0;
  for (std::string line; std::getline(std::cin, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (line == "quit") break;
    if (line == "new") {  // a new game: forget the table
      service->clear_hash();
      continue;
    }
    if (answer(*service, o, line) == Answer::error) {
      std::printf("error\n");
      std::fflush(stdout);
      status = kUsageError;
    }
  }
  return status;
}

}  // namespace

Action add_draughts_command(CLI::App& app) {
  auto o = std::make_shared<DraughtsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "draughts", "Russian draughts engine for match tools: prints one move for a FEN");
  cmd->add_option("fen", o->fen,
                  "PDN FEN (W:Wa1,c3,...:Bb8,...), optionally followed by moves, or - to read "
                  "one per line from stdin")
      ->required();
  cmd->add_option("--movetime", o->movetime_ms, "Milliseconds per move (default 100)")
      ->check(CLI::Range(int64_t{1}, int64_t{86'400'000}));
  cmd->add_option("--depth", o->depth, "Depth in plies")->check(CLI::Range(1, 200));
  cmd->add_option("--nodes", o->nodes, "Nodes per move");
  cmd->add_option("--hash", o->hash_mib, "Table size in MiB")
      ->check(CLI::Range(size_t{1}, size_t{65536}))
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "Search threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  return [o] { return run_draughts(*o); };
}

}  // namespace kibitz::cli
