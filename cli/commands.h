// Registration of each subcommand on the CLI11 app.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace kibitz::cli {

// A subcommand registers its options and returns the action to run when it
// was chosen; the action returns the exit status.
using Action = std::function<int()>;

Action add_perft_command(CLI::App& app);
Action add_bench_command(CLI::App& app);
Action add_uci_command(CLI::App& app);
Action add_annotate_command(CLI::App& app);
Action add_analyze_command(CLI::App& app);
Action add_serve_command(CLI::App& app);
Action add_draughts_command(CLI::App& app);

// Exit status for bad arguments or bad input.
constexpr int kUsageError = 2;
constexpr int kStoreError = 3;  // kibitz serve: the store cannot be used

}  // namespace kibitz::cli
