// Syzygy endgame tablebases, probed with Fathom (Debian libfathom-dev, MIT):
// the user's WDL (.rtbw) and DTZ (.rtbz) files, found in the folders of a
// path. Like the chess network (chess/nnue_network.h) this part is compiled
// once, not per instruction-set variant: Fathom's tables are one global
// state that both variants' searches read.
//
// Loading (select) replaces Fathom's global state: it is done at start (the
// server's config, the CLI's options) or by UCI's "setoption name
// SyzygyPath" while no search runs, as the UCI protocol requires. Probes may
// come from any number of threads: Fathom itself is not safe for that
// (Debian's build has no lock: a table is mapped on its first probe without
// one, and its root probes are documented as not thread-safe), so every
// call into it is made under one lock here. A probe after the first of its
// table is a few microseconds of decoding, and the search probes only
// right after captures and pawn moves, so the lock is rarely contended.
//
// Squares are numbered a1 = 0 .. h8 = 63, as the engine's own; positions
// are handed over as bitboards (Board), so that this part needs no type of
// either variant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kibitz::syzygy {

struct Board {
  uint64_t white = 0, black = 0;
  uint64_t kings = 0, queens = 0, rooks = 0, bishops = 0, knights = 0, pawns = 0;
  unsigned rule50 = 0;    // plies since the last capture or pawn move
  unsigned castling = 0;  // non-zero: some castling right (never probed)
  unsigned ep = 0;        // the en-passant square when a capture there is legal; 0: none
  bool white_to_move = true;
};

// The side to move's result with the fifty-move rule: a cursed win is a win
// that the rule turns into a draw, a blessed loss a loss it saves.
enum class Wdl : int { loss = -2, blessed_loss = -1, draw = 0, cursed_win = 1, win = 2 };

// Loads the tables in `path`, folders separated by ':' (as Stockfish's
// SyzygyPath), replacing any loaded before; "" or "<empty>": none. Returns
// "" when done, else why not, and then no table is loaded: a folder that
// does not exist or cannot be read, or a path in which no .rtbw file lies.
std::string select(const std::string& path);
// What is loaded: the path as selected ("" when none), the number of WDL
// and DTZ files found in its folders, and the most pieces a table covers
// (0: no table, then nothing is probed).
const std::string& path();
int wdl_files();
int dtz_files();
int largest();
// "" when none, else e.g. "35 WDL, 35 DTZ tables up to 4 pieces".
std::string describe();

// Whether a probe can answer for `b`: tables loaded, at most largest()
// pieces, and no castling right.
bool covers(const Board& b);

// WDL of the side to move, as the search asks it: only right after a
// zeroing move (rule50 == 0), so that the stored result is the position's
// under the fifty-move rule. nullopt: not covered, or the table is missing.
std::optional<Wdl> probe_wdl(const Board& b);

// One root move ranked by the DTZ tables (Fathom's tb_probe_root_dtz, as
// Stockfish's Tablebases::root_probe): a higher rank is better; moves that
// keep a win within the fifty-move rule (the rule counted from b.rule50)
// rank alike unless `has_repeated`, when wins rank by their distance.
struct RankedMove {
  int from = 0, to = 0;
  int promotion = 0;  // 0 none, 1 queen, 2 rook, 3 bishop, 4 knight
  int rank = 0;
  Wdl wdl = Wdl::draw;  // the result the move keeps, with the rule
};
// nullopt: not covered, or a DTZ table is missing.
std::optional<std::vector<RankedMove>> rank_root_moves(const Board& b, bool has_repeated);

// DTZ of a position with at least one legal move: plies to the next zeroing
// move (capture or pawn move) with best play, positive when the side to
// move wins, negative when it loses, 0 for a draw; counted from the last
// zeroing move, so that |dtz| + rule50 > 100 is a win or loss the fifty-move
// rule spoils. Values of tables stored in moves may be one ply more than
// the exact distance (Syzygy's DTZ rounding). nullopt: not covered.
std::optional<int> probe_dtz(const Board& b);

}  // namespace kibitz::syzygy
