// The analysis service: the search threads, one transposition table per
// game, and the operations clients need. The CLI, the UCI front end and the
// server all use it the same way; make_service() picks the instruction-set
// variant.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/cpu.h"
#include "common/expected.h"
#include "engine/analysis.h"

namespace kibitz::engine {

struct ServiceOptions {
  int threads = 1;
  size_t hash_mib[2] = {64, 64};  // per game: [chess, draughts]
  // Nice value of the search threads (0..19). A server raises it so that its
  // I/O threads are never kept waiting by searches on the same cores.
  int search_nice = 0;
  bool search_idle_policy = false;  // Linux SCHED_IDLE (see engine/thread_pool.h)
  // A second set of `threads` threads under SCHED_IDLE for background
  // requests (AnalysisRequest::background): another program's threads, or
  // another instance's interactive searches on the same cores, then take
  // the CPU from background work at once, whatever their nice values. The
  // caller still runs at most `threads` searching threads at a time (a
  // server's scheduler counts both sets as one).
  bool background_idle_policy = false;
  // Told of an exception that escaped a task on a search thread (a bug: the
  // task's own handling should have caught it); the thread goes on.
  std::function<void(const std::string&)> on_task_error;
};

struct LegalMove {
  std::string move;  // UCI (chess) or PDN (draughts)
  std::string san;   // chess only
  std::string from, to;
  std::vector<std::string> captured;  // draughts: squares of the captured pieces
};

struct MovesReport {
  std::string fen;        // the position after the moves
  bool chess960 = false;  // read by Chess960's rules (ChessVariant)
  bool white_to_move = true;
  std::vector<LegalMove> legal;
  std::string status;  // as engine::Result::status
};

struct PositionInfo {
  std::string fen;        // normalised, after the moves
  bool chess960 = false;  // read by Chess960's rules (ChessVariant)
  uint64_t key = 0;       // Zobrist key of that position
  // The history that can still matter to the search (repetitions): a hash
  // of the keys of the positions played before, since the last irreversible
  // move. Two requests with equal fen, key and history_key search alike.
  uint64_t history_key = 0;
  bool white_to_move = true;
  int legal_moves = 0;
  std::string status;  // as engine::Result::status
};

// A chess position as the Syzygy tables see it (GET /v1/tablebase), in the
// shape of Lichess's tablebase API: category is one of loss, unknown,
// syzygy-loss, maybe-loss, blessed-loss, draw, cursed-win, maybe-win,
// syzygy-win, win (for the side to move); dtz in plies, signed as the
// category; precise_dtz only when it cannot be rounded. nullopt: unknown.
struct TablebaseInfo {
  std::string category = "unknown";
  std::optional<int> dtz, precise_dtz;
  bool checkmate = false, stalemate = false, insufficient_material = false;
};
struct TablebaseMove : TablebaseInfo {  // the position after the move, its side to move's view
  std::string uci, san;
  bool zeroing = false;     // a capture or pawn move
  bool conversion = false;  // a capture or promotion
};
struct TablebaseReport : TablebaseInfo {
  std::vector<TablebaseMove> moves;  // every legal move, best first
};

struct ReplayedMove {
  std::string move;  // canonical: UCI (chess) or PDN (draughts)
  std::string san;   // chess only
};

struct Replay {
  std::string start_fen;  // normalised
  bool chess960 = false;  // read by Chess960's rules (ChessVariant)
  bool white_first = true;
  int first_move_number = 1;
  std::vector<ReplayedMove> moves;
  std::string final_fen;
  std::string status;  // of the final position, as engine::Result::status
};

// A position decoded once: the FEN read and the moves played, with the
// history the search needs. Made by Service::prepare; an AnalysisRequest
// that carries one is not decoded again.
class PreparedPosition {
 public:
  virtual ~PreparedPosition() = default;
  const PositionInfo& info() const { return info_; }
  // Whether `move` (UCI or SAN for chess, PDN for draughts) is legal here:
  // the reason when it is not.
  virtual std::optional<std::string> illegal(std::string_view move) const = 0;

 protected:
  PositionInfo info_;
};

// A perft reports no progress; on_done gets the count, or an error
// ("cancelled" after stop(), "deadline_exceeded", "internal").
using PerftCallbacks = Reporting<std::monostate, Expected<PerftReport, Error>>;

class Service {
 public:
  virtual ~Service() = default;

  // Every call that reads a chess FEN reads it by `variant` (ChessVariant);
  // an invalid_fen error when the FEN's castling rights are not of it.

  // Decodes a position: errors invalid_fen, illegal_move.
  virtual Expected<std::shared_ptr<const PreparedPosition>, Error> prepare(
      GameKind game, std::string_view fen, const std::vector<std::string>& moves,
      ChessVariant variant = ChessVariant::automatic) = 0;
  // Starts an analysis (of request.position when set, else of fen + moves).
  // Errors: invalid_fen, illegal_move, invalid_request. When the position
  // has no legal move, on_done runs before this returns.
  virtual Expected<std::shared_ptr<SearchHandle>, Error> analyze(const AnalysisRequest& request,
                                                                 Callbacks callbacks) = 0;
  // The position after `moves` from `fen`, cheaply: for validation and cache keys.
  Expected<PositionInfo, Error> position(GameKind game, std::string_view fen,
                                         const std::vector<std::string>& moves,
                                         ChessVariant variant = ChessVariant::automatic) {
    auto p = prepare(game, fen, moves, variant);
    if (!p) return Unexpected(p.error());
    return (*p)->info();
  }
  // Plays `moves` (as written in a game record: SAN or UCI for chess, PDN
  // for draughts) from `fen`. An illegal or unreadable move is an
  // "illegal_move" error whose message starts "ply N" and names the token.
  virtual Expected<Replay, Error> replay(GameKind game, std::string_view fen,
                                         const std::vector<std::string>& moves,
                                         ChessVariant variant = ChessVariant::automatic) = 0;
  // The position after `moves` from `fen`, its legal moves and its status.
  virtual Expected<MovesReport, Error> moves(GameKind game, std::string_view fen,
                                             const std::vector<std::string>& moves,
                                             ChessVariant variant = ChessVariant::automatic) = 0;
  // Counts on the caller's thread (the CLI).
  virtual Expected<PerftReport, Error> perft(GameKind game, std::string_view fen, int depth,
                                             bool divide,
                                             ChessVariant variant = ChessVariant::automatic) = 0;
  // Counts on one search thread; stop() ends it early with "cancelled", and
  // the deadline with "deadline_exceeded".
  virtual Expected<std::shared_ptr<SearchHandle>, Error> perft_async(
      GameKind game, std::string_view fen, int depth, Clock::time_point deadline,
      PerftCallbacks callbacks, ChessVariant variant = ChessVariant::automatic) = 0;

  // The Syzygy tables' answer for a chess FEN (spaces may be underscores, as
  // Lichess allows): errors invalid_fen, and no_tablebases when no table is
  // loaded (syzygy::select). A position the tables do not cover answers
  // with category "unknown", as Lichess does.
  virtual Expected<TablebaseReport, Error> tablebase(std::string_view fen) {
    (void)fen;
    return Unexpected(Error{"no_tablebases", "this service has no tablebases"});
  }

  // A memory for a client's successive searches (AnalysisRequest::memory).
  virtual std::shared_ptr<SearchMemory> make_memory() { return nullptr; }

  virtual int hashfull(GameKind game) const = 0;
  // Resizes one game's table and clears it; only while no search runs.
  virtual void resize_hash(GameKind game, size_t mib) = 0;
  // Clears both tables with all threads; only while no search runs.
  virtual void clear_hash() = 0;
  virtual int threads() const = 0;
  virtual Isa isa() const = 0;
};

// A service on the given variant (default: the best this CPU runs).
std::unique_ptr<Service> make_service(const ServiceOptions& options,
                                      std::optional<Isa> isa = std::nullopt);

std::string_view default_fen(GameKind game);

}  // namespace kibitz::engine
