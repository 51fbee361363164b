// When a search must stop: depth, nodes, move time, deadline, or a game clock.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "common/limits.h"
#include "common/score.h"

KIBITZ_NAMESPACE(search) {

class TimeManager {
 public:
  TimeManager(const Limits& limits, bool white_to_move, Clock::time_point start)
      : start_(start), limits_(limits) {
    if (limits.movetime_ms) {
      optimum_ms_ = maximum_ms_ = std::max<int64_t>(1, *limits.movetime_ms);
      hard_ = true;
    }
    const int us = white_to_move ? 0 : 1;
    if (limits.time_left[us] && !limits.infinite) {
      // Clock: aim for a share of what is left, never more than it allows.
      const int64_t left = std::max<int64_t>(1, *limits.time_left[us] - limits.move_overhead_ms);
      const int64_t inc = limits.increment[us];
      const int moves_to_go = limits.movestogo > 0 ? std::min(limits.movestogo, 40) : 28;
      const int64_t optimum = left / moves_to_go + inc * 3 / 4;
      const int64_t maximum = std::min(left * 3 / 5, optimum * 5);
      optimum_ms_ = std::clamp<int64_t>(optimum, 1, std::max<int64_t>(1, maximum));
      maximum_ms_ = std::max<int64_t>(1, maximum);
      hard_ = true;
      clock_ = true;
    }
  }

  int64_t elapsed_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start_).count();
  }
  Clock::time_point start() const { return start_; }

  // Checked during the search.
  bool out_of_time() const { return deadline_passed() || own_time_is_up(); }
  // The deadline (a bound of the caller's, not a limit of the search's own)
  // has passed while the search's own time limit, if any, had not: it ends
  // the search short of its limits.
  bool deadline_cuts() const { return deadline_passed() && !own_time_is_up(); }
  // Checked between iterations: with a clock, start no new iteration once
  // the optimum time, scaled by `stability`, has passed. `stability` is below
  // 1 when the best move has not changed for a while, above 1 when it keeps
  // changing. (Stopping at 0.6 of that left a third of the clock unused;
  // this gained 62 Elo at 1 s + 0.01 s, see docs/strength/chess-log.md.)
  bool stop_before_next_iteration(double stability) const {
    if (!clock_) return limits_.movetime_ms && elapsed_ms() >= maximum_ms_;
    return double(elapsed_ms()) > double(optimum_ms_) * stability;
  }
  bool node_limit_reached(uint64_t nodes) const { return limits_.nodes && nodes >= *limits_.nodes; }
  int depth_limit() const {
    return limits_.depth ? std::clamp(*limits_.depth, 1, kMaxPly - 1) : kMaxPly - 1;
  }
  bool infinite() const { return limits_.infinite; }

 private:
  bool deadline_passed() const { return limits_.deadline && Clock::now() >= *limits_.deadline; }
  bool own_time_is_up() const { return hard_ && elapsed_ms() >= maximum_ms_; }

  Clock::time_point start_;
  Limits limits_;
  int64_t optimum_ms_ = 0, maximum_ms_ = 0;
  bool hard_ = false, clock_ = false;
};

}  // KIBITZ_NAMESPACE(search)
