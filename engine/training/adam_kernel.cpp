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

}  // namespace

void adam_update(float* p, float* m, float* v, const float* g, int64_t n,
                 const AdamCoefficients& k) {
    update(p, m, v, g, n, k);
}

void adam_update(double* p, double* m, double* v, const double* g, int64_t n,
                 const AdamCoefficients& k) {
    update(p, m, v, g, n, k);
}

}  // namespace liftlab
