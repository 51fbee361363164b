// kibitz perft --game chess|draughts --fen FEN --depth N [--divide] [--isa generic|bmi2]
//              [--variant standard|chess960]
#include <chrono>
#include <cstdio>
#include <string>

#include "commands.h"
#include "engine/backend.h"

namespace kibitz::cli {

namespace {

struct PerftOptions {
  std::string game = "chess";
  std::string variant;
  std::string fen;
  int depth = 0;
  bool divide = false;
  std::string isa;
};

constexpr std::string_view kChessStart = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
constexpr std::string_view kDraughtsStart =
    "W:Wa1,a3,b2,c1,c3,d2,e1,e3,f2,g1,g3,h2:Ba7,b6,b8,c7,d6,d8,e7,f6,f8,g7,h6,h8";

int run_perft(const PerftOptions& o) {
  const auto game = parse_game(o.game);
  if (!game) {
    std::fprintf(stderr, "kibitz perft: unknown game '%s' (chess or draughts)\n", o.game.c_str());
    return kUsageError;
  }
  ChessVariant variant = ChessVariant::automatic;
  if (!o.variant.empty()) {
    const auto v = parse_variant(o.variant);
    if (!v) {
      std::fprintf(stderr, "kibitz perft: unknown variant '%s' (standard or chess960)\n",
                   o.variant.c_str());
      return kUsageError;
    }
    variant = *v;
  }
  Isa isa = default_isa();
  if (!o.isa.empty()) {
    const auto chosen = parse_isa(o.isa);
    if (!chosen || !isa_supported(*chosen)) {
      std::fprintf(stderr, "kibitz perft: instruction set '%s' is unknown or not supported here\n",
                   o.isa.c_str());
      return kUsageError;
    }
    isa = *chosen;
  }
  const std::string_view fen = !o.fen.empty()             ? std::string_view(o.fen)
                               : *game == GameKind::chess ? kChessStart
                                                          : kDraughtsStart;

  const auto start = std::chrono::steady_clock::now();
  auto report = engine::backend(isa).perft(*game, fen, o.depth, o.divide, variant);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  if (!report) {
    std::fprintf(stderr, "kibitz perft: %s\n", report.error().message.c_str());
    return kUsageError;
  }
  for (const auto& [move, nodes] : report->divide)
    std::printf("%s: %llu\n", move.c_str(), static_cast<unsigned long long>(nodes));
  const double seconds = std::chrono::duration<double>(elapsed).count();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count();
  const double nps = seconds > 0 ? double(report->nodes) / seconds : 0.0;
  std::printf("nodes %llu time_ms %lld nps %.0f\n", static_cast<unsigned long long>(report->nodes),
              static_cast<long long>(ms), nps);
  return 0;
}

}  // namespace

Action add_perft_command(CLI::App& app) {
  auto opts = std::make_shared<PerftOptions>();
  CLI::App* cmd = app.add_subcommand("perft", "Count the leaf nodes of the legal move tree");
  cmd->add_option("--game", opts->game, "chess or draughts")->capture_default_str();
  cmd->add_option("--fen", opts->fen, "Position (default: the start position)");
  cmd->add_option("--variant", opts->variant,
                  "Chess rules: standard or chess960 (default: what the FEN's castling rights "
                  "say)");
  cmd->add_option("--depth", opts->depth, "Depth in plies")->required()->check(CLI::Range(0, 30));
  cmd->add_flag("--divide", opts->divide, "Print the node count under each root move first");
  cmd->add_option("--isa", opts->isa, "Instruction-set variant: generic or bmi2 (default: best)");
  return [opts] { return run_perft(*opts); };
}

}  // namespace kibitz::cli
