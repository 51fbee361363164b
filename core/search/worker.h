// The search's workers and what they share: one Worker per thread of a root
// search, its stack and history tables, the root moves it sorts, and the
// Shared state of the root search (the table, the stop flag, the limits).
// The search itself, Worker's member functions, is search/search.h.
#pragma once

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

#include "search/game.h"
#include "search/memory.h"
#include "search/time_manager.h"
#include "tt/table.h"

KIBITZ_NAMESPACE(search) {

// A game with continuation history (search below) says how many (piece,
// destination) indices its moves have; 0 or absent: none.
template <class G>
constexpr int continuation_size() {
  if constexpr (requires { G::kContinuationSize; })
    return G::kContinuationSize;
  else
    return 0;
}

// A game that can tell what a capture wins at most (the victim, a promotion)
// lets quiescence search skip captures that cannot reach alpha.
template <class G>
concept HasCaptureGain = requires(const typename G::Position& p, typename G::Move m) {
  { G::capture_gain(p, m) } -> std::convertible_to<int>;
};

// A game that can tell a move's key before making it lets the search fetch
// the child's table entry early; otherwise it is fetched after the move.
template <class G>
concept HasKeyAfter = requires(const typename G::Position& p, typename G::Move m) {
  { G::key_after(p, m) } -> std::convertible_to<uint64_t>;
};

// Whether moves of one node give check, asked for each late move that
// pruning would skip: a game with a CheckTest (chess) builds it at the first
// question and answers the rest from it; others ask G::gives_check. The
// node's position must be the same at each question (children undone).
template <Game G>
class GivesCheck {
  static constexpr bool kHasTest = requires { typename G::CheckTest; };
  struct None {};
  template <class T>
  struct TestOf {
    using type = std::optional<typename T::CheckTest>;
  };
  using Test = typename std::conditional_t<kHasTest, TestOf<G>, std::type_identity<None>>::type;

 public:
  explicit GivesCheck(const typename G::Position& pos) : pos_(pos) {}
  bool operator()(typename G::Move m) {
    if constexpr (kHasTest) {
      if (!test_) test_.emplace(pos_);
      return (*test_)(m);
    } else {
      return G::gives_check(pos_, m);
    }
  }

 private:
  const typename G::Position& pos_;
  [[no_unique_address]] Test test_;
};

// A game with endgame tablebases (chess: Syzygy, chess/game.h) lets the
// search probe them: WDL inside the tree, the DTZ ranking of the root moves.
template <class G>
concept HasTablebases = requires(const typename G::Position& p,
                                 const std::vector<typename G::Move>& moves) {
  { G::tb_largest() } -> std::convertible_to<int>;
  { G::tb_probe_wdl(p, 0) } -> std::same_as<std::optional<int>>;
  {G::tb_rank_root(p, moves)};
};

template <Game G>
struct RootMove {
  using Move = typename G::Move;
  explicit RootMove(Move m) : move(m), pv{m} {}

  Move move;
  Value score = -kValueInfinite;
  Value previous_score = -kValueInfinite;
  Bound bound = BoundExact;  // lower/upper when the last search of it failed high/low
  int sel_depth = 0;
  uint64_t nodes = 0;  // this worker's nodes under the move, every iteration together
  std::vector<Move> pv;
  // When the tablebases cover the root: the move's DTZ rank (higher is
  // better; every move 0 otherwise) and the score its result is worth.
  int tb_rank = 0;
  Value tb_score = kValueZero;

  // Sorting: a better tablebase rank first, then the best score; untouched
  // moves keep their previous order.
  bool operator<(const RootMove& o) const {
    if (tb_rank != o.tb_rank) return tb_rank > o.tb_rank;
    return score != o.score ? score > o.score : previous_score > o.previous_score;
  }
};

template <Game G>
class Worker;

// What the workers of one root search share.
template <Game G>
struct Shared {
  using Move = typename G::Move;

  Shared(const typename G::Position& root_pos, std::vector<Move> moves, int lines,
         const Limits& limits, tt::Table& table, bool restricted)
      : root(root_pos),
        root_moves(std::move(moves)),
        restricted_root(restricted),
        multipv(std::clamp(lines, 1, std::max(1, int(root_moves.size())))),
        time(limits, G::white_to_move(root_pos), Clock::now()),
        tt(table) {
    if constexpr (HasTablebases<G>) rank_by_tablebases();
  }

  typename G::Position root;
  std::vector<Move> root_moves;
  // root_moves are chosen moves (searchmoves), not every legal move.
  bool restricted_root;
  int multipv;
  TimeManager time;
  tt::Table& tt;
  std::atomic<bool> stop{false};
  // The main worker stopped the search at limits.deadline, short of its
  // own limits (TimeManager::deadline_cuts).
  std::atomic<bool> cut_by_deadline{false};
  std::vector<std::unique_ptr<Worker<G>>> workers;
  // The history tables to start from and to leave for the next search; none:
  // every worker starts from empty tables.
  std::shared_ptr<Memory> memory;
  // Called by the main worker after each completed iteration.
  std::function<void(const Worker<G>&)> on_progress;
  // Tests only: called by every worker after each iteration it completes,
  // with (worker index, depth); empty otherwise (one test per iteration).
  std::function<void(int, int)> iteration_hook;

  // Tablebases (HasTablebases): the most pieces of a position the search
  // probes (0: none), and when they cover the root, its moves' ranks and
  // scores (in the order of root_moves; empty otherwise). As Stockfish
  // does, a root the DTZ tables rank is not probed below: the ranking keeps
  // the result and the search plays for the fastest way there.
  int tb_cardinality = 0;
  std::vector<int> tb_rank;
  std::vector<Value> tb_score;
  bool root_in_tb() const { return !tb_rank.empty(); }

  uint64_t total_nodes() const;
  uint64_t total_tbhits() const;

 private:
  void rank_by_tablebases() {
    tb_cardinality = G::tb_largest();
    if (tb_cardinality == 0) return;
    const auto ranked = G::tb_rank_root(root, root_moves);
    if (!ranked) return;
    for (const auto& r : *ranked) {
      tb_rank.push_back(r.rank);
      // Cursed wins and blessed losses are draws under the fifty-move rule.
      tb_score.push_back(r.wdl >= 2    ? kValueTbWin - 1
                         : r.wdl <= -2 ? -kValueTbWin + 1
                                       : kValueDraw);
    }
    tb_cardinality = 0;
  }
};

template <Game G>
class Worker {
 public:
  using Position = typename G::Position;
  using Move = typename G::Move;

  Worker(Shared<G>& shared, int index);

  // Iterative deepening until a limit or stop.
  void run();

  int index() const { return index_; }
  uint64_t nodes() const { return nodes_.load(std::memory_order_relaxed); }
  uint64_t tbhits() const { return tbhits_.load(std::memory_order_relaxed); }
  int completed_depth() const { return completed_depth_; }
  // The root moves as they stood after the last completed iteration, best
  // first (the MultiPV lines are the first `multipv` of them).
  const std::vector<RootMove<G>>& completed() const { return completed_; }
  int sel_depth() const { return completed_sel_depth_; }

 private:
  struct Stack {
    int ply;
    Move current_move;
    Move killers[2];
    Value static_eval;
    bool in_check;
    bool null_tried;
    int cont_index;  // G::continuation_index of current_move; -1: none (null move, before the root)
    bool tactical;   // current_move is a capture (or a draughts crowning)
    Move excluded;   // the move a singular-extension search leaves out; none: {}
    int double_extensions;  // moves extended by two plies on the way here
  };

  template <bool Pv>
  Value search(Stack* ss, Value alpha, Value beta, Depth depth, bool cut_node);
  template <bool Pv>
  Value qsearch(Stack* ss, Value alpha, Value beta);
  void check_limits();
  // Stops the search for time, marking a stop the deadline forced short of
  // the search's own limits (Shared::cut_by_deadline).
  void stop_for_time();
  void update_pv(int ply, Move m);
  void update_quiet_stats(Stack* ss, Move best, const Move* quiets, int count, Depth depth);
  int continuation_index(Move m) const {
    if constexpr (continuation_size<G>() > 0) return G::continuation_index(pos_, m);
    return -1;
  }
  int& history(Move m) { return history_[G::history_index(pos_, m)]; }
  // Continuation history: how good a move was after the move made `back`
  // plies before it (1: the opponent's last move, 2: our own previous one).
  // This is the row for the move made `back` plies before this node, indexed
  // by G::continuation_index of the move to score; a row of zeros if none
  // (no null move, nor the plies before the root), so scoring never branches.
  const int16_t* continuation_row(const Stack* ss, int back) const {
    static constexpr int16_t kZeros[std::max(continuation_size<G>(), 1)] = {};
    const int prev = (ss - back)->cont_index;
    return prev < 0 ? kZeros : continuation_.data() + size_t(prev) * continuation_size<G>();
  }
  // Our move four plies back counts at half weight.
  int continuation_score(const int16_t* cont1, const int16_t* cont2, const int16_t* cont4,
                         Move m) const {
    if constexpr (continuation_size<G>() > 0) {
      const size_t i = size_t(G::continuation_index(pos_, m));
      return cont1[i] + cont2[i] + cont4[i] / 2;
    }
    return 0;
  }
  // Moves the continuation entries of the move made at `ss` (its
  // G::continuation_index `to`; -1: none) after the moves 1 and 2 plies
  // before, and 4 when `with_four_back` (a cutoff's move and the quiets tried
  // before it; not the fail-low bonus to the opponent's move, as tested).
  void update_continuation(const Stack* ss, int to, int bonus, bool with_four_back);
  static int history_bonus(Depth depth) { return std::min(depth * depth * 16, 1600); }
  // A history entry moved towards +-16384 by `bonus`, less the nearer it is.
  template <class T>
  static void apply_bonus(T& h, int bonus) {
    h = T(h + bonus - h * std::abs(bonus) / 16384);
  }
  Value aspiration(Depth depth, int pv_index);

  Shared<G>& shared_;
  const int index_;
  Position pos_;
  std::vector<RootMove<G>> root_moves_;
  std::vector<RootMove<G>> completed_;
  int pv_idx_ = 0, pv_last_ = 0;
  int sel_depth_ = 0, completed_sel_depth_ = 0;
  Depth root_depth_ = 0;
  int completed_depth_ = 0;
  // Written by this worker only, read by others: a relaxed load and store,
  // not a locked read-modify-write on every node.
  std::atomic<uint64_t> nodes_{0};
  void count_node() {
    nodes_.store(nodes_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  std::atomic<uint64_t> tbhits_{0};  // tablebase probes answered, as nodes_
  void count_tbhit() {
    tbhits_.store(tbhits_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  // The end of the group of root moves of equal tablebase rank that begins
  // at `first` (all of them without tablebases): one MultiPV line chooses
  // among them only.
  int rank_group_end(int first) const {
    int last = first + 1;
    while (last < int(root_moves_.size()) &&
           root_moves_[last].tb_rank == root_moves_[first].tb_rank)
      ++last;
    return last;
  }
  int calls_until_check_ = 0;
  std::vector<int> history_;
  std::vector<int16_t> continuation_;
  Stack stack_[kMaxPly + 10]{};  // stack_ + 7 is the root: ss - 7 .. ss + kMaxPly + 2 valid
  Move pv_[kMaxPly + 2][kMaxPly + 2]{};
  int pv_length_[kMaxPly + 2]{};
};

}  // KIBITZ_NAMESPACE(search)
