#include "ebm/nd_targets.h"

#include "core/numeric.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace liftlab {

namespace {

// Euler–Mascheroni constant: the Gumbel(0,1) mean.
// Eigenvalue range of the correlated target's covariance.
constexpr double kMinEigenvalue = 0.25;
constexpr double kMaxEigenvalue = 4.0;

// U(0,1) strictly above 0, so log U is finite (torch::rand draws from [0, 1)).
std::string joined_names() {
    std::string s;
    for (const auto& n : nd_target_names()) s += (s.empty() ? "" : ", ") + n;
    return s;
}

}  // namespace

NdTarget::NdTarget(int64_t dim) : dim_(dim) {
    if (dim < 1)
        throw std::invalid_argument("n-D target: dim must be >= 1, got " + std::to_string(dim));
}

torch::Tensor NdTarget::checked_points(const torch::Tensor& x, const char* who) const {
    if (x.dim() != 2 || x.size(1) != dim_ || !x.is_floating_point()) {
        std::string shape;
        for (auto s : x.sizes()) shape += (shape.empty() ? "" : " × ") + std::to_string(s);
        throw std::invalid_argument(std::string(who) + ": x must be a floating n × " +
                                    std::to_string(dim_) + " tensor, got shape [" + shape + "]");
    }
    return x.to(torch::kFloat64);
}

// ---- Gaussian product --------------------------------------------------------------------

torch::Tensor GaussianNdTarget::log_density(const torch::Tensor& x) const {
    const auto v = checked_points(x, "gaussian log_density");
    return -0.5 * v.pow(2).sum(1) - 0.5 * static_cast<double>(dim()) * std::log(2.0 * kPi);
}

torch::Tensor GaussianNdTarget::sample(int64_t n, uint64_t seed) const {
    check_sample_count(n);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    return torch::randn({n, dim()}, gen, f64());
}

torch::Tensor GaussianNdTarget::mean() const {
    return torch::zeros({dim()}, f64());
}
torch::Tensor GaussianNdTarget::covariance() const {
    return torch::eye(dim(), f64());
}

// ---- Gumbel product ----------------------------------------------------------------------

torch::Tensor GumbelNdTarget::log_density(const torch::Tensor& x) const {
    const auto v = checked_points(x, "gumbel log_density");
    return (-v - torch::exp(-v)).sum(1);
}

torch::Tensor GumbelNdTarget::sample(int64_t n, uint64_t seed) const {
    check_sample_count(n);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    return -torch::log(-torch::log(open_uniform({n, dim()}, gen)));
}

torch::Tensor GumbelNdTarget::mean() const {
    return torch::full({dim()}, kEulerGamma, f64());
}
torch::Tensor GumbelNdTarget::covariance() const {
    return torch::eye(dim(), f64()) * (kPi * kPi / 6.0);
}

// ---- Laplace product ---------------------------------------------------------------------

torch::Tensor LaplaceNdTarget::log_density(const torch::Tensor& x) const {
    const auto v = checked_points(x, "laplace log_density");
    return -v.abs().sum(1) - static_cast<double>(dim()) * std::log(2.0);
}

torch::Tensor LaplaceNdTarget::sample(int64_t n, uint64_t seed) const {
    check_sample_count(n);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    const auto magnitude = -torch::log(open_uniform({n, dim()}, gen));
    const auto sign = 1.0 - 2.0 * (torch::rand({n, dim()}, gen, f64()) < 0.5).to(torch::kFloat64);
    return sign * magnitude;
}

torch::Tensor LaplaceNdTarget::mean() const {
    return torch::zeros({dim()}, f64());
}
torch::Tensor LaplaceNdTarget::covariance() const {
    return torch::eye(dim(), f64()) * 2.0;
}

// ---- Correlated Gaussian -----------------------------------------------------------------

CorrelatedGaussianNdTarget::CorrelatedGaussianNdTarget(int64_t dim, uint64_t structure_seed)
    : NdTarget(dim) {
    const int64_t d = dim;
    if (d == 1) {
        eigenvalues_ = torch::ones({1}, f64());
    } else {
        const auto t = torch::arange(d, f64()) / static_cast<double>(d - 1);
        eigenvalues_ = kMinEigenvalue * torch::pow(kMaxEigenvalue / kMinEigenvalue, t);
    }
    auto gen = at::make_generator<at::CPUGeneratorImpl>(structure_seed);
    const auto g = torch::randn({d, d}, gen, f64());
    auto [q, r] = torch::linalg_qr(g);
    // Sign-fix the columns so Q is Haar distributed (QR alone is not unique up to signs).
    auto signs = torch::sign(r.diagonal());
    signs = torch::where(signs == 0, torch::ones_like(signs), signs);
    q = q * signs.unsqueeze(0);
    covariance_ = (q * eigenvalues_.unsqueeze(0)).matmul(q.t());
    covariance_ = 0.5 * (covariance_ + covariance_.t());  // exactly symmetric
    cholesky_ = torch::linalg_cholesky(covariance_);
}

torch::Tensor CorrelatedGaussianNdTarget::log_density(const torch::Tensor& x) const {
    const auto v = checked_points(x, "correlated log_density");
    // Rows of z solve L z = x, i.e. z = x L⁻ᵀ; ‖z‖² = xᵀ Σ⁻¹ x.
    const auto z = torch::linalg_solve_triangular(cholesky_, v.t(), /*upper=*/false).t();
    const double log_det_half = cholesky_.diagonal().log().sum().item<double>();
    return -0.5 * z.pow(2).sum(1) - log_det_half -
           0.5 * static_cast<double>(dim()) * std::log(2.0 * kPi);
}

torch::Tensor CorrelatedGaussianNdTarget::sample(int64_t n, uint64_t seed) const {
    check_sample_count(n);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    return torch::randn({n, dim()}, gen, f64()).matmul(cholesky_.t());
}

torch::Tensor CorrelatedGaussianNdTarget::mean() const {
    return torch::zeros({dim()}, f64());
}

// ---- Factory -----------------------------------------------------------------------------

std::vector<std::string> nd_target_names() {
    return {"gaussian", "gumbel", "correlated", "laplace"};
}

std::unique_ptr<NdTarget> make_nd_target(const std::string& name, int64_t dim, uint64_t seed) {
    const bool known =
        name == "gaussian" || name == "gumbel" || name == "correlated" || name == "laplace";
    if (!known)
        throw std::invalid_argument("unknown n-D target '" + name + "' (valid: " + joined_names() +
                                    ")");
    if (dim < 1 || dim > kMaxNdTargetDim)
        throw std::invalid_argument("n-D target '" + name + "': dim " + std::to_string(dim) +
                                    " is out of range (valid: 1…" +
                                    std::to_string(kMaxNdTargetDim) + ")");
    if (name == "gaussian") return std::make_unique<GaussianNdTarget>(dim);
    if (name == "gumbel") return std::make_unique<GumbelNdTarget>(dim);
    if (name == "laplace") return std::make_unique<LaplaceNdTarget>(dim);
    return std::make_unique<CorrelatedGaussianNdTarget>(dim, seed);
}

}  // namespace liftlab
