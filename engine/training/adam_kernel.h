#pragma once
// The element loop of FusedAdam (training/fused_adam.h), apart from LibTorch so that it is
// compiled with -O3 -fno-math-errno (vectorised square roots) and without the LibTorch PCH.
#include <cstdint>

namespace liftlab {

struct AdamCoefficients {
    double clip = 1.0;  // c: the global-norm clip factor (1: none)
    double beta1 = 0.9, beta2 = 0.999;
    double step_size = 0.0;     // lr / (1 − β₁ᵗ)
    double inv_sqrt_bc2 = 1.0;  // 1 / √(1 − β₂ᵗ)
    double eps = 1e-8;
};

// One Adam update of n elements.
void adam_update(float* p, float* m, float* v, const float* g, int64_t n,
                 const AdamCoefficients& k);
void adam_update(double* p, double* m, double* v, const double* g, int64_t n,
                 const AdamCoefficients& k);

// The same update of a rows × cols parameter whose gradient is Σ_k g[k·rows + i] h[k·cols + j]
// (K outer-product terms), formed element by element; with K = 1 each gradient entry is the one
// product g_i h_j, exactly as the dense outer product would hold it.
void adam_update_outer(float* p, float* m, float* v, int64_t rows, int64_t cols, const float* g,
                       const float* h, int64_t K, const AdamCoefficients& k);
void adam_update_outer(double* p, double* m, double* v, int64_t rows, int64_t cols, const double* g,
                       const double* h, int64_t K, const AdamCoefficients& k);

}  // namespace liftlab
