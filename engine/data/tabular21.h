// A generated 21-D tabular data set standing in for HEPMASS (docs/methods.md §6.4,
// §8.7): the CSV loader for user data is tested on it.
//
// Recipe (all constants fixed; the sample seed only drives the draws):
//  1. z ~ Σ_k π_k N(μ_k, Σ_k) in ℝ^21, K = 3 components, π = (0.5, 0.3, 0.2).
//     μ_k and Σ_k come from a generator seeded with kTabular21RecipeSeed (drawn in this order):
//     μ_k ~ N(0, I₂₁) for k = 0, 1, 2, then A_k with i.i.d. N(0, 1) entries for k = 0, 1, 2, and
//     Σ_k = 0.3·I + 0.7·A_k A_kᵀ / 21 (correlated, eigenvalues ≥ 0.3).
//  2. u_i = exp(a·z_i) with a = 0.4 for the first 7 columns (positive and right-skewed, like
//     HEPMASS's momenta and masses); u_i = z_i for the other 14.
//  3. x_i = (u_i − E[u_i]) / sd[u_i] with the ANALYTIC moments of step 2 (per component, from the
//     Gaussian moment generating function: E[e^{a z}] = e^{aμ + a²σ²/2}), so every column has
//     mean 0 and variance 1 under the recipe.
// Every step is invertible column by column, the density is smooth, multimodal and skewed.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <string>

namespace liftlab {

constexpr int64_t kTabular21Dim = 21;
constexpr int64_t kTabular21Components = 3;
constexpr int64_t kTabular21ExpColumns = 7;    // columns 0 … 6 are exp(a·z)
constexpr double kTabular21ExpRate = 0.4;      // a
constexpr uint64_t kTabular21RecipeSeed = 21;  // seeds μ_k and A_k

// The constants of the recipe, all float64.
struct Tabular21Recipe {
    torch::Tensor weights;      // (K) mixture weights π
    torch::Tensor means;        // (K × 21) μ_k
    torch::Tensor covariances;  // (K × 21 × 21) Σ_k
    torch::Tensor shift;        // (21) E[u], analytic
    torch::Tensor scale;        // (21) sd[u], analytic
};

// Built once (thread-safe), the same in every call.
const Tabular21Recipe& tabular21_recipe();

// n rows of the recipe, float64 n × 21, deterministic in `seed`. Throws std::invalid_argument
// when n < 0.
torch::Tensor make_tabular21(int64_t n, uint64_t seed);

// Writes `data` (n × m, any floating dtype, finite) as CSV: a header row f0,…,f{m−1}, then one
// line per row, each value printed like "%.9g" in the C locale (9 significant digits, so a read
// back value is within 5e-9 relative of the original). Throws std::invalid_argument naming `data`
// when it is not 2-D with at least one column or holds NaN/inf, and DataError naming the file
// when it cannot be written.
void write_tabular_csv(const std::string& path, const torch::Tensor& data);

}  // namespace liftlab
