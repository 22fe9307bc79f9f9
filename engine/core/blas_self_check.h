// A numerical self-check of the BLAS/LAPACK kernels the engine uses (sgemm through LibTorch's
// float32 products, dgemm, dsyrk and dpotrf in the closed-form solves), run before the front ends
// trust kernels they chose themselves (core/blas_core.h): some OpenBLAS builds are known to give
// wrong results on processors they do not know. Each kernel runs on a few odd sizes and is
// compared with plain loops; a difference beyond the rounding bound fails the check, and the front
// end falls back to the kernels OpenBLAS detected (app/common/passive_openmp.h).
#pragma once
#include <functional>
#include <string>

namespace liftlab {

// Column-major reference kernels, same conventions as the BLAS calls (no transposes).
struct BlasReference {
    // C (m × n) = A (m × k) B (k × n)
    std::function<void(int m, int n, int k, const float* a, const float* b, float* c)> sgemm;
    std::function<void(int m, int n, int k, const double* a, const double* b, double* c)> dgemm;
    // lower triangle of C (n × n) = A (n × k) Aᵀ
    std::function<void(int n, int k, const double* a, double* c)> dsyrk;
    // lower Cholesky factor of A (n × n), in place
    std::function<void(int n, double* a)> dpotrf;
};

// Triple loops (accumulated in double, the Cholesky in long double).
BlasReference plain_blas_reference();
// For tests of the fallback: the plain loops with one dgemm entry off by one part in 10⁶ (far
// beyond rounding), so that any BLAS "fails" the check against it.
BlasReference wrong_blas_reference();

struct BlasSelfCheck {
    bool passed = false;
    // "sgemm, dgemm, dsyrk, dpotrf agree on 12 cases (largest error 0.03 of the bound)", or the
    // first disagreement: "dgemm 97 × 101 × 129: entry (3, 7) off by 4.1e-3, bound 1.2e-12".
    std::string summary;
};

// Runs the loaded BLAS against `reference` (seeded inputs, well-conditioned SPD matrices).
BlasSelfCheck blas_self_check(const BlasReference& reference = plain_blas_reference());

}  // namespace liftlab
