// kibitz annotate FILE.pgn|FILE.pdn [--nodes N | --depth D | --movetime MS]
// Reviews every game of the file; the annotated games go to stdout, a
// progress bar to stderr.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "commands.h"
#include "engine/service.h"
#include "review/review.h"

namespace kibitz::cli {

namespace {

struct AnnotateOptions {
  std::string file;
  uint64_t nodes = 0;
  int depth = 0;
  int64_t movetime_ms = 0;
  int threads = 0;
  int hash_mib = 64;
  bool no_table_reuse = false;
};

#ifdef KIBITZ_TEST_HOOKS
// Test builds only (CMake KIBITZ_TEST_HOOKS, never in a shipped image): the
// review of game KIBITZ_TEST_ANNOTATE_FAIL_GAME (from 1) fails at its first
// finished ply, as one whose search failed would (exit 1, the other games
// reviewed on; tests/cli/cli_commands_test.py).
void test_hook_fail(review::Options& ro, size_t game) {
  const char* v = std::getenv("KIBITZ_TEST_ANNOTATE_FAIL_GAME");
  if (!v || std::atoi(v) != int(game) + 1) return;
  ro.on_ply = [](size_t, const review::FinishedPly&) {
    throw std::runtime_error("test hook: this review fails (KIBITZ_TEST_ANNOTATE_FAIL_GAME)");
  };
}
#endif

void draw_progress(int game, int games, int done, int total) {
  constexpr int kWidth = 30;
  const int filled = total ? done * kWidth / total : 0;
  std::fprintf(stderr, "\rgame %d/%d [%.*s%*s] %d/%d positions", game, games, filled,
               "##############################", kWidth - filled, "", done, total);
  std::fflush(stderr);
}

int run_annotate(const AnnotateOptions& o) {
  std::ifstream in(o.file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "kibitz annotate: cannot read %s\n", o.file.c_str());
    return kUsageError;
  }
  std::stringstream text;
  text << in.rdbuf();
  const bool draughts =
      o.file.size() >= 4 && (o.file.ends_with(".pdn") || o.file.ends_with(".PDN"));
  const GameKind game = draughts ? GameKind::draughts : GameKind::chess;
  auto games = record::read(text.str());
  if (!games) {
    const auto& e = games.error();
    std::fprintf(stderr, "kibitz annotate: %s: game %d, ply %d, line %d, token '%s': %s\n",
                 o.file.c_str(), e.game, e.ply, e.line, e.token.c_str(), e.message.c_str());
    return kUsageError;
  }
  engine::ServiceOptions so;
  so.threads = o.threads > 0 ? o.threads : 2;
  // The file's game gets the table; the other game's is never searched and
  // takes the least (zeroing 64 MiB more cost a review about 0.2 s).
  so.hash_mib[0] = draughts ? 1 : size_t(o.hash_mib);
  so.hash_mib[1] = draughts ? size_t(o.hash_mib) : 1;
  auto service = engine::make_service(so);
  review::Options ro;
  if (o.nodes) ro.limits.nodes = o.nodes;
  if (o.depth) ro.limits.depth = o.depth;
  if (o.movetime_ms) ro.limits.movetime_ms = o.movetime_ms;
  ro.reuse_table = !o.no_table_reuse;
  int status = 0;
  for (size_t g = 0; g < games->size(); ++g) {
    std::optional<Expected<review::Review, Error>> outcome;
    review::Callbacks cb;
    cb.on_progress = [&](const review::Progress& p) {
      draw_progress(int(g) + 1, int(games->size()), p.done, p.total);
    };
    cb.on_done = [&](const Expected<review::Review, Error>& r) { outcome = r; };
    const auto started = std::chrono::steady_clock::now();
#ifdef KIBITZ_TEST_HOOKS
    ro.on_ply = nullptr;
    test_hook_fail(ro, g);
#endif
    auto h = review::start(*service, game, (*games)[g], ro, cb);
    if (!h) {
      std::fprintf(stderr, "kibitz annotate: game %zu: %s\n", g + 1, h.error().message.c_str());
      status = kUsageError;
      continue;
    }
    (*h)->wait();
    std::fprintf(stderr, "\n");
    if (!*outcome) {
      std::fprintf(stderr, "kibitz annotate: game %zu: %s\n", g + 1,
                   outcome->error().message.c_str());
      status = 1;
      continue;
    }
    const auto& r = **outcome;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - started)
                        .count();
    std::fprintf(stderr, "plies %zu nodes %llu time_ms %lld\n", r.plies.size(),
                 static_cast<unsigned long long>(r.nodes), static_cast<long long>(ms));
    std::fprintf(
        stderr,
        "White: accuracy %.1f%%, average loss %.0f, %d inaccuracies, %d mistakes, %d blunders\n",
        r.white.accuracy, r.white.average_loss, r.white.inaccuracies, r.white.mistakes,
        r.white.blunders);
    std::fprintf(
        stderr,
        "Black: accuracy %.1f%%, average loss %.0f, %d inaccuracies, %d mistakes, %d blunders\n",
        r.black.accuracy, r.black.average_loss, r.black.inaccuracies, r.black.mistakes,
        r.black.blunders);
    std::fputs(r.annotated.c_str(), stdout);
    if (g + 1 < games->size()) std::fputs("\n", stdout);
  }
  return status;
}

}  // namespace

Action add_annotate_command(CLI::App& app) {
  auto opts = std::make_shared<AnnotateOptions>();
  CLI::App* cmd = app.add_subcommand("annotate", "Review whole games: annotated PGN/PDN to stdout");
  cmd->add_option("file", opts->file, "A .pgn (chess) or .pdn (Russian draughts) file")->required();
  cmd->add_option("--nodes", opts->nodes, "Nodes per position (default 200000)");
  cmd->add_option("--depth", opts->depth, "Depth per position")->check(CLI::Range(1, 60));
  cmd->add_option("--movetime", opts->movetime_ms, "Milliseconds per position")
      ->check(CLI::Range(1, 600000));
  cmd->add_option("--threads", opts->threads, "Search threads (default 2)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--hash", opts->hash_mib, "Table size in MiB per game")
      ->check(CLI::Range(1, 65536));
  cmd->add_flag(
      "--no-table-reuse", opts->no_table_reuse,
      "Clear the table before each position, one at a time (to measure what reuse saves)");
  return [opts] { return run_annotate(*opts); };
}

}  // namespace kibitz::cli
