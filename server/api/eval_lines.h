// The evaluation library in the line format of Lichess's published
// evaluation database (database.lichess.org, "Chess evaluations",
// lichess_db_eval.jsonl): one JSON object a line,
//   {"fen": "<pieces> <side> <castling> <en passant>",
//    "evals": [{"pvs": [{"cp": N | "mate": N, "line": "e2e4 e7e5 ..."}, ...],
//               "knodes": N, "depth": D}, ...]}
// with scores from White's point of view, mates in moves, and the evals
// ordered by their number of lines (most first). `kibitz library import`
// seeds a library from such a file, `kibitz library export` writes one.
//
// What a round trip keeps and what it normalises (README "The evaluation
// library"):
//  - the library keeps the deepest analysis per position and number of
//    lines, so of two evals of a line with as many pvs only the deeper
//    comes back;
//  - the position is kept under its FEN with the counters "0 1" and no
//    history (as a request with that FEN and no moves finds it); an export
//    writes every chess analysis of the library under its first four FEN
//    fields, one line per position, so analyses of one position reached by
//    other moves or at other move numbers are merged (the deepest per
//    number of lines);
//  - keys are written in the database's order (fen, evals; pvs, knodes,
//    depth; cp or mate, then line), positions in the library's key order,
//    and numbers as integers: a file written by export is read back
//    unchanged.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "engine/service.h"
#include "server/api/config.h"
#include "server/store/store.h"

namespace kibitz::server {

// A chess move in UCI as Lichess writes it (its database and its APIs):
// castling as the king taking its rook (e1h1), which `san` tells.
std::string lichess_uci(const std::string& uci, const std::string& san);

// One line read: the library's key of its position and its evals.
struct EvalLine {
  std::string key;
  std::vector<store::Eval> evals;
};

// Reads one line; the error says what is wrong with it (the caller adds
// the line number). Every move of every line is checked against the rules.
Expected<EvalLine, std::string> read_eval_line(std::string_view text, const Config& config,
                                               engine::Service& service);

struct EvalImport {
  size_t lines = 0, evals = 0;
};

// Reads every line of `in` first (an error names the line: "line N: ...",
// and nothing is written), then puts them all into `store` and flushes it.
// Empty lines are skipped.
Expected<EvalImport, std::string> import_eval_lines(std::istream& in, const Config& config,
                                                    engine::Service& service, store::Store& store);

// Writes every chess analysis of the library, a line per position; the
// number of lines written.
Expected<size_t, std::string> export_eval_lines(store::Store& store, std::ostream& out);

}  // namespace kibitz::server
