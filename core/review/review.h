// Whole-game review: every position of a game analysed (in parallel, on the
// shared pool and table), each move judged, per-player figures, and the game
// written back as an annotated PGN/PDN.
//
// Judgments come from the mover's winning chances, a number from -1 (lost)
// to 1 (won): W(cp) = 2 / (1 + exp(-k * cp)) - 1, k = 0.00368208 for chess
// (the curve Lichess uses) and 0.006 for draughts (a man decides more than a
// pawn). A move's drop is W(before) - W(after) from the mover's side; with
// the default thresholds a drop of 0.1 is an inaccuracy, 0.2 a mistake,
// 0.3 a blunder. Mates have their own rules: giving up a forced mate is an
// inaccuracy while the position stays overwhelming (W > 0.8), a mistake
// while it stays better, else a blunder; walking into a forced mate is a
// blunder unless the position was already lost (W < -0.6: mistake; W < -0.9:
// inaccuracy). The engine's own best move is never judged.
//
// Accuracy of one move (Lichess's formula, win percentage p = 50 + 50 W):
// 103.1668 * exp(-0.04354 * (p_before - p_after)) - 3.1669, clamped to
// 0..100; a player's accuracy is the mean over their moves. Average loss is
// the mean centipawn loss per move, each loss capped at 1000.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/service.h"
#include "record/record.h"

namespace kibitz::review {

struct Thresholds {
  double inaccuracy = 0.1, mistake = 0.2, blunder = 0.3;
};

// A ply whose searches are done: the position's own search and, when the
// game went elsewhere and the played move was not among its lines, the
// search restricted to the played move.
struct FinishedPly {
  engine::Result best;
  std::optional<engine::Result> played;
};

struct Options {
  // Per position; nothing set means 200,000 nodes. A search these limits
  // end before it completes depth 1 is run again to depth 1 alone.
  engine::Limits limits;
  int multipv = 1;
  Thresholds thresholds;
  // Chess: the rules asked for (a request's "variant"); the game's own
  // [Variant] tag must agree (game_variant).
  ChessVariant variant = ChessVariant::automatic;
  int parallel = 0;  // positions analysed at once; 0 = the service's threads
  // false: for measuring what the shared table saves (`kibitz annotate
  // --no-table-reuse`) — both tables are cleared before each position and
  // positions run one at a time. Never on a service that serves others.
  bool reuse_table = true;
  bool background = false;  // its searches are AnalysisRequest::background
  // A review resumed (after a restart): these plies (0-based) were finished
  // before and are not searched again. An entry without a line is ignored.
  std::map<size_t, FinishedPly> finished;
  // Called on a search thread as each ply is finished (not for `finished`
  // ones), e.g. to keep it for a resume. What it throws fails the review.
  std::function<void(size_t ply, const FinishedPly&)> on_ply;
};

enum class Judgment { none, inaccuracy, mistake, blunder };
std::string_view to_string(Judgment j);

struct PlyReview {
  int ply = 0;        // 1-based
  bool white = true;  // the mover
  std::string move, san;
  engine::Score eval_before, eval_after;  // White's point of view
  std::string best_move;
  std::vector<std::string> best_line, best_line_san;
  engine::Score best_score;  // White's point of view
  int loss = 0;              // centipawns the mover gave up (0..1000)
  double accuracy = 100;
  Judgment judgment = Judgment::none;
  bool terminal_after = false;  // the move ended the game (mate, stalemate...)
};

struct PlayerSummary {
  int moves = 0, inaccuracies = 0, mistakes = 0, blunders = 0;
  double average_loss = 0, accuracy = 0;
};

struct Review {
  GameKind game = GameKind::chess;
  bool chess960 = false;  // read by Chess960's rules
  std::vector<PlyReview> plies;
  PlayerSummary white, black;
  std::string annotated;  // PGN (chess) or PDN (draughts)
  uint64_t nodes = 0;
};

// After each analysed position: how many of how many are done.
struct Progress {
  int done = 0, total = 0;
};

// on_done: exactly once; Error "cancelled" after stop(), "internal" when a
// search failed or something threw (on_progress included). What on_done
// throws is swallowed. No on_progress or on_ply call runs during or after it.
using Callbacks = engine::Reporting<Progress, Expected<Review, Error>>;

class Handle {
 public:
  virtual ~Handle() = default;
  virtual void stop() = 0;
  virtual void wait() = 0;
  virtual bool done() const = 0;
};

// The rules a chess game is read by: its [Variant] tag (Chess960 also as
// Lichess and others spell it: "Chess960", "Chess 960", "Fischerandom",
// "Fischer Random"; "Standard" or none) and what the request asked for
// (`asked`, automatic when it did not). Errors (invalid_request): a variant
// Kibitz does not play, or one the request contradicts.
Expected<ChessVariant, Error> game_variant(const record::Game& record, ChessVariant asked);

// Starts reviewing one game. Errors at once: invalid_fen (bad [FEN] tag),
// illegal_move (naming ply and token), invalid_request.
Expected<std::shared_ptr<Handle>, Error> start(engine::Service& service, GameKind game,
                                               const record::Game& record, const Options& options,
                                               Callbacks callbacks);

// The pure part, for tests: judgments and summaries from evaluations.
double winning_chances(GameKind game, const engine::Score& mover_view);
Judgment judge(GameKind game, const engine::Score& before, const engine::Score& after,
               const Thresholds& t);

}  // namespace kibitz::review
