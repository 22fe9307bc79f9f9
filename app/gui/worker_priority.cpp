#include "worker_priority.h"

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace liftlab {

namespace {
// Each nice step is ≈ 1.25× less CPU weight under contention: +5 gives the GUI thread about three
// times a worker's share, while an idle GUI leaves the workers every cycle.
constexpr int kWorkerNice = 5;
}  // namespace

void lowerCurrentThreadPriority() {
#if defined(__linux__)
    // On Linux the nice value belongs to the thread (its tid), not to the whole process.
    const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
    const int current = ::getpriority(PRIO_PROCESS, tid);
    ::setpriority(PRIO_PROCESS, tid, current + kWorkerNice);
#endif
}

}  // namespace liftlab
