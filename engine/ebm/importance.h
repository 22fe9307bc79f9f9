// Monte-Carlo tools for n-D log-concave EBMs (docs/methods.md §5.2, §5.6):
// self-normalised importance sampling of log Z = log ∫ exp(−E(x)) dx, its effective sample size
// and standard error, and a Monte-Carlo total variation between a known target and a model.
//
// Proposal (docs/methods.md §5.3, the documented alternative to the reference's normalising-flow
// proposal): a moment-matched multivariate Gaussian or Student-t fitted to data
// samples (for an EBM: the training data, which the model is trained to match).
//   gaussian:  q = N(μ, Σ) with μ, Σ the sample mean and (unbiased) covariance, Σ times `inflate`.
//   student-t: q = t_ν(μ, S), the multivariate t with ν degrees of freedom, location μ and scale
//              matrix S chosen so its covariance ν/(ν−2) S equals inflate · Σ (needs ν > 2);
//              log q = log Γ((ν+d)/2) − log Γ(ν/2) − (d/2) log(νπ) − ½ log det S
//                      − ((ν+d)/2) log(1 + (x−μ)ᵀS⁻¹(x−μ)/ν),
//              sampled as μ + L ε / √(g/ν) with L Lᵀ = S, ε ~ N(0, I), g ~ χ²_ν.
// `inflate` > 1 widens the proposal so it covers the tails of a model that is still wider than
// the data. The t proposal's polynomial tails bound the importance weights exp(−E)/q for every
// integrable log-concave model (its density is bounded and decays at least exponentially), which
// keeps the estimator's variance finite; a Gaussian proposal narrower than the model does not.
// The importance estimate is unbiased for Z, not for log Z: log Ẑ is biased low by ≈ se²/2
// (Jensen), negligible once the effective sample size is in the hundreds.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <string>

namespace liftlab {

class Proposal {
public:
    // Fits a proposal of `kind` ("gaussian" or "student-t") to the rows of `samples` (n × d,
    // floating, n ≥ d + 1 so the covariance has full rank). `dof` is ν (student-t only, > 2);
    // `inflate` (> 0) scales the fitted covariance. Throws std::invalid_argument naming the bad
    // argument, also when the sample covariance is singular.
    static Proposal fit(const torch::Tensor& samples, const std::string& kind, double dof = 5.0,
                        double inflate = 1.0);
    // Explicit proposals: N(mean, covariance), and t_ν(mean, scale) with scale matrix S (its
    // covariance is ν/(ν−2) S; any ν > 0 is allowed here). Both matrices must be symmetric
    // positive definite d × d; throws std::invalid_argument otherwise.
    static Proposal gaussian(const torch::Tensor& mean, const torch::Tensor& covariance);
    static Proposal student_t(const torch::Tensor& mean, const torch::Tensor& scale, double dof);

    // "gaussian" or "student-t".
    const std::string& kind() const { return kind_; }
    int64_t dim() const { return mean_.size(0); }
    // ν for student-t; +inf for gaussian.
    double dof() const { return dof_; }
    // Location μ (d) and scale matrix (d × d; the covariance for gaussian, S for student-t).
    const torch::Tensor& mean() const { return mean_; }
    const torch::Tensor& scale() const { return scale_; }
    // The covariance: scale() for gaussian, ν/(ν−2) S for student-t (throws when ν ≤ 2).
    torch::Tensor covariance() const;

    // m i.i.d. draws, m × d float64; the same seed gives the same draws.
    torch::Tensor sample(int64_t m, uint64_t seed) const;
    // Normalised log q of each row of x (n × d, floating) → n, float64, differentiable in x.
    torch::Tensor log_prob(const torch::Tensor& x) const;

private:
    Proposal(std::string kind, torch::Tensor mean, torch::Tensor scale, double dof);
    std::string kind_;
    torch::Tensor mean_, scale_, cholesky_;
    double dof_;
    double log_det_scale_half_;  // Σ log L_ii = ½ log det(scale)
};

// log Ẑ = logsumexp_m(−E(x_m) − log q(x_m)) − log M for x_m ~ q: the self-normalised importance
// estimate of log ∫ exp(−E(x)) dx. `energies` and `log_q` are 1-D of equal length M ≥ 1 and
// finite in log_q (+inf energies contribute zero weight). Returns a 0-dim float64 tensor that
// carries autograd from `energies` (log_q is treated as a constant): ∂log Ẑ/∂E_m = −w_m / Σw,
// so ∂log Ẑ/∂θ is minus the self-normalised mean of ∂E/∂θ, the NLL loss's negative phase.
// Throws std::invalid_argument for mismatched shapes, M = 0 or non-finite log_q.
torch::Tensor importance_log_partition(const torch::Tensor& energies, const torch::Tensor& log_q);

// Kish's effective sample size (Σw)² / Σw² of the weights w_m = exp(−E_m − log q_m), in [1, M]
// (0 when every weight is 0). Computed stably from log-weights; no autograd.
double effective_sample_size(const torch::Tensor& energies, const torch::Tensor& log_q);

// Delta-method standard error of log Ẑ: √(Var(w) / (M · mean(w)²)) = √(1/ESS − 1/M).
double log_partition_standard_error(const torch::Tensor& energies, const torch::Tensor& log_q);

// Monte-Carlo total variation between a known target p and a normalised model q
// (log q = −E − log Z with log Z known or estimated):
//   TV(p, q) = ∫ max(0, p − q) dx = E_{x~p}[max(0, 1 − q(x)/p(x))],
// averaged over the target's own samples x_1…x_n (log p and log q evaluated there). Each term lies
// in [0, 1], so the estimate does too; standard_error = sample sd of the terms / √n. An error in
// log Z shifts q/p by a constant factor and biases TV accordingly. The terms are exactly 0 where
// log q = log p. No autograd.
struct TvEstimate {
    double tv = 0.0;
    double standard_error = 0.0;
};
// Throws std::invalid_argument for mismatched shapes, n < 2, NaN, or a log p that is not finite.
TvEstimate monte_carlo_tv(const torch::Tensor& target_log_p, const torch::Tensor& model_log_q);

}  // namespace liftlab
