#include "nn/readout_kernel.h"

#include <cstddef>
#include <vector>

namespace liftlab {

namespace {
constexpr int kLanes = 8;  // independent partial sums per row: vectorisable without reordering
}

// One clone per instruction set, compiled without contraction (-ffp-contract=off): the same
// eight partial sums in the same order in every clone, so the same bits.
#define LIFTLAB_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

LIFTLAB_CLONES void readout_forward(const float* __restrict W, const float* __restrict h,
                                    const float* __restrict bias, float* __restrict y, int64_t rows,
                                    int64_t cols) {
    const int64_t body = cols - cols % kLanes;
    for (int64_t i = 0; i < rows; ++i) {
        const float* __restrict w = W + i * cols;
        float acc[kLanes] = {};
        for (int64_t j = 0; j < body; j += kLanes)
            for (int k = 0; k < kLanes; ++k) acc[k] += w[j + k] * h[j + k];
        float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
        for (int64_t j = body; j < cols; ++j) s += w[j] * h[j];
        y[i] = bias ? bias[i] + s : s;
    }
}

LIFTLAB_CLONES void readout_backward_code(const float* __restrict W, const float* __restrict g,
                                          float* __restrict gh, int64_t rows, int64_t cols) {
    std::vector<float> acc(static_cast<size_t>(cols), 0.0f);
    float* __restrict a = acc.data();
    for (int64_t i = 0; i < rows; ++i) {
        const float gi = g[i];
        const float* __restrict w = W + i * cols;
        for (int64_t j = 0; j < cols; ++j) a[j] += gi * w[j];
    }
    for (int64_t j = 0; j < cols; ++j) gh[j] = a[j];
}

}  // namespace liftlab
