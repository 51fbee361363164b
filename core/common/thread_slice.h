// The calling thread's time slice under Linux's EEVDF scheduler (6.12 and
// later honour it). A thread with a shorter slice than the one running
// preempts it when it wakes, instead of waiting for the running thread's
// slice to end: a server's I/O threads ask for a short one so that a request
// is answered at once while search threads keep every core busy.
#pragma once

#include <chrono>

namespace kibitz {

// Asks for `slice` (the kernel clamps it to 0.1..100 ms), keeping the
// thread's policy and nice value. Needs no privilege. False when the
// kernel refused it; older kernels accept and ignore it.
bool set_thread_slice(std::chrono::nanoseconds slice);

}  // namespace kibitz
