// Analysis requests and results as the neutral layer (CLI, UCI, server) sees
// them: moves as strings, scores as numbers. The variant's search turns them
// into its own types and back.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/limits.h"
#include "engine/types.h"

namespace kibitz::engine {

using ::kibitz::Clock;  // common/limits.h
using ::kibitz::Limits;

class PreparedPosition;  // engine/service.h

// What one client's searches learn about moves, handed from each search to
// the next (Service::make_memory). A UCI session keeps one per game it plays
// and drops it at "ucinewgame". Searches that share one at the same time are
// safe: only one of them starts from it.
class SearchMemory {
 public:
  virtual ~SearchMemory() = default;
};

struct AnalysisRequest {
  GameKind game = GameKind::chess;
  ChessVariant variant = ChessVariant::automatic;  // how fen is read (engine/types.h)
  std::string fen;                                 // empty: the start position
  std::vector<std::string> moves;  // played from fen (UCI or SAN for chess, PDN for draughts)
  // Decoded already (Service::prepare): then fen and moves are not read.
  std::shared_ptr<const PreparedPosition> position;
  Limits limits;
  int multipv = 1;
  int threads = 1;
  std::vector<std::string> searchmoves;  // only these root moves
  // Nobody waits on it interactively (a job, a review): searched on the
  // background threads when the service has them (ServiceOptions).
  bool background = false;
  // Start from, and leave, move-ordering statistics here (from the same
  // service's make_memory); none: start from nothing.
  std::shared_ptr<SearchMemory> memory;
};

enum class ScoreKind { cp, mate };  // mate: chess mate, or a forced draughts win

// From the point of view of the side to move. For mate scores `value` counts
// moves (not plies) to the end, negative when the side to move is mated.
struct Score {
  ScoreKind kind = ScoreKind::cp;
  int value = 0;
  friend bool operator==(const Score&, const Score&) = default;
};

enum class BoundKind { exact, lower, upper };

struct Line {
  int multipv = 1;
  std::vector<std::string> moves;  // UCI (chess) or PDN (draughts)
  std::vector<std::string> san;    // chess only
  Score score;
  BoundKind bound = BoundKind::exact;
  std::array<int, 3> wdl{0, 1000, 0};  // per mille, side to move
  int depth = 0;
  int seldepth = 0;
};

struct Progress {
  bool white_to_move = true;
  int depth = 0;
  int seldepth = 0;
  uint64_t nodes = 0;
  uint64_t tbhits = 0;  // tablebase probes that answered (chess, Syzygy)
  uint64_t nps = 0;
  int64_t time_ms = 0;
  int hashfull = 0;  // permille
  std::vector<Line> lines;
};

struct Result : Progress {
  std::string fen;  // the analysed position (after `moves`), normalised
  std::optional<std::string> bestmove;
  std::optional<std::string> ponder;
  // When the position has no legal move or is drawn by rule: "checkmate",
  // "stalemate", "loss" (draughts), or "draw_<rule>"; else "ongoing".
  std::string status = "ongoing";
  bool stopped = false;  // ended by stop() rather than by a limit
  // Ended at limits.deadline (a caller's bound: a server's job deadline or
  // movetime cap) before the search reached its own limits.
  bool cut_by_deadline = false;
  // Set when the search failed (an exception inside it, e.g. out of
  // memory): the rest of the result is what it had found before, if anything.
  std::optional<std::string> error;
};

// The one shape of callbacks out of the engine (searches, reviews, perft;
// the server's Reporter is the same shape in JSON): progress while the work
// runs, and its end exactly once. Called on search threads.
template <class ProgressT, class DoneT>
struct Reporting {
  std::function<void(const ProgressT&)> on_progress;
  std::function<void(const DoneT&)> on_done;  // exactly once
};

// A search: progress after each completed iteration.
using Callbacks = Reporting<Progress, Result>;

// A running analysis. stop() is safe from any thread and idempotent; on_done
// still runs once, with the best result found so far.
class SearchHandle {
 public:
  virtual ~SearchHandle() = default;
  virtual void stop() = 0;
  virtual void wait() = 0;
  virtual bool done() const = 0;
  virtual uint64_t nodes() const = 0;  // searched so far, all threads
};

}  // namespace kibitz::engine
