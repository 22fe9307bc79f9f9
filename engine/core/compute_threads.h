// One setting for every compute thread pool of the process. LibTorch's intra-op pool (OpenMP) and
// OpenBLAS's own pthread pool are separate: torch::set_num_threads leaves OpenBLAS at one thread
// per core, so a `threads: 1` run used 1.35–2 cores (issue 12). set_compute_threads sets both.
#pragma once

namespace liftlab {

// Sets LibTorch's intra-op threads (for the calling thread and every thread that starts torch work
// later) and OpenBLAS's pool to n ≥ 1. OpenBLAS is found at run time (dlsym); without it only
// torch is set. Also flushes subnormal floats to zero on the calling thread and the threads it
// starts later (FTZ/DAZ; see compute_threads.cpp): every training and landscape thread computes
// the same way, so runs stay identical whatever the thread count.
void set_compute_threads(int n);

// OpenBLAS's current pool size, or -1 when the loaded BLAS is not OpenBLAS.
int blas_threads();

}  // namespace liftlab
