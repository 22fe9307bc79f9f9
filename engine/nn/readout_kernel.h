#pragma once
// The lifter's readout products on one pooled code, y = b + W h and ∂ℓ/∂h = Wᵀ g, for a row-major
// rows × cols float32 W with cols small (96) and rows large (≈ 33 000 for the reference lifter).
// Both are bound by reading W once; OpenBLAS's single-thread sgemv on this skinny shape reached
// a third of the bandwidth the fused Adam pass gets. Compiled apart from LibTorch (-O3, no PCH).
#include <cstdint>

namespace liftlab {

// y[i] = (bias ? bias[i] : 0) + Σ_j W[i·cols + j] h[j].
void readout_forward(const float* W, const float* h, const float* bias, float* y, int64_t rows,
                     int64_t cols);
// gh[j] = Σ_i g[i] W[i·cols + j] (gh is overwritten).
void readout_backward_code(const float* W, const float* g, float* gh, int64_t rows, int64_t cols);

}  // namespace liftlab
