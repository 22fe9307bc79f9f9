// glibc malloc settings for a training process. LibTorch frees its step temporaries (activations,
// gradients, quadrature grids of a few hundred kB to MB) at the end of every step; with glibc's
// defaults blocks that large are mmap'ed and unmapped each time, or the heap top is trimmed, so
// the next step faults the same pages in again (issue 12 measured ≈ 2 100–2 600 page faults per
// ICNN step and ≈ 27 % of the CPU in the kernel). Keeping freed memory in the process removes that
// churn; the price is a resident set that stays at its peak, which a training run reaches anyway.
#pragma once

namespace liftlab {

// Call once, first thing in main() (before threads start). Raises the mmap threshold to its
// maximum and the trim threshold far above a step's working set; leaves glibc's arena count as
// it is (one arena per worker thread keeps parallel seeds from contending on one lock).
// Returns false when a setting was refused (non-glibc C library: nothing changes) or when the
// environment variable LIFTLAB_MALLOC_DEFAULTS is set (glibc's defaults kept, for comparison).
bool tune_allocator();

}  // namespace liftlab
