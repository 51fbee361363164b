// Which work goes first: interactive work (WebSocket, synchronous REST)
// before batch work (jobs, reviews). The scheduler's alone: the engine
// searches what it is given, whatever its priority.
#pragma once

namespace kibitz::server {

enum class Priority { interactive = 0, batch = 1 };

}  // namespace kibitz::server
