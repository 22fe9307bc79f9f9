// The n-D log-concave targets of docs/methods.md §8.7: Gaussian and
// Gumbel products, a correlated Gaussian, and a Laplace product, in d = 1…32 dimensions. Each knows
// its exact normalised log-density, a seeded float64 sampler and its first two moments (for tests
// and for fitting importance-sampling proposals, ebm/importance.h).
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace liftlab {

// Valid dimensions of the factory: 1 … kMaxNdTargetDim.
constexpr int64_t kMaxNdTargetDim = 32;

class NdTarget {
public:
    // Throws std::invalid_argument when dim < 1 (the factory also caps it at kMaxNdTargetDim).
    explicit NdTarget(int64_t dim);
    virtual ~NdTarget() = default;
    // Factory name: gaussian | gumbel | correlated | laplace.
    virtual std::string name() const = 0;
    int64_t dim() const { return dim_; }
    // Normalised log p(x) of each row of an n × d tensor (any floating dtype); returns n values,
    // float64, differentiable in x. Throws std::invalid_argument when x is not n × dim().
    virtual torch::Tensor log_density(const torch::Tensor& x) const = 0;
    // n i.i.d. samples, n × d float64; the same seed gives the same samples.
    virtual torch::Tensor sample(int64_t n, uint64_t seed) const = 0;
    // Exact E[x] (d) and Cov[x] (d × d), float64.
    virtual torch::Tensor mean() const = 0;
    virtual torch::Tensor covariance() const = 0;

protected:
    // x as float64 after checking it is n × dim(); `who` names the caller in the message.
    torch::Tensor checked_points(const torch::Tensor& x, const char* who) const;

private:
    int64_t dim_;
};

// Standard normal product N(0, I): log p = −‖x‖²/2 − (d/2) log 2π.
class GaussianNdTarget : public NdTarget {
public:
    using NdTarget::NdTarget;
    std::string name() const override { return "gaussian"; }
    torch::Tensor log_density(const torch::Tensor& x) const override;
    torch::Tensor sample(int64_t n, uint64_t seed) const override;
    torch::Tensor mean() const override;        // 0
    torch::Tensor covariance() const override;  // I
};

// Product of standard Gumbel(0,1): log p = Σ_i (−x_i − e^{−x_i}); sampled as −log(−log U).
class GumbelNdTarget : public NdTarget {
public:
    using NdTarget::NdTarget;
    std::string name() const override { return "gumbel"; }
    torch::Tensor log_density(const torch::Tensor& x) const override;
    torch::Tensor sample(int64_t n, uint64_t seed) const override;
    torch::Tensor mean() const override;        // γ (Euler–Mascheroni) in every coordinate
    torch::Tensor covariance() const override;  // (π²/6) I
};

// Product of Laplace(0,1): log p = Σ_i −|x_i| − d log 2 (log-concave, not smooth at 0).
class LaplaceNdTarget : public NdTarget {
public:
    using NdTarget::NdTarget;
    std::string name() const override { return "laplace"; }
    torch::Tensor log_density(const torch::Tensor& x) const override;
    torch::Tensor sample(int64_t n, uint64_t seed) const override;
    torch::Tensor mean() const override;        // 0
    torch::Tensor covariance() const override;  // 2 I
};

// Zero-mean Gaussian N(0, Σ) with Σ = Q diag(λ) Qᵀ: the eigenvalues are log-spaced over
// [0.25, 4] (λ_i = 0.25 · 16^{i/(d−1)}; λ = 1 when d = 1), so the condition number is 16 for
// d ≥ 2, and Q is a Haar-random rotation drawn from `structure_seed` (QR of a standard normal
// matrix, columns sign-fixed by diag R). Evaluated through the Cholesky factor L of Σ:
// log p = −‖L⁻¹x‖²/2 − Σ log L_ii − (d/2) log 2π; sampled as L ε.
class CorrelatedGaussianNdTarget : public NdTarget {
public:
    CorrelatedGaussianNdTarget(int64_t dim, uint64_t structure_seed);
    std::string name() const override { return "correlated"; }
    torch::Tensor log_density(const torch::Tensor& x) const override;
    torch::Tensor sample(int64_t n, uint64_t seed) const override;
    torch::Tensor mean() const override;  // 0
    torch::Tensor covariance() const override { return covariance_; }
    // The eigenvalues λ (ascending) of Σ.
    torch::Tensor eigenvalues() const { return eigenvalues_; }

private:
    torch::Tensor covariance_, cholesky_, eigenvalues_;
};

// The valid factory names.
std::vector<std::string> nd_target_names();

// Builds a target by name in `dim` dimensions. `seed` fixes the random structure of targets that
// have one (the rotation of "correlated"); the others ignore it. Throws std::invalid_argument
// naming the valid names, or the valid dimensions 1…32, otherwise.
std::unique_ptr<NdTarget> make_nd_target(const std::string& name, int64_t dim, uint64_t seed = 0);

}  // namespace liftlab
