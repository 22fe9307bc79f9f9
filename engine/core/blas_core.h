// OpenBLAS's kernel choice. Debian's OpenBLAS picks its kernels at load time from the CPU's model
// number; on a CPU its table does not know it falls back to "Prescott" (SSE3) kernels although the
// CPU has AVX2 or AVX-512 — as on the 2-core development VM (a Sapphire Rapids Xeon reporting the
// generic "Intel(R) Xeon(R) Processor"), where every matrix product then ran at a fraction of
// the machine's speed (icnn-ebm-1d, 600 steps: 20.2 s → 11.0 s with SkylakeX kernels). The
// choice is only read when the library loads, so the front ends re-execute themselves once with
// OPENBLAS_CORETYPE set (the documented OpenBLAS override) before doing anything else
// (app/common/passive_openmp.h).
#pragma once
#include <string>

namespace liftlab {

// The kernels OpenBLAS is using ("Prescott", "SkylakeX", …), or "" without OpenBLAS.
std::string blas_core_name();

// The OpenBLAS core type to ask for instead, or "": SkylakeX on a CPU with AVX-512 (F, BW, DQ,
// VL) and Haswell on one with AVX2 and FMA, when OpenBLAS has fallen back to Prescott, the user
// has not set OPENBLAS_CORETYPE, and LIFTLAB_BLAS_CORETYPE is not "keep".
std::string better_blas_core();

}  // namespace liftlab
