// OpenBLAS's kernel choice. Debian's OpenBLAS (0.3.21) picks its kernels at load time from the
// CPU's model number. On a CPU its table does not know it falls back to "Prescott" (SSE3) kernels
// although the CPU has AVX2 or AVX-512 — as on a 2-core development VM (a Sapphire Rapids Xeon
// reporting the generic "Intel(R) Xeon(R) Processor"), where every matrix product then ran at a
// fraction of the machine's speed (icnn-ebm-1d, 600 steps: 20.2 s → 11.0 s with SkylakeX
// kernels). The same holds one step up: AVX2 kernels on an AVX-512 CPU (on the AMD Zen 4 VM,
// forced by OPENBLAS_CORETYPE=Haswell in the environment, a float32 product-bound step takes ≈ 1.5×
// as long as with OpenBLAS's own Cooperlake choice; docs/benchmarks.md, "Zen 4"). The choice is
// only read when the library loads, so the front ends re-execute themselves once with
// OPENBLAS_CORETYPE set (the documented OpenBLAS override) before doing anything else
// (app/common/passive_openmp.h) — never against an OPENBLAS_CORETYPE the user has set.
#pragma once
#include <string>

namespace liftlab {

// The kernels OpenBLAS is using ("Prescott", "SkylakeX", …), or "" without OpenBLAS.
std::string blas_core_name();

// What the CPU can run, for choosing kernels.
struct CpuVectorUnits {
    bool avx512 = false;    // AVX-512 F, BW, DQ and VL: what OpenBLAS's SkylakeX kernels use
    bool avx2_fma = false;  // AVX2 and FMA: what its Haswell kernels use
};
CpuVectorUnits cpu_vector_units();

// The rule alone: the core type to ask for instead of `current` on a CPU with `cpu`, or "" to
// keep it. SkylakeX on an AVX-512 CPU, Haswell on an AVX2 + FMA one, whenever OpenBLAS chose
// kernels for a narrower vector unit (Prescott, Sandybridge, …; Haswell or Zen on AVX-512).
std::string better_blas_core_for(const std::string& current, CpuVectorUnits cpu);

// better_blas_core_for() on this process's OpenBLAS and CPU, or "" when the user (or the
// machine) has set OPENBLAS_CORETYPE or LIFTLAB_BLAS_CORETYPE is "keep". LIFTLAB_BLAS_CORETYPE
// set to a core name asks for that core instead (one the CPU can run; checked like any choice).
std::string better_blas_core();

// How this process's kernels were chosen, from the environment the front end set before it
// re-executed itself (app/common/passive_openmp.h): source "openblas" (OpenBLAS's own
// detection), "environment" (OPENBLAS_CORETYPE set by the user or the machine), "liftlab"
// (asked for by LiftLab after a passed self-check) or "liftlab-fallback" (the self-check failed:
// back to the detected core). Recorded in spec.json (versions.blas_choice).
struct BlasChoice {
    std::string source;
    std::string detected;    // OpenBLAS's own choice (liftlab, liftlab-fallback)
    std::string requested;   // what LiftLab asked for (liftlab, liftlab-fallback)
    std::string self_check;  // "passed: …" / "failed: …" (liftlab, liftlab-fallback)
};
BlasChoice blas_choice();

// The variables the front ends set (and children inherit).
inline constexpr const char* kBlasDetectedVariable = "LIFTLAB_BLAS_DETECTED";
inline constexpr const char* kBlasRequestedVariable = "LIFTLAB_BLAS_REQUESTED";
inline constexpr const char* kBlasCheckVariable = "LIFTLAB_BLAS_CHECK";

}  // namespace liftlab
