// OpenBLAS's kernel choice (core/blas_core.h): named, and overridden only when OpenBLAS fell back
// to Prescott on a CPU with AVX2/AVX-512, never against the user's OPENBLAS_CORETYPE or "keep".
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/blas_core.h"

TEST(BlasCore, OverridesOnlyAFallbackAndNeverTheUsersChoice) {
    const std::string core = liftlab::blas_core_name();
    if (core.empty()) GTEST_SKIP() << "the BLAS here is not OpenBLAS";
    const std::string better = liftlab::better_blas_core();
    if (core != "Prescott") EXPECT_EQ(better, "") << core;
    if (core == "Prescott" && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        EXPECT_TRUE(better == "SkylakeX" || better == "Haswell") << better;
    ::setenv("OPENBLAS_CORETYPE", "Haswell", 1);
    EXPECT_EQ(liftlab::better_blas_core(), "");
    ::unsetenv("OPENBLAS_CORETYPE");
    ::setenv("LIFTLAB_BLAS_CORETYPE", "keep", 1);
    EXPECT_EQ(liftlab::better_blas_core(), "");
    ::unsetenv("LIFTLAB_BLAS_CORETYPE");
    EXPECT_EQ(liftlab::better_blas_core(), better);
}
