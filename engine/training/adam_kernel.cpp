#include "training/adam_kernel.h"

#include <cmath>

namespace liftlab {

namespace {

template <typename T>
void update(T* __restrict p, T* __restrict m, T* __restrict v, const T* __restrict g, int64_t n,
            const AdamCoefficients& k) {
    const T c = static_cast<T>(k.clip), b1 = static_cast<T>(k.beta1), b2 = static_cast<T>(k.beta2),
            step = static_cast<T>(k.step_size), inv = static_cast<T>(k.inv_sqrt_bc2),
            eps = static_cast<T>(k.eps);
    const T a1 = T(1) - b1, a2 = T(1) - b2;
    for (int64_t i = 0; i < n; ++i) {
        const T gi = g[i] * c;
        const T mi = m[i] * b1 + a1 * gi;
        const T vi = v[i] * b2 + a2 * gi * gi;
        m[i] = mi;
        v[i] = vi;
        p[i] -= step * (mi / (std::sqrt(vi) * inv + eps));
    }
}

template <typename T>
void update_outer(T* __restrict p, T* __restrict m, T* __restrict v, int64_t rows, int64_t cols,
                  const T* __restrict g, const T* __restrict h, int64_t K,
                  const AdamCoefficients& k) {
    const T c = static_cast<T>(k.clip), b1 = static_cast<T>(k.beta1), b2 = static_cast<T>(k.beta2),
            step = static_cast<T>(k.step_size), inv = static_cast<T>(k.inv_sqrt_bc2),
            eps = static_cast<T>(k.eps);
    const T a1 = T(1) - b1, a2 = T(1) - b2;
    for (int64_t i = 0; i < rows; ++i) {
        T* __restrict pi = p + i * cols;
        T* __restrict mi = m + i * cols;
        T* __restrict vi = v + i * cols;
        const T g0 = g[i];
        auto at = [&](int64_t j, T gij) {
            const T gc = gij * c;
            const T mj = mi[j] * b1 + a1 * gc;
            const T vj = vi[j] * b2 + a2 * gc * gc;
            mi[j] = mj;
            vi[j] = vj;
            pi[j] -= step * (mj / (std::sqrt(vj) * inv + eps));
        };
        if (K == 1) {  // the lifter's case: one backward per step
            for (int64_t j = 0; j < cols; ++j) at(j, g0 * h[j]);
            continue;
        }
        for (int64_t j = 0; j < cols; ++j) {
            T gij = g0 * h[j];
            for (int64_t t = 1; t < K; ++t) gij += g[t * rows + i] * h[t * cols + j];
            at(j, gij);
        }
    }
}

}  // namespace

void adam_update_outer(float* p, float* m, float* v, int64_t rows, int64_t cols, const float* g,
                       const float* h, int64_t K, const AdamCoefficients& k) {
    update_outer(p, m, v, rows, cols, g, h, K, k);
}

void adam_update_outer(double* p, double* m, double* v, int64_t rows, int64_t cols,
                       const double* g, const double* h, int64_t K, const AdamCoefficients& k) {
    update_outer(p, m, v, rows, cols, g, h, K, k);
}

void adam_update(float* p, float* m, float* v, const float* g, int64_t n,
                 const AdamCoefficients& k) {
    update(p, m, v, g, n, k);
}

void adam_update(double* p, double* m, double* v, const double* g, int64_t n,
                 const AdamCoefficients& k) {
    update(p, m, v, g, n, k);
}

}  // namespace liftlab
