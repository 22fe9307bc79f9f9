#include "nn/tanh_kernel.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace liftlab {

namespace {

// tanh x = sign(x) · t(a), a = |x|, with t(a) = E / (E + 2) and E = e^(2a) − 1: one formula
// over the whole range, and E carries no cancellation when computed as expm1 — which it is:
//   2a = k ln 2 + r, k = round(2a / ln 2) (the 1.5·2^23 rounding trick), |r| ≤ ln2/2, with ln 2
//   split in a short high part and a low part (Cody–Waite);
//   e^r − 1 = r + r² (1/2! + r/3! + … + r^5/7!) — the Taylor remainder is below 2e-8 relative;
//   E = 2^k (e^r − 1) + (2^k − 1), with 2^k built from its exponent bits (k ∈ [0, 26]).
// a is capped at 9 (tanh 9 is 1 in float32), which keeps infinities out of the exponential;
// NaN passes through.
// always_inline: a default-target function is otherwise not always inlined into the clones
// below, and their loops would not vectorise.
[[gnu::always_inline]] inline float tanh_one(float x) {
    const float a = std::fabs(x);
    const float ac = a < 9.0f ? a : 9.0f;  // NaN goes to 9 here; it is restored below
    const float y = 2.0f * ac;
    constexpr float kRound = 12582912.0f;  // 1.5 · 2^23: adding it rounds to an integer
    const float k = (y * 1.44269504089f + kRound) - kRound;
    const float r = (y - k * 0.693145751953125f) - k * 1.428606765330187e-6f;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    const float em1 = r + (r * r) * p;  // e^r − 1
    const std::int32_t bits = (static_cast<std::int32_t>(k) + 127) << 23;
    float scale;  // 2^k
    std::memcpy(&scale, &bits, sizeof scale);
    const float e = scale * em1 + (scale - 1.0f);  // e^(2a) − 1
    const float t = e / (e + 2.0f);
    const float signed_t = std::copysign(t, x);
    return x == x ? signed_t : x;  // NaN in, NaN out
}

}  // namespace

__attribute__((target_clones("avx512f", "avx2", "default"))) void tanh_kernel(
    const float* __restrict x, float* __restrict y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = tanh_one(x[i]);
}

}  // namespace liftlab
