// LibTorch's OpenMP worker threads spin while they wait for work. Beside a GUI thread, or a
// second process on a 2-core machine, that spinning steals the CPU the other side needs (seen
// here on a busy 2-core machine: a short Fashion-MNIST preset run took 68 s spinning, 16 s
// passive). GNU OpenMP reads OMP_WAIT_POLICY only when it is loaded, so the front ends set it
// and re-execute themselves once, before anything else happens.
#pragma once

namespace liftlab {

// Call first thing in main(). Returns only when the policy is already set (or re-exec failed).
void ensure_passive_openmp(char** argv);

}  // namespace liftlab
