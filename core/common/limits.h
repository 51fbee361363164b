// How long a search may go on: a request's limits. Neutral (one copy, not
// per instruction set) and at the bottom of the layers: the engine's
// requests carry them and the search's time manager reads them. The engine
// names them engine::Limits and engine::Clock (engine/analysis.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace kibitz {

using Clock = std::chrono::steady_clock;

struct Limits {
  std::optional<int> depth;       // plies
  std::optional<uint64_t> nodes;  // all threads together
  std::optional<int64_t> movetime_ms;
  std::optional<Clock::time_point> deadline;  // absolute, e.g. a job's deadline
  bool infinite = false;                      // until stopped (other limits still apply)
  // Game clock (UCI go wtime/btime/winc/binc/movestogo), in ms.
  std::optional<int64_t> time_left[2];  // [white, black]
  int64_t increment[2] = {0, 0};
  int movestogo = 0;
  int64_t move_overhead_ms = 30;  // kept in reserve per move with a clock
};

}  // namespace kibitz
