// Process settings that libraries read only when they are loaded, so the front ends set them and
// re-execute themselves once, before anything else happens:
// - OMP_WAIT_POLICY=PASSIVE. LibTorch's OpenMP worker threads spin while they wait for work.
//   Beside a GUI thread, or a second process on a 2-core machine, that spinning steals the CPU
//   the other side needs (seen here on a busy 2-core machine: a short Fashion-MNIST preset run
//   took 68 s spinning, 16 s passive).
// - OPENBLAS_CORETYPE, when OpenBLAS fell back to its SSE3 kernels on a CPU it does not know
//   (engine/core/blas_core.h) — never over one the user or the machine set; the re-executed
//   process checks the kernels it got against plain loops before it runs anything on them
//   (engine/core/blas_self_check.h) and falls back to OpenBLAS's own choice if they disagree.
#pragma once

namespace liftlab {

// Call first thing in main(). Returns only when nothing needs setting (or re-exec failed).
void ensure_passive_openmp(char** argv);

}  // namespace liftlab
