#include "common/thread_slice.h"

#if defined(__linux__)
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#endif

namespace kibitz {

#if defined(__linux__) && defined(SYS_sched_setattr)
namespace {
// The kernel's struct sched_attr (include/uapi/linux/sched/types.h); glibc
// 2.36 has no wrapper for sched_setattr.
struct SchedAttr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;  // for SCHED_OTHER/BATCH: the requested slice, in ns
  uint64_t sched_deadline;
  uint64_t sched_period;
  uint32_t sched_util_min;
  uint32_t sched_util_max;
};
}  // namespace

bool set_thread_slice(std::chrono::nanoseconds slice) {
  const int policy = sched_getscheduler(0);
  if (policy != SCHED_OTHER && policy != SCHED_BATCH && policy != SCHED_IDLE) return false;
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, pid_t(syscall(SYS_gettid)));
  if (errno != 0) return false;
  SchedAttr attr{};
  attr.size = sizeof attr;
  attr.sched_policy = uint32_t(policy);
  attr.sched_nice = nice;
  attr.sched_runtime = uint64_t(slice.count());
  return syscall(SYS_sched_setattr, 0, &attr, 0u) == 0;
}
#else
bool set_thread_slice(std::chrono::nanoseconds) { return false; }
#endif

}  // namespace kibitz
