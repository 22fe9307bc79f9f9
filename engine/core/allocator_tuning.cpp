#include "core/allocator_tuning.h"

#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace liftlab {

namespace {

// glibc caps M_MMAP_THRESHOLD at 4 MiB · sizeof(long) = 32 MiB on 64-bit; blocks above it are
// rare (datasets, landscape grids) and mmap'ed once.
constexpr int kMmapThreshold = 32 * 1024 * 1024;
// Free memory at the top of the heap is returned to the OS only beyond this much.
constexpr int kTrimThreshold = 512 * 1024 * 1024;
// Extra memory asked of the OS each time the heap grows, so growth happens rarely.
constexpr int kTopPad = 16 * 1024 * 1024;

}  // namespace

bool tune_allocator() {
    if (std::getenv("LIFTLAB_MALLOC_DEFAULTS") != nullptr) return false;  // to measure the defaults
#if defined(__GLIBC__)
    bool ok = ::mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1;
    ok = ::mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 1 && ok;
    ok = ::mallopt(M_TOP_PAD, kTopPad) == 1 && ok;
    return ok;
#else
    return false;
#endif
}

}  // namespace liftlab
