// OpenBLAS's kernel choice (core/blas_core.h): named, and overridden only when OpenBLAS chose
// kernels narrower than the CPU's vector unit, never against the user's OPENBLAS_CORETYPE or
// "keep".
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/blas_core.h"
#include "core/blas_self_check.h"

#include <cmath>
#include <optional>
#include <vector>

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

TEST(BlasSelfCheck, ThisMachinesKernelsAgreeWithPlainLoops) {
    // sgemm, dgemm, dsyrk, dpotrf on odd sizes against triple loops, within 4 (k + 1) u |A||B|.
    const auto check = liftlab::blas_self_check();
    EXPECT_TRUE(check.passed) << check.summary;
    EXPECT_NE(check.summary.find("12 cases"), std::string::npos) << check.summary;
}

TEST(BlasSelfCheck, AWrongReferenceFailsTheCheckNamingTheKernel) {
    // One dgemm entry off by a part in 10⁶ is ~10⁹ rounding bounds away: the check must fail and
    // say where (the fallback path of app/common/passive_openmp.cpp; tests/cli/blas_choice.sh
    // sees the whole fallback in a re-executed liftlab-cli).
    const auto check = liftlab::blas_self_check(liftlab::wrong_blas_reference());
    EXPECT_FALSE(check.passed);
    EXPECT_NE(check.summary.find("dgemm 7 × 5 × 3: entry (0, 0)"), std::string::npos)
        << check.summary;
    // A reference that is wrong by less than rounding passes: the bound is not too tight.
    auto near = liftlab::plain_blas_reference();
    const auto plain = near.sgemm;
    near.sgemm = [plain](int m, int n, int k, const float* a, const float* b, float* c) {
        plain(m, n, k, a, b, c);
        c[0] = std::nextafter(c[0], 2 * c[0]);  // one ulp
    };
    EXPECT_TRUE(liftlab::blas_self_check(near).passed);
}

TEST(BlasCore, ChoiceIsReadFromTheFrontEndsEnvironment) {
    auto set = [](const char* k, const char* v) {
        if (v)
            ::setenv(k, v, 1);
        else
            ::unsetenv(k);
    };
    const char* names[] = {"OPENBLAS_CORETYPE", liftlab::kBlasRequestedVariable,
                           liftlab::kBlasDetectedVariable, liftlab::kBlasCheckVariable};
    std::vector<std::pair<std::string, std::optional<std::string>>> saved;
    for (const char* n : names) {
        const char* v = std::getenv(n);
        saved.emplace_back(n, v ? std::optional<std::string>(v) : std::nullopt);
        ::unsetenv(n);
    }
    EXPECT_EQ(liftlab::blas_choice().source, "openblas");
    set("OPENBLAS_CORETYPE", "Haswell");
    EXPECT_EQ(liftlab::blas_choice().source, "environment");
    set(liftlab::kBlasRequestedVariable, "Haswell");
    set(liftlab::kBlasDetectedVariable, "Prescott");
    set(liftlab::kBlasCheckVariable, "passed: fine");
    auto c = liftlab::blas_choice();
    EXPECT_EQ(c.source, "liftlab");
    EXPECT_EQ(c.detected, "Prescott");
    set(liftlab::kBlasCheckVariable, "failed: dgemm");
    EXPECT_EQ(liftlab::blas_choice().source, "liftlab-fallback");
    for (const auto& [n, v] : saved) set(n.c_str(), v ? v->c_str() : nullptr);
}
