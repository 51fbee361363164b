// kibitz bench: fixed positions searched to a fixed depth with one thread and
// a fresh 16 MiB table per position. The total node count is the engine's
// signature: it changes only when search or evaluation behaviour changes.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "engine/service.h"

namespace kibitz::cli {

namespace {

struct BenchPosition {
  GameKind game;
  const char* fen;
};

const BenchPosition kPositions[] = {
    {GameKind::chess, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"},
    {GameKind::chess, "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 10"},
    {GameKind::chess, "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11"},
    {GameKind::chess, "4rrk1/pp1n3p/3q2pQ/2p1pb2/2PP4/2P3N1/P2B2PP/4RRK1 b - - 7 19"},
    {GameKind::chess, "rq3rk1/ppp2ppp/1bnpb3/3N2B1/3NP3/7P/PPPQ1PP1/2KR3R w - - 7 14"},
    {GameKind::chess, "r1bq1r1k/1pp1n1pp/1p1p4/4p2Q/4Pp2/1BNP4/PPP2PPP/3R1RK1 w - - 2 14"},
    {GameKind::chess, "r3r1k1/2p2ppp/p1p1bn2/8/1q2P3/2NPQN2/PPP3PP/R4RK1 b - - 2 15"},
    {GameKind::chess, "r1bbk1nr/pp3p1p/2n5/1N4p1/2Np1B2/8/PPP2PPP/2KR1B1R w kq - 0 13"},
    {GameKind::chess, "6k1/6p1/6Pp/ppp5/3pn2P/1P3K2/1PP2P2/3N4 b - - 0 1"},
    {GameKind::chess, "3b4/5kp1/1p1p1p1p/pP1PpP1P/P1P1P3/3KN3/8/8 w - - 0 1"},
    {GameKind::chess, "8/8/8/8/5kp1/P7/8/1K1N4 w - - 0 1"},
    {GameKind::chess, "2r2rk1/1bqnbpp1/1p1ppn1p/pP6/N1P1P3/P2B1N1P/1B2QPP1/R2R2K1 b - - 0 1"},
    {GameKind::draughts,
     "W:Wa1,a3,b2,c1,c3,d2,e1,e3,f2,g1,g3,h2:Ba7,b6,b8,c7,d6,d8,e7,f6,f8,g7,h6,h8"},
    {GameKind::draughts, "W:Wc5,e5,d4,g3,d2,f2,a1,c1,e1,g1:Bf8,h8,a7,c7,e7,g7,b6,h6,a5,g5"},
    {GameKind::draughts,
     "B:Wb4,d4,f4,a3,e3,g3,b2,d2,f2,a1,e1,g1:Bb8,d8,f8,h8,a7,c7,e7,b6,h6,c5,g5,h4"},
    {GameKind::draughts, "W:Wa5,d4,f4,a3,c3,e3,h2,c1:Bb8,a7,c7,b6,f6,h6,c5,g5"},
    {GameKind::draughts, "W:WKa1,c3,e3:BKh8,d6,f6"},
};

// Draughts branches less: its positions go this many plies deeper.
constexpr int kDraughtsExtraDepth = 4;

struct BenchOptions {
  int depth = 11;
  std::string isa;
};

int run_bench(const BenchOptions& o) {
  std::optional<Isa> isa;
  if (!o.isa.empty()) {
    isa = parse_isa(o.isa);
    if (!isa || !isa_supported(*isa)) {
      std::fprintf(stderr, "kibitz bench: instruction set '%s' is unknown or not supported here\n",
                   o.isa.c_str());
      return kUsageError;
    }
  }
  engine::ServiceOptions so;
  so.threads = 1;
  so.hash_mib[0] = so.hash_mib[1] = 16;
  auto service = engine::make_service(so, isa);
  uint64_t total = 0;
  int64_t total_ms = 0;
  int n = 0;
  for (const auto& bp : kPositions) {
    service->clear_hash();
    engine::AnalysisRequest req;
    req.game = bp.game;
    req.fen = bp.fen;
    req.limits.depth = o.depth + (bp.game == GameKind::draughts ? kDraughtsExtraDepth : 0);
    engine::Result result;
    auto h = service->analyze(req, {nullptr, [&](const engine::Result& r) { result = r; }});
    if (!h) {
      std::fprintf(stderr, "kibitz bench: %s: %s\n", bp.fen, h.error().message.c_str());
      return 1;
    }
    (*h)->wait();
    total += result.nodes;
    total_ms += result.time_ms;
    std::printf("position %2d %-8s nodes %10llu bestmove %s\n", ++n,
                std::string(game_name(bp.game)).c_str(),
                static_cast<unsigned long long>(result.nodes),
                result.bestmove.value_or("-").c_str());
  }
  std::printf(
      "nodes %llu time_ms %lld nps %llu\n", static_cast<unsigned long long>(total),
      static_cast<long long>(total_ms),
      static_cast<unsigned long long>(total * 1000 / uint64_t(std::max<int64_t>(1, total_ms))));
  return 0;
}

}  // namespace

Action add_bench_command(CLI::App& app) {
  auto opts = std::make_shared<BenchOptions>();
  CLI::App* cmd =
      app.add_subcommand("bench", "Search fixed positions; print the node signature and speed");
  cmd->add_option("--depth", opts->depth, "Search depth")
      ->capture_default_str()
      ->check(CLI::Range(1, 30));
  cmd->add_option("--isa", opts->isa, "Instruction-set variant: generic or bmi2 (default: best)");
  return [opts] { return run_bench(*opts); };
}

}  // namespace kibitz::cli
