#include "cli.h"

#include <cstdio>
#include <vector>

#include "commands.h"
#include "common/cpu.h"

namespace kibitz::cli {

int run(int argc, char** argv) {
  CLI::App app{"Kibitz: analysis server for chess and Russian draughts", "kibitz"};
  app.set_version_flag("--version", [] {
    return "kibitz " + std::string(KIBITZ_VERSION) +
           " (instruction set: " + std::string(isa_name(default_isa())) + ")";
  });
  app.require_subcommand(1);
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
  for (auto& [sub, action] : commands)
    if (sub->parsed()) return action();
  return kUsageError;
}

}  // namespace kibitz::cli
