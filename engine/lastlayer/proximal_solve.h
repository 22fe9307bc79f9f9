// The closed-form last layer (docs/methods.md §1.2, §1.4):
//
//     W = argmin_W ||Y − Φ W||_F² + λ ||W − W0||_F²  =  (ΦᵀΦ + λI)⁻¹ (ΦᵀY + λ W0)
//
// With W0 = 0 this is the ridge solution W*(θ) (λ = β); with W0 = W_{t−1} it is the proximal
// ("approximate Kalman") update. W here is d × k (the transpose of the usual k × d) so that
// predictions are Φ W. Everything is computed in float64; no inverse is formed.
#pragma once
#include <torch/torch.h>

namespace liftlab {

enum class SolvePath {
    Automatic,  // Woodbury when n < d and λ > 0 (an n × n system), else Cholesky (d × d)
    Cholesky,   // Cholesky of the d × d matrix ΦᵀΦ + λI
    Woodbury,  // (ΦᵀΦ + λI)⁻¹ = (I − Φᵀ(ΦΦᵀ + λI)⁻¹Φ)/λ: Cholesky of the n × n ΦΦᵀ + λI
};

struct ProximalSolveResult {
    torch::Tensor w;  // d × k, float64
    SolvePath path;   // the path actually taken
};

// phi: n × d, y: n × k, w_prior: d × k or undefined (meaning 0). Inputs of any float dtype.
// Throws std::runtime_error when the system is singular (λ = 0 with rank-deficient Φ) or when
// Woodbury is requested with λ = 0.
ProximalSolveResult solve_proximal(const torch::Tensor& phi, const torch::Tensor& y, double lambda,
                                   const torch::Tensor& w_prior = {},
                                   SolvePath path = SolvePath::Automatic);

// Appends the constant-1 feature that carries the bias: [Φ, 1] (same dtype, keeps the graph).
torch::Tensor with_bias_column(const torch::Tensor& phi);
// [Φ, 1] as the solves take it: float64, detached, contiguous, written in one pass (instead of a
// cat and then a cast).
torch::Tensor bias_column_f64(const torch::Tensor& phi);

}  // namespace liftlab

namespace liftlab {

// Sufficient statistics of a least-squares problem: ΦᵀΦ and ΦᵀY in float64. Sums over samples,
// so they accumulate over chunks (cf-full), decay with a forgetting factor (cf-rls) and would
// all-reduce exactly across data-parallel workers.
struct GramStatistics {
    torch::Tensor gram;   // d × d
    torch::Tensor cross;  // d × k
    int64_t count = 0;

    void add(const torch::Tensor& phi, const torch::Tensor& y);  // phi n × d, y n × k
    void add(const GramStatistics& other);                       // the union of two sample sets
    void scale(double factor);                                   // forgetting: ρ · (A, B)
};

// W = (A + λI)⁻¹ (B + λ W0) by Cholesky, from accumulated statistics. w_prior may be undefined.
torch::Tensor solve_statistics(const GramStatistics& stats, double lambda,
                               const torch::Tensor& w_prior = {});

}  // namespace liftlab
