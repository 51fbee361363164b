// Registration of each subcommand on the CLI11 app.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>

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
Action add_library_command(CLI::App& app);

// The chess evaluation chosen by --eval-file (before or after the
// subcommand), if given: it overrides the `eval_file` setting.
const std::optional<std::string>& eval_file_option();
// Selects the chess evaluation (nnue::select); a refused file is reported
// on stderr, prefixed by `who`, and the evaluation in use is kept.
void select_eval(const std::string& eval_file, const char* who);

// The Syzygy tables chosen by --syzygy-path, if given: it overrides the
// `syzygy_path` setting.
const std::optional<std::string>& syzygy_path_option();
// Loads the Syzygy tables in `path` (syzygy::select): false, with the
// reason on stderr prefixed by `who`, when they cannot be used.
bool select_syzygy(const std::string& path, const char* who);

// Exit status for bad arguments or bad input.
constexpr int kUsageError = 2;
constexpr int kStoreError = 3;  // kibitz serve: the store cannot be used

}  // namespace kibitz::cli
