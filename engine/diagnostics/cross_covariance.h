// σ²_Jac, the trace of the cross-covariance between the lifter's emitted pre-readout weights and
// the loss gradient over probe batches, with a permutation test (docs/methods.md §4.1).
//   σ²_Jac = 1/(B−1) Σ_b ⟨θ̃_b − mean θ̃, g_b − mean g⟩   (signed)
// Significance: the rows of `gradients` are shuffled relative to `iterates`; every shuffle gives a
// statistic of the same form, and p = (1 + #{|perm| ≥ |obs|}) / (1 + permutations).
#pragma once
#include <torch/torch.h>

#include <cstdint>

namespace liftlab {

struct CrossCovarianceResult {
    double sigma2_jac = 0;  // trace of the cross-covariance (signed)
    double p_value = 1;     // two-sided permutation p-value, in [1/(1+permutations), 1]
    int64_t batches = 0;    // B
    int permutations = 0;
    double null_mean = 0, null_sd = 0;  // of the permuted statistics (sd with 1/(n−1); 0 if n < 2)
    double iterate_spread = 0;  // trace of the iterates' covariance (0 when θ̃ never moves)
};

// iterates, gradients: B × P (any floating dtype; computed in float64), B ≥ 3. A coordinate whose
// iterate is the same in every batch contributes exactly 0 (iterates are shifted by their first
// row before centring), so constant iterates give σ²_Jac = 0 and p = 1 exactly.
// Permutations are Fisher–Yates shuffles driven by std::mt19937_64(seed) with an unbiased bounded
// draw of our own, so results are identical across platforms for the same seed.
// Throws std::invalid_argument for non-2-D or mismatched shapes, B < 3, permutations < 0, or
// non-finite entries.
CrossCovarianceResult cross_covariance_trace(const torch::Tensor& iterates,
                                             const torch::Tensor& gradients, int permutations = 200,
                                             uint64_t seed = 0);

}  // namespace liftlab
