// The search, written once for both games (see search/game.h): one
// algorithm (iterative deepening, aspiration, the principal-variation search
// in its numbered steps, quiescence), kept in one file though it passes 450
// lines, so that its steps read in order. Its workers and what they share
// are declared in search/worker.h, move picking is search/move_order.h.
//
// Each root search (engine/root_search.h) runs one or more Workers on the
// same root (Lazy SMP): they share nothing but the transposition table and
// the stop flag. Worker 0, the main worker, watches the limits and reports
// each completed iteration.
//
// The table is shared by every search of every client, so it only holds
// what is true of a position. The root's own entry is written only by the
// full-width search of an unrestricted root (no searchmoves, first MultiPV
// line): a later MultiPV line leaves the best move out, and a searchmoves
// search (the review's search of a played move) measures chosen moves, so
// their values are not the position's. Entries below the root stay: their
// searches were not restricted.
//
// Worker::run: iterative deepening, each depth with aspiration windows
// (Worker::aspiration), once per MultiPV line. Worker::search, the
// principal-variation search, in the steps its body numbers: 1 the table,
// 2 the static evaluation, 3 reverse futility, 4 null move, 5 ProbCut
// (chess), 6 internal iterative reduction, 7 the moves scored and picked,
// 8 pruning of late and losing moves, 9 singular extension (chess),
// 10 extensions, 11 late-move reductions and the principal-variation
// search of each move. Worker::qsearch: captures only (and, in check or with
// a draughts capture pending, every legal move: such nodes are never
// static), with delta pruning in chess.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <thread>

#include "search/move_order.h"
#include "search/worker.h"

KIBITZ_NAMESPACE(search) {

namespace detail {

// Late-move reductions: about ln(depth) * ln(move number) / 2 plies.
inline const auto& reductions() {
  static const auto table = [] {
    std::array<std::array<int8_t, 64>, 64> r{};
    for (int d = 1; d < 64; ++d)
      for (int m = 1; m < 64; ++m) r[d][m] = int8_t(0.4 + std::log(d) * std::log(m) / 2.1);
    return r;
  }();
  return table;
}

inline int reduction(Depth depth, int move_count) {
  return reductions()[std::min(depth, 63)][std::min(move_count, 63)];
}

}  // namespace detail

template <Game G>
uint64_t Shared<G>::total_nodes() const {
  uint64_t n = 0;
  for (const auto& w : workers) n += w->nodes();
  return n;
}

template <Game G>
uint64_t Shared<G>::total_tbhits() const {
  // The root's ranking probed each root move once.
  uint64_t n = root_in_tb() ? root_moves.size() : 0;
  for (const auto& w : workers) n += w->tbhits();
  return n;
}

template <Game G>
Worker<G>::Worker(Shared<G>& shared, int index)
    : shared_(shared), index_(index), pos_(shared.root) {
  for (Move m : shared.root_moves) root_moves_.emplace_back(m);
  if (shared.root_in_tb()) {
    for (size_t i = 0; i < root_moves_.size(); ++i) {
      root_moves_[i].tb_rank = shared.tb_rank[i];
      root_moves_[i].tb_score = shared.tb_score[i];
    }
    std::stable_sort(root_moves_.begin(), root_moves_.end());  // best rank first
  }
  completed_ = root_moves_;
  for (auto& st : stack_) st.cont_index = -1;
  for (int i = 0; i < kMaxPly + 3; ++i) stack_[7 + i].ply = i;
  if constexpr (requires { G::prepare(pos_); }) G::prepare(pos_);
}

template <Game G>
void Worker<G>::check_limits() {
  // Only the main worker decides; helpers follow the stop flag.
  if (index_ != 0) return;
  if (--calls_until_check_ > 0) return;
  calls_until_check_ = 512;
  if (shared_.time.node_limit_reached(shared_.total_nodes()))
    shared_.stop.store(true, std::memory_order_relaxed);
  else if (shared_.time.out_of_time())
    stop_for_time();
}

template <Game G>
void Worker<G>::stop_for_time() {
  if (shared_.time.deadline_cuts()) shared_.cut_by_deadline.store(true, std::memory_order_relaxed);
  shared_.stop.store(true, std::memory_order_relaxed);
}

template <Game G>
void Worker<G>::update_pv(int ply, Move m) {
  pv_[ply][0] = m;
  const int child = pv_length_[ply + 1];
  std::copy(pv_[ply + 1], pv_[ply + 1] + child, pv_[ply] + 1);
  pv_length_[ply] = child + 1;
}

template <Game G>
void Worker<G>::run() {
  if (root_moves_.empty()) return;
  // The history tables (1.2 MB for chess) live only while the worker runs,
  // not while its search waits in the pool's queue; at the end they go back
  // to the memory, if there is one, or are freed.
  Histories kept = shared_.memory ? shared_.memory->take(index_) : Histories{};
  history_.swap(kept.main);
  continuation_.swap(kept.continuation);
  if (history_.size() != size_t(G::kHistorySize)) history_.assign(G::kHistorySize, 0);
  const size_t continuation_entries = size_t(continuation_size<G>()) * continuation_size<G>();
  if (continuation_.size() != continuation_entries) continuation_.assign(continuation_entries, 0);
  struct Release {
    Worker& w;
    ~Release() {
      Histories tables{std::move(w.history_), std::move(w.continuation_)};
      try {
        if (w.shared_.memory) w.shared_.memory->give_back(w.index_, std::move(tables));
      } catch (...) {  // no memory to keep them: the next search starts afresh
      }
    }
  } release{*this};
  const int max_depth = shared_.time.depth_limit();
  Move last_best = root_moves_[0].move;
  int best_move_stable = 0;

  for (root_depth_ = 1; root_depth_ <= max_depth; ++root_depth_) {
    // Helpers skip some depths so they search ahead of the main worker
    // rather than in step with it.
    if (index_ > 0 && root_depth_ > 1 && ((root_depth_ + index_) % 3 == 0)) continue;
    for (auto& rm : root_moves_) rm.previous_score = rm.score;

    for (pv_idx_ = 0; pv_idx_ < shared_.multipv; ++pv_idx_) {
      sel_depth_ = 0;
      aspiration(root_depth_, pv_idx_);
      // Keep the lines found so far in order; later lines start after them.
      std::stable_sort(root_moves_.begin() + pv_idx_, root_moves_.end());
      if (shared_.stop.load(std::memory_order_relaxed)) break;
    }
    if (shared_.stop.load(std::memory_order_relaxed)) break;

    std::stable_sort(root_moves_.begin(), root_moves_.begin() + shared_.multipv);
    {
      auto copy = root_moves_;  // may throw: then completed_ stays whole
      completed_.swap(copy);
    }
    completed_depth_ = root_depth_;
    completed_sel_depth_ = std::max(sel_depth_, completed_sel_depth_);
    if (shared_.iteration_hook) shared_.iteration_hook(index_, root_depth_);
    if (index_ != 0) continue;

    if (shared_.on_progress) shared_.on_progress(*this);

    // Mate found at a depth that proves it: no deeper search can improve it
    // (unless the search must run until stopped).
    const Value best = root_moves_[0].score;
    if (!shared_.time.infinite() && is_mate_score(best) && mate_plies(best) > 0 &&
        root_depth_ >= 2 * mate_plies(best) + 2 && shared_.multipv == 1)
      break;
    if (shared_.time.node_limit_reached(shared_.total_nodes())) break;
    best_move_stable = root_moves_[0].move == last_best ? best_move_stable + 1 : 0;
    last_best = root_moves_[0].move;
    double stability = best_move_stable >= 4 ? 0.6 : best_move_stable >= 2 ? 0.85 : 1.3;
    // Effort (chess): the larger the share of this worker's nodes the best
    // move took, the less a longer search is likely to change it.
    if constexpr (continuation_size<G>() > 0) {
      if (root_depth_ >= 6) {
        const double best_share =
            double(root_moves_[0].nodes) / double(std::max<uint64_t>(1, nodes()));
        stability *= std::clamp((1.5 - best_share) * 1.35, 0.5, 1.8);
      }
    }
    if (shared_.time.stop_before_next_iteration(stability)) break;
  }
  if (index_ == 0) {
    // With an infinite search, the result waits for stop() (or a deadline).
    while (shared_.time.infinite() && !shared_.stop.load(std::memory_order_relaxed) &&
           !shared_.time.out_of_time())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (shared_.time.infinite() && !shared_.stop.load(std::memory_order_relaxed)) stop_for_time();
    shared_.stop.store(true, std::memory_order_relaxed);
  }
}

template <Game G>
Value Worker<G>::aspiration(Depth depth, int pv_index) {
  RootMove<G>& rm = root_moves_[pv_index];
  Value prev = rm.previous_score;
  Value delta = 18, alpha = -kValueInfinite, beta = kValueInfinite;
  if (depth >= 4 && prev > -kValueInfinite && !is_mate_score(prev)) {
    delta = 18 + std::abs(prev) / 50;
    alpha = std::max(prev - delta, -kValueInfinite);
    beta = std::min(prev + delta, kValueInfinite);
  }
  Stack* ss = stack_ + 7;
  for (;;) {
    pv_last_ = rank_group_end(pv_index);
    const Value v = search<true>(ss, alpha, beta, depth, false);
    std::stable_sort(root_moves_.begin() + pv_index, root_moves_.end());
    if (shared_.stop.load(std::memory_order_relaxed)) return v;
    if (v <= alpha) {
      beta = (alpha + beta) / 2;
      alpha = std::max(v - delta, -kValueInfinite);
    } else if (v >= beta) {
      beta = std::min(v + delta, kValueInfinite);
    } else {
      return v;
    }
    delta += delta / 2;
  }
}

template <Game G>
template <bool Pv>
Value Worker<G>::search(Stack* ss, Value alpha, Value beta, Depth depth, bool cut_node) {
  const bool root = Pv && ss->ply == 0;
  const int ply = ss->ply;
  if (depth <= 0) return qsearch<Pv>(ss, alpha, beta);
  // A singular-extension search of this node without its table move: no
  // table cutoff or store, no pruning before the moves.
  const Move excluded = ss->excluded;
  const bool singular_search = excluded != Move{};

  check_limits();
  if (Pv) {
    pv_length_[ply] = 0;
    sel_depth_ = std::max(sel_depth_, ply + 1);
  }
  if (!root) {
    if (shared_.stop.load(std::memory_order_relaxed)) return kValueZero;
    if (G::is_draw(pos_, ply)) return kValueDraw;
    if (ply >= kMaxPly) return G::in_check(pos_) ? kValueDraw : G::evaluate(pos_);
    // Mate-distance pruning: no line from here beats a shorter mate found.
    alpha = std::max(mated_in(ply), alpha);
    beta = std::min(mate_in(ply + 1), beta);
    if (alpha >= beta) return alpha;
  }
  count_node();

  // Step 1. Transposition table.
  const uint64_t key = G::key(pos_);
  tt::Data tte{};
  const bool tt_hit = shared_.tt.probe(key, tte);
  const Value tt_value = tt_hit ? tt::value_from_tt(tte.value, ply) : kValueNone;
  const uint16_t tt_code = root ? G::move_code(root_moves_[pv_idx_].move) : tt_hit ? tte.move : 0;
  if (!Pv && !singular_search && tt_hit && tte.depth >= depth && tt_value != kValueNone &&
      (tte.bound & (tt_value >= beta ? BoundLower : BoundUpper)))
    return tt_value;

  // Step 1b. Tablebases (chess, Syzygy): right after a zeroing move, with
  // few enough pieces, the WDL tables know the result under the fifty-move
  // rule (a cursed win or blessed loss is a draw). A win is worth just
  // below a mate, from this ply; it ends the node when its bound does.
  if constexpr (HasTablebases<G>) {
    if (!root && !singular_search && shared_.tb_cardinality > 0) {
      if (const auto wdl = G::tb_probe_wdl(pos_, shared_.tb_cardinality)) {
        count_tbhit();
        const Value v = *wdl >= 2    ? kValueTbWin - ply
                        : *wdl <= -2 ? -kValueTbWin + ply
                                     : kValueDraw;
        const Bound b = *wdl >= 2 ? BoundLower : *wdl <= -2 ? BoundUpper : BoundExact;
        if (b == BoundExact || (b == BoundLower ? v >= beta : v <= alpha)) {
          shared_.tt.store(key, tt::value_to_tt(v, ply), Pv, b, std::min(kMaxPly - 1, depth + 6), 0,
                           kValueNone);
          return v;
        }
      }
    }
  }

  // Step 2. Static evaluation.
  const bool in_check = G::in_check(pos_);
  ss->in_check = in_check;
  Value eval;
  if (in_check) {
    ss->static_eval = eval = kValueNone;
  } else {
    ss->static_eval = eval = tt_hit && tte.eval != kValueNone ? tte.eval : G::evaluate(pos_);
    if (tt_value != kValueNone && (tte.bound & (tt_value > eval ? BoundLower : BoundUpper)))
      eval = tt_value;
  }
  // Improving: the eval rose since our last move (or the one before it, when
  // we were in check then).
  const Value earlier_eval = ply >= 2 && (ss - 2)->static_eval != kValueNone ? (ss - 2)->static_eval
                             : ply >= 4                                      ? (ss - 4)->static_eval
                                                                             : kValueNone;
  const bool improving = !in_check && earlier_eval != kValueNone && ss->static_eval > earlier_eval;

  if (!Pv && !in_check && !singular_search) {
    // Step 3. Reverse futility: far above beta at low depth, trust the eval.
    // The margin a ply: chess 65 cp (as Ethereal's tuned one), draughts 90.
    constexpr Value rfp_margin = continuation_size<G>() > 0 ? 65 : 90;
    if (depth < 8 && eval - rfp_margin * (depth - improving) >= beta && eval < kValueMateInMaxPly)
      return eval;
    // Step 4. Null move: if passing still fails high, the node is a cut node.
    if constexpr (G::kHasNullMove) {
      if (depth >= 3 && eval >= beta && ss->static_eval >= beta && !(ss - 1)->null_tried &&
          G::null_move_allowed(pos_) && beta > kValueMatedInMaxPly) {
        const Depth r = 3 + depth / 4 + std::min((eval - beta) / 200, 3);
        ss->current_move = Move{};
        ss->cont_index = -1;
        ss->null_tried = true;
        G::do_null_move(pos_);
        Value v = -search<false>(ss + 1, -beta, -beta + 1, depth - r, !cut_node);
        G::undo_null_move(pos_);
        ss->null_tried = false;
        if (shared_.stop.load(std::memory_order_relaxed)) return kValueZero;
        if (v >= beta) return v >= kValueTbWinInMaxPly ? beta : v;
      }
    }
    // Step 5. ProbCut (chess): a capture that wins enough by exchange and
    // whose reduced search beats beta by a margin shows the node fails high.
    // Not in draughts, where a capture is forced rather than chosen.
    if constexpr (G::kHasNullMove) {
      const Value probcut_beta = beta + 180 - 60 * improving;
      if (depth >= 5 && std::abs(beta) < kValueMateInMaxPly &&
          !(tt_value != kValueNone && tte.depth >= depth - 3 && tt_value < probcut_beta)) {
        Move captures[G::kMaxMoves];
        int capture_scores[G::kMaxMoves];
        const int n = int(G::generate_tactical(pos_, captures) - captures);
        assert(n <= G::kMaxMoves);  // G::kMaxMoves holds every position's moves
        for (int i = 0; i < n; ++i) capture_scores[i] = G::capture_score(pos_, captures[i]);
        for (int picked = 0; picked < n; ++picked) {
          const Move m = detail::pick_best(captures, capture_scores, picked, n);
          if (!G::see_ge(pos_, m, probcut_beta - ss->static_eval)) continue;
          ss->current_move = m;
          ss->tactical = true;
          if constexpr (continuation_size<G>() > 0) ss->cont_index = G::continuation_index(pos_, m);
          G::do_move(pos_, m);
          Value v = -qsearch<false>(ss + 1, -probcut_beta, -probcut_beta + 1);
          if (v >= probcut_beta)
            v = -search<false>(ss + 1, -probcut_beta, -probcut_beta + 1, depth - 4, !cut_node);
          G::undo_move(pos_, m);
          if (shared_.stop.load(std::memory_order_relaxed)) return kValueZero;
          if (v >= probcut_beta) {
            shared_.tt.store(key, tt::value_to_tt(v, ply), false, BoundLower, depth - 3,
                             G::move_code(m), ss->static_eval);
            return v;
          }
        }
      }
    }
  }
  // Step 6. Internal iterative reduction: without a table move, search less.
  if (!root && depth >= 4 && tt_code == 0 && (Pv || cut_node)) --depth;

  // Step 7. Moves, scored: table move, good tactical moves, killers, quiet
  // moves by history, bad tactical moves.
  Move moves[G::kMaxMoves];
  int scores[G::kMaxMoves];
  Move* end = G::generate_tactical(pos_, moves);
  const int tactical_count = int(end - moves);
  end = G::generate_quiet(pos_, end);
  const int count = int(end - moves);
  // Tactical and quiet moves are disjoint parts of the legal moves, which
  // G::kMaxMoves holds (chess/movegen.h, draughts/types.h).
  assert(count <= G::kMaxMoves);
  if (count == 0) return root ? kValueZero : G::no_moves_value(pos_, ply);
  const int16_t* cont1 = continuation_row(ss, 1);
  const int16_t* cont2 = continuation_row(ss, 2);
  const int16_t* cont4 = continuation_row(ss, 4);
  bool tt_tactical = false;
  int tt_index = -1;  // the first move with the table move's code: picked first
  for (int i = 0; i < count; ++i) {
    const Move m = moves[i];
    if (tt_code && G::move_code(m) == tt_code) {
      if (tt_index < 0) tt_index = i;
      scores[i] = 1 << 30;
      tt_tactical = i < tactical_count || G::is_tactical(pos_, m);
    } else if (i < tactical_count || G::is_tactical(pos_, m))  // captures; draughts crownings
      scores[i] = G::see_ge(pos_, m, 0) ? (1 << 28) + G::capture_score(pos_, m)
                                        : -(1 << 20) + G::capture_score(pos_, m);
    else if (m == ss->killers[0])
      scores[i] = (1 << 27);
    else if (m == ss->killers[1])
      scores[i] = (1 << 27) - 1;
    else
      scores[i] = history(m) + continuation_score(cont1, cont2, cont4, m);
  }
  // A forced reply does not cost depth.
  const Depth single_reply = count == 1 ? 1 : 0;

  Value best_value = -kValueInfinite;
  Move best_move{};
  Move quiets[64];
  int quiet_count = 0, move_count = 0;
  (ss + 1)->killers[0] = (ss + 1)->killers[1] = Move{};
  GivesCheck<G> checks(pos_);

  for (int picked = 0; picked < count; ++picked) {
    // Chess: the first moves are picked one by one (a cut usually comes
    // early), the rest sorted once. Draughts, with few moves, as tested.
    if constexpr (continuation_size<G>() > 0)
      if (picked == detail::kPickedBeforeSort)
        detail::sort_rest<Move, G::kMaxMoves>(moves, scores, picked, count);
    Move m;
    if (continuation_size<G>() > 0 && picked >= detail::kPickedBeforeSort)
      m = moves[picked];
    else if (picked == 0 && tt_index >= 0)  // what pick_best would find, without the pass
      m = detail::pick_at(moves, scores, picked, tt_index);
    else
      m = detail::pick_best(moves, scores, picked, count);

    if (root) {  // only the root moves of this MultiPV line (and searchmoves)
      const auto first = root_moves_.begin() + pv_idx_, last = root_moves_.begin() + pv_last_;
      if (std::find_if(first, last, [&](const RootMove<G>& r) { return r.move == m; }) == last)
        continue;
    }
    if (m == excluded) continue;
    ++move_count;
    const bool tactical = G::is_tactical(pos_, m);
    const bool killer = m == ss->killers[0] || m == ss->killers[1];

    // Step 8. Pruning of late and losing moves at low depth; never of checks
    // (asked last: it costs the most).
    if (!root && best_value > kValueMatedInMaxPly) {
      const bool late_quiet =
          !tactical && !in_check &&
          ((depth <= 7 && move_count >= (4 + depth * depth) / (2 - improving)) ||
           (!killer && depth <= 6 && ss->static_eval != kValueNone &&
            ss->static_eval + 110 + 110 * depth <= alpha));
      const bool losing_tactical =
          tactical && depth <= 6 && scores[picked] < 0 && !G::see_ge(pos_, m, -100 * depth);
      if ((late_quiet || losing_tactical) && !checks(m)) continue;
    }

    // Step 9. Singular extension (chess): when the table move is a lower
    // bound and every other move, searched at half depth, fails low against
    // a margin below it, the table move alone holds the node: search it
    // deeper. When the others also beat beta, the node fails high (multi-cut);
    // when the table move's bound alone does, it is searched less.
    Depth singular_extension = 0;
    if constexpr (continuation_size<G>() > 0) {
      if (!root && !singular_search && depth >= 6 && tt_hit && G::move_code(m) == tt_code &&
          (tte.bound & BoundLower) && tte.depth >= depth - 3 && tt_value != kValueNone &&
          std::abs(tt_value) < kValueMateInMaxPly && ply < 2 * root_depth_) {
        const Value singular_beta = tt_value - 2 * depth;
        ss->excluded = m;
        const Value v =
            search<false>(ss, singular_beta - 1, singular_beta, (depth - 1) / 2, cut_node);
        ss->excluded = Move{};
        if (shared_.stop.load(std::memory_order_relaxed)) return kValueZero;
        if (v < singular_beta)
          singular_extension =
              !Pv && v < singular_beta - 20 && (ss - 1)->double_extensions < 6 ? 2 : 1;
        else if (singular_beta >= beta)
          return singular_beta;
        else if (tt_value >= beta || cut_node)
          singular_extension = -1;
      }
    }
    ss->double_extensions = (ss - 1)->double_extensions + (singular_extension == 2);

    if constexpr (HasKeyAfter<G>) shared_.tt.prefetch(G::key_after(pos_, m));
    const uint64_t nodes_before = root ? nodes() : 0;
    ss->current_move = m;
    ss->tactical = tactical;
    if constexpr (continuation_size<G>() > 0) ss->cont_index = G::continuation_index(pos_, m);
    if (Pv) pv_length_[ply + 1] = 0;  // a child searched with a null window leaves no line
    G::do_move(pos_, m);
    if constexpr (!HasKeyAfter<G>) shared_.tt.prefetch(G::key(pos_));
    const bool gives_check = G::in_check(pos_);
    // Step 10. Extensions: checks (bounded so lines cannot grow forever) and
    // forced replies; a singular extension counts if larger, or if negative.
    const Depth check_extension = (gives_check || single_reply) && ply < 2 * root_depth_ ? 1 : 0;
    const Depth extension =
        singular_extension < 0 ? singular_extension : std::max(singular_extension, check_extension);
    Depth new_depth = depth - 1 + extension;

    Value value;
    // Step 11. Late-move reductions, then principal-variation search.
    if (depth >= 2 && move_count > 1 + int(Pv) && (!tactical || scores[picked] < 0)) {
      int r = detail::reduction(depth, move_count);
      r += !Pv + cut_node - improving - killer - int(gives_check);
      // A capture as the table move: the quiet moves after it are less likely.
      if constexpr (continuation_size<G>() > 0) r += !tactical && tt_tactical;  // chess only
      // Less for a quiet move with a good record. With continuation history
      // (chess) the record is the move's ordering score, history plus both
      // continuations, about twice the range (a killer counts as the top of
      // it); without (draughts) its history alone. Each as tested by games.
      if (!tactical) {
        if constexpr (continuation_size<G>() > 0)
          r -= std::clamp(scores[picked] / 12000, -2, 2);
        else
          r -= std::clamp(history(m) / 6000, -2, 2);
      }
      const Depth d = std::clamp(new_depth - r, 1, new_depth);
      value = -search<false>(ss + 1, -(alpha + 1), -alpha, d, true);
      if (value > alpha && d < new_depth) {
        // The reduced search beat alpha: search again a ply deeper when it
        // beat it by far, a ply shallower when only just.
        if constexpr (continuation_size<G>() > 0)  // chess only, as tested
          new_depth += (value > best_value + 40 + 2 * new_depth) - (value < best_value + new_depth);
        if (d < new_depth)
          value = -search<false>(ss + 1, -(alpha + 1), -alpha, new_depth, !cut_node);
      }
    } else if (!Pv || move_count > 1) {
      value = -search<false>(ss + 1, -(alpha + 1), -alpha, new_depth, !cut_node);
    } else {
      value = alpha + 1;  // the first move of a PV node goes straight to the full window
    }
    if (Pv && (move_count == 1 || (value > alpha && (root || value < beta))))
      value = -search<true>(ss + 1, -beta, -alpha, new_depth, false);
    G::undo_move(pos_, m);

    if (shared_.stop.load(std::memory_order_relaxed)) return kValueZero;

    if (root) {
      RootMove<G>& rm = *std::find_if(root_moves_.begin(), root_moves_.end(),
                                      [&](const RootMove<G>& r) { return r.move == m; });
      rm.nodes += nodes() - nodes_before;
      if (move_count == 1 || value > alpha) {
        rm.score = value;
        rm.sel_depth = sel_depth_;
        rm.bound = value >= beta ? BoundLower : value <= alpha ? BoundUpper : BoundExact;
        rm.pv.assign(1, m);
        rm.pv.insert(rm.pv.end(), pv_[1], pv_[1] + pv_length_[1]);
      } else {
        rm.score = -kValueInfinite;  // not best: keep it below the searched lines
      }
    }

    if (value > best_value) {
      best_value = value;
      if (value > alpha) {
        best_move = m;
        if (Pv && !root) update_pv(ply, m);
        if (value >= beta) break;
        alpha = value;
      }
    }
    if (!tactical && m != best_move && quiet_count < 64) quiets[quiet_count++] = m;
  }

  if (move_count == 0) return root ? kValueZero : alpha;  // every move pruned or excluded

  if (best_move != Move{} && best_value >= beta && !G::is_tactical(pos_, best_move))
    update_quiet_stats(ss, best_move, quiets, quiet_count, depth);
  // Every move failed low (none raised alpha): the opponent's quiet move
  // that led here was good for them, in its continuation history.
  if (!root && !singular_search && best_move == Move{} && !(ss - 1)->tactical)
    update_continuation(ss - 1, (ss - 1)->cont_index, history_bonus(depth), false);

  const Bound bound = best_value >= beta            ? BoundLower
                      : (Pv && best_move != Move{}) ? BoundExact
                                                    : BoundUpper;
  // The root's value is the position's only when every legal move was
  // searched: not for a later MultiPV line, nor for searchmoves.
  if (!singular_search && (!root || (pv_idx_ == 0 && !shared_.restricted_root)))
    shared_.tt.store(key, tt::value_to_tt(best_value, ply), Pv, bound, depth,
                     best_move != Move{} ? G::move_code(best_move) : 0, ss->static_eval);
  return best_value;
}

template <Game G>
void Worker<G>::update_quiet_stats(Stack* ss, Move best, const Move* quiets, int count,
                                   Depth depth) {
  if (ss->killers[0] != best) {
    ss->killers[1] = ss->killers[0];
    ss->killers[0] = best;
  }
  const int bonus = history_bonus(depth);
  apply_bonus(history(best), bonus);
  update_continuation(ss, continuation_index(best), bonus, true);
  for (int i = 0; i < count; ++i) {
    apply_bonus(history(quiets[i]), -bonus);
    update_continuation(ss, continuation_index(quiets[i]), -bonus, true);
  }
}

template <Game G>
void Worker<G>::update_continuation(const Stack* ss, int to, int bonus, bool with_four_back) {
  if constexpr (continuation_size<G>() > 0) {
    if (to < 0) return;
    for (int back : {1, 2, 4}) {
      if (back == 4 && !with_four_back) break;
      const int prev = (ss - back)->cont_index;
      if (prev < 0) continue;
      apply_bonus(continuation_[size_t(prev) * continuation_size<G>() + size_t(to)], bonus);
    }
  }
}

template <Game G>
template <bool Pv>
Value Worker<G>::qsearch(Stack* ss, Value alpha, Value beta) {
  const int ply = ss->ply;
  if (Pv) {
    pv_length_[ply] = 0;
    sel_depth_ = std::max(sel_depth_, ply + 1);
  }
  check_limits();
  if (shared_.stop.load(std::memory_order_relaxed)) return kValueZero;
  if (G::is_draw(pos_, ply)) return kValueDraw;
  if (ply >= kMaxPly) return G::in_check(pos_) ? kValueDraw : G::evaluate(pos_);
  count_node();

  const uint64_t key = G::key(pos_);
  tt::Data tte{};
  const bool tt_hit = shared_.tt.probe(key, tte);
  const Value tt_value = tt_hit ? tt::value_from_tt(tte.value, ply) : kValueNone;
  if (!Pv && tt_hit && tt_value != kValueNone &&
      (tte.bound & (tt_value >= beta ? BoundLower : BoundUpper)))
    return tt_value;

  const bool stand_pat = G::stand_pat_allowed(pos_);
  Value best_value = -kValueInfinite, static_eval = kValueNone;
  if (stand_pat) {
    static_eval = tt_hit && tte.eval != kValueNone ? tte.eval : G::evaluate(pos_);
    best_value = static_eval;
    if (tt_value != kValueNone && (tte.bound & (tt_value > best_value ? BoundLower : BoundUpper)))
      best_value = tt_value;
    if (best_value >= beta) return best_value;
    alpha = std::max(alpha, best_value);
  }

  Move moves[G::kMaxMoves];
  int scores[G::kMaxMoves];
  const int count = int(G::generate_qsearch(pos_, moves) - moves);
  assert(count <= G::kMaxMoves);
  if (count == 0 && !stand_pat) return G::no_moves_value(pos_, ply);
  for (int i = 0; i < count; ++i)
    scores[i] = (tt_hit && G::move_code(moves[i]) == tte.move ? 1 << 30 : 0) +
                (G::is_tactical(pos_, moves[i]) ? G::capture_score(pos_, moves[i])
                                                : history(moves[i]) / 64);

  Move best_move{};
  GivesCheck<G> checks(pos_);
  for (int picked = 0; picked < count; ++picked) {
    const Move m = detail::pick_best(moves, scores, picked, count);
    // Delta pruning (chess): a capture whose victim, with a margin, still
    // leaves the static evaluation at or below alpha, unless it checks.
    // Asked before the exchange, which costs more.
    if constexpr (HasCaptureGain<G>)
      if (stand_pat && static_eval + G::capture_gain(pos_, m) + 200 <= alpha && !checks(m))
        continue;
    // Losing captures cannot raise a standing pat.
    if (stand_pat && !G::see_ge(pos_, m, 0)) continue;

    // Only for moves searched: a pruned move's entry would be fetched for nothing.
    if constexpr (HasKeyAfter<G>) shared_.tt.prefetch(G::key_after(pos_, m));
    ss->current_move = m;
    if (Pv) pv_length_[ply + 1] = 0;
    G::do_move(pos_, m);
    if constexpr (!HasKeyAfter<G>) shared_.tt.prefetch(G::key(pos_));
    const Value value = -qsearch<Pv>(ss + 1, -beta, -alpha);
    G::undo_move(pos_, m);
    if (shared_.stop.load(std::memory_order_relaxed)) return kValueZero;
    if (value > best_value) {
      best_value = value;
      if (value > alpha) {
        best_move = m;
        if (Pv) update_pv(ply, m);
        if (value >= beta) break;
        alpha = value;
      }
    }
  }
  if (best_value == -kValueInfinite)
    return G::no_moves_value(pos_, ply);  // every evasion pruned? none are

  shared_.tt.store(key, tt::value_to_tt(best_value, ply), Pv,
                   best_value >= beta ? BoundLower : BoundUpper, kDepthQs,
                   best_move != Move{} ? G::move_code(best_move) : 0, static_eval);
  return best_value;
}

}  // KIBITZ_NAMESPACE(search)
