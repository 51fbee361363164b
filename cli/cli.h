// The `kibitz` command line: subcommands perft, bench, uci, analyze, serve.
#pragma once

namespace kibitz::cli {

// Runs the command line; returns the process exit status (2 for bad
// arguments or input).
int run(int argc, char** argv);

}  // namespace kibitz::cli
