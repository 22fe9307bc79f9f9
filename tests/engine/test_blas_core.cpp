// OpenBLAS's kernel choice (core/blas_core.h): named, and overridden only when OpenBLAS chose
// kernels narrower than the CPU's vector unit, never against the user's OPENBLAS_CORETYPE or
// "keep".
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/blas_core.h"

using liftlab::better_blas_core_for;
using liftlab::CpuVectorUnits;

TEST(BlasCore, AsksForTheWidestKernelsTheCpuRuns) {
    const CpuVectorUnits avx512{true, true}, avx2{false, true}, sse{false, false};
    // The SSE3 fallback on an unknown model.
    EXPECT_EQ(better_blas_core_for("Prescott", avx512), "SkylakeX");
    EXPECT_EQ(better_blas_core_for("Prescott", avx2), "Haswell");
    EXPECT_EQ(better_blas_core_for("Sandybridge", avx2), "Haswell");
    // AVX2 kernels on an AVX-512 CPU (Debian's OpenBLAS 0.3.21 on an AMD Zen 4).
    EXPECT_EQ(better_blas_core_for("Haswell", avx512), "SkylakeX");
    EXPECT_EQ(better_blas_core_for("Zen", avx512), "SkylakeX");
    EXPECT_EQ(better_blas_core_for("ZEN", avx512), "SkylakeX");
    // Already the widest, or as wide as the CPU allows: kept.
    for (const char* core : {"SkylakeX", "Cooperlake", "SapphireRapids"})
        EXPECT_EQ(better_blas_core_for(core, avx512), "") << core;
    EXPECT_EQ(better_blas_core_for("Haswell", avx2), "");
    EXPECT_EQ(better_blas_core_for("Zen", avx2), "");
    // Never wider than the CPU; nothing to ask without OpenBLAS.
    EXPECT_EQ(better_blas_core_for("Prescott", sse), "");
    EXPECT_EQ(better_blas_core_for("", avx512), "");
}

TEST(BlasCore, NeverOverridesTheUsersChoice) {
    const std::string core = liftlab::blas_core_name();
    if (core.empty()) GTEST_SKIP() << "the BLAS here is not OpenBLAS";
    // The environment may already choose (this workplace's machines set OPENBLAS_CORETYPE):
    // put it aside and restore it after.
    const char* users_core = std::getenv("OPENBLAS_CORETYPE");
    const char* users_keep = std::getenv("LIFTLAB_BLAS_CORETYPE");
    const std::string saved_core = users_core ? users_core : "";
    const std::string saved_keep = users_keep ? users_keep : "";
    ::unsetenv("OPENBLAS_CORETYPE");
    ::unsetenv("LIFTLAB_BLAS_CORETYPE");
    const std::string better = liftlab::better_blas_core();
    EXPECT_EQ(better, better_blas_core_for(core, liftlab::cpu_vector_units()));
    ::setenv("OPENBLAS_CORETYPE", "Haswell", 1);
    EXPECT_EQ(liftlab::better_blas_core(), "");
    ::unsetenv("OPENBLAS_CORETYPE");
    ::setenv("LIFTLAB_BLAS_CORETYPE", "keep", 1);
    EXPECT_EQ(liftlab::better_blas_core(), "");
    ::unsetenv("LIFTLAB_BLAS_CORETYPE");
    EXPECT_EQ(liftlab::better_blas_core(), better);
    if (users_core) ::setenv("OPENBLAS_CORETYPE", saved_core.c_str(), 1);
    if (users_keep) ::setenv("LIFTLAB_BLAS_CORETYPE", saved_keep.c_str(), 1);
}
