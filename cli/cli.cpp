#include "cli.h"

#include <cstdio>
#include <vector>

#include "chess/nnue_network.h"
#include "chess/syzygy.h"
#include "commands.h"
#include "common/cpu.h"

namespace kibitz::cli {

namespace {
std::optional<std::string> eval_file_;
std::optional<std::string> syzygy_path_;
}  // namespace

const std::optional<std::string>& eval_file_option() { return eval_file_; }
const std::optional<std::string>& syzygy_path_option() { return syzygy_path_; }

bool select_syzygy(const std::string& path, const char* who) {
  if (const std::string error = syzygy::select(path); !error.empty()) {
    std::fprintf(stderr, "%s: %s\n", who, error.c_str());
    return false;
  }
  return true;
}

void select_eval(const std::string& eval_file, const char* who) {
  if (const std::string error = nnue::select(eval_file); !error.empty())
    std::fprintf(stderr, "%s: eval_file: %s; evaluating with %s\n", who, error.c_str(),
                 nnue::describe().c_str());
}

int run(int argc, char** argv) {
  CLI::App app{"Kibitz: analysis server for chess and Russian draughts", "kibitz"};
  app.set_version_flag("--version", [] {
    return "kibitz " + std::string(KIBITZ_VERSION) +
           " (instruction set: " + std::string(isa_name(default_isa())) + ")";
  });
  app.require_subcommand(1);
  app.fallthrough();  // --eval-file also after the subcommand
  app.add_option("--eval-file", eval_file_,
                 "Chess evaluation: a network file, 'builtin' or 'classical' (overrides the "
                 "eval_file setting)");
  app.add_option("--syzygy-path", syzygy_path_,
                 "Syzygy endgame tables: folders separated by ':' (overrides the syzygy_path "
                 "setting)");
  std::vector<std::pair<CLI::App*, Action>> commands;
  const auto add = [&](Action (*make)(CLI::App&)) {
    const size_t before = app.get_subcommands({}).size();
    Action action = make(app);
    commands.emplace_back(app.get_subcommands({})[before], std::move(action));
  };
  add(&add_perft_command);
  add(&add_bench_command);
  add(&add_uci_command);
  add(&add_annotate_command);
  add(&add_analyze_command);
  add(&add_serve_command);
  add(&add_draughts_command);
  add(&add_library_command);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "kibitz: %s\n", e.what());
    return kUsageError;
  }
  // The uci, bench and perft commands have no config: the option, else the
  // built-in network (analyze and serve then apply their config's setting).
  select_eval(eval_file_.value_or(nnue::default_eval_file()), "kibitz");
  if (syzygy_path_ && !select_syzygy(*syzygy_path_, "kibitz")) return kUsageError;
  for (auto& [sub, action] : commands)
    if (sub->parsed()) return action();
  return kUsageError;
}

}  // namespace kibitz::cli
