#include "ebm/importance.h"

#include "core/c_numbers.h"
#include "core/numeric.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace liftlab {

namespace {

void require_importance(bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(what);
}

std::string tensor_shape_text(const torch::Tensor& t) {
    std::string s;
    for (auto v : t.sizes()) s += (s.empty() ? "" : " × ") + std::to_string(v);
    return "[" + s + "]";
}

// Lower Cholesky factor of a symmetric positive definite float64 matrix; throws naming `what`.
torch::Tensor proposal_cholesky(const torch::Tensor& m, const std::string& what) {
    auto [l, info] = torch::linalg_cholesky_ex(m);
    require_importance(info.item<int64_t>() == 0 && torch::isfinite(l).all().item<bool>(),
                       "proposal: " + what + " is not symmetric positive definite");
    // A rank-deficient matrix can still factor in floating point (rounding leaves a pivot of
    // order 1e-16 relative): reject pivots below 1e-12 of the largest as numerically singular.
    const auto pivots = l.diagonal().pow(2);
    require_importance(
        pivots.min().item<double>() > 1e-12 * pivots.max().item<double>(),
        "proposal: " + what + " is not symmetric positive definite (numerically singular)");
    return l;
}

// The log-weights −E − log q (float64) after checking the two 1-D inputs agree.
torch::Tensor log_weights(const torch::Tensor& energies, const torch::Tensor& log_q,
                          const char* who) {
    require_importance(energies.dim() == 1 && log_q.dim() == 1 && energies.size(0) == log_q.size(0),
                       std::string(who) + ": energies " + tensor_shape_text(energies) +
                           " and log_q " + tensor_shape_text(log_q) +
                           " must be 1-D of the same length");
    require_importance(energies.size(0) >= 1,
                       std::string(who) + ": needs at least one sample (M = 0)");
    const auto lq = log_q.detach().to(torch::kFloat64);
    require_importance(torch::isfinite(lq).all().item<bool>(),
                       std::string(who) + ": log_q must be finite (samples outside the proposal?)");
    return -energies.to(torch::kFloat64) - lq;
}

}  // namespace

// ---- Proposal ----------------------------------------------------------------------------

Proposal::Proposal(std::string kind, torch::Tensor mean, torch::Tensor scale, double dof)
    : kind_(std::move(kind)), mean_(std::move(mean)), scale_(std::move(scale)), dof_(dof) {
    const int64_t d = mean_.size(0);
    require_importance(scale_.dim() == 2 && scale_.size(0) == d && scale_.size(1) == d,
                       "proposal: scale matrix " + tensor_shape_text(scale_) + " must be " +
                           std::to_string(d) + " × " + std::to_string(d) + " to match the mean");
    require_importance(torch::isfinite(mean_).all().item<bool>(), "proposal: mean must be finite");
    const double asym = (scale_ - scale_.t()).abs().max().item<double>();
    require_importance(asym <= 1e-10 * std::max(scale_.abs().max().item<double>(), 1e-300),
                       "proposal: scale matrix must be symmetric");
    cholesky_ = proposal_cholesky(scale_, kind_ == "gaussian" ? "covariance" : "scale matrix");
    log_det_scale_half_ = cholesky_.diagonal().log().sum().item<double>();
}

Proposal Proposal::gaussian(const torch::Tensor& mean, const torch::Tensor& covariance) {
    require_importance(
        mean.dim() == 1 && mean.size(0) >= 1 && mean.is_floating_point(),
        "proposal: mean must be a non-empty floating 1-D tensor, got " + tensor_shape_text(mean));
    return Proposal("gaussian", mean.detach().to(torch::kFloat64).clone(),
                    covariance.detach().to(torch::kFloat64).clone(), kInf);
}

Proposal Proposal::student_t(const torch::Tensor& mean, const torch::Tensor& scale, double dof) {
    require_importance(
        mean.dim() == 1 && mean.size(0) >= 1 && mean.is_floating_point(),
        "proposal: mean must be a non-empty floating 1-D tensor, got " + tensor_shape_text(mean));
    require_importance(std::isfinite(dof) && dof > 0,
                       "proposal: dof must be positive and finite, got " + c_shortest(dof));
    return Proposal("student-t", mean.detach().to(torch::kFloat64).clone(),
                    scale.detach().to(torch::kFloat64).clone(), dof);
}

Proposal Proposal::fit(const torch::Tensor& samples, const std::string& kind, double dof,
                       double inflate) {
    require_importance(kind == "gaussian" || kind == "student-t",
                       "proposal: unknown kind '" + kind + "' (valid: gaussian, student-t)");
    require_importance(
        samples.dim() == 2 && samples.is_floating_point(),
        "proposal: samples must be a floating n × d tensor, got " + tensor_shape_text(samples));
    const int64_t n = samples.size(0), d = samples.size(1);
    require_importance(d >= 1 && n >= d + 1,
                       "proposal: fitting " + std::to_string(d) + "-D samples needs at least " +
                           std::to_string(d + 1) + " of them, got " + std::to_string(n));
    require_importance(std::isfinite(inflate) && inflate > 0,
                       "proposal: inflate must be positive and finite, got " + c_shortest(inflate));
    const auto x = samples.detach().to(torch::kFloat64);
    require_importance(torch::isfinite(x).all().item<bool>(), "proposal: samples must be finite");
    const auto mu = x.mean(0);
    const auto c = x - mu;
    auto cov = c.t().matmul(c) / static_cast<double>(n - 1);
    cov = 0.5 * (cov + cov.t()) * inflate;
    if (kind == "gaussian") return gaussian(mu, cov);
    require_importance(
        std::isfinite(dof) && dof > 2,
        "proposal: moment matching a student-t needs dof > 2 (finite covariance), got " +
            c_shortest(dof));
    return student_t(mu, cov * ((dof - 2.0) / dof), dof);
}

torch::Tensor Proposal::covariance() const {
    if (kind_ == "gaussian") return scale_;
    require_importance(dof_ > 2, "proposal: a student-t with dof " + c_shortest(dof_) +
                                     " <= 2 has no finite covariance");
    return scale_ * (dof_ / (dof_ - 2.0));
}

torch::Tensor Proposal::sample(int64_t m, uint64_t seed) const {
    require_importance(m >= 0, "proposal sample: m must be >= 0, got " + std::to_string(m));
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    auto x = torch::randn({m, dim()}, gen, f64()).matmul(cholesky_.t());
    if (kind_ == "student-t") {
        // χ²_ν = 2 · Gamma(ν/2, 1).
        const auto g = 2.0 * at::_standard_gamma(torch::full({m}, 0.5 * dof_, f64()), gen);
        x = x / torch::sqrt(g.clamp_min(std::numeric_limits<double>::min()) / dof_).unsqueeze(1);
    }
    return x + mean_;
}

torch::Tensor Proposal::log_prob(const torch::Tensor& x) const {
    require_importance(x.dim() == 2 && x.size(1) == dim() && x.is_floating_point(),
                       "proposal log_prob: x must be a floating n × " + std::to_string(dim()) +
                           " tensor, got " + tensor_shape_text(x));
    const auto v = x.to(torch::kFloat64) - mean_;
    const auto z = torch::linalg_solve_triangular(cholesky_, v.t(), /*upper=*/false).t();
    const auto r2 = z.pow(2).sum(1);  // (x−μ)ᵀ S⁻¹ (x−μ)
    const double d = static_cast<double>(dim());
    if (kind_ == "gaussian") return -0.5 * r2 - log_det_scale_half_ - 0.5 * d * std::log(2 * kPi);
    const double nu = dof_;
    const double log_norm = std::lgamma(0.5 * (nu + d)) - std::lgamma(0.5 * nu) -
                            0.5 * d * std::log(nu * kPi) - log_det_scale_half_;
    return log_norm - 0.5 * (nu + d) * torch::log1p(r2 / nu);
}

// ---- Importance sampling -----------------------------------------------------------------

torch::Tensor importance_log_partition(const torch::Tensor& energies, const torch::Tensor& log_q) {
    const auto lw = log_weights(energies, log_q, "importance_log_partition");
    return torch::logsumexp(lw, 0) - std::log(static_cast<double>(lw.size(0)));
}

double effective_sample_size(const torch::Tensor& energies, const torch::Tensor& log_q) {
    const auto lw = log_weights(energies.detach(), log_q, "effective_sample_size");
    const double top = lw.max().item<double>();
    if (!(top > -kInf)) return 0.0;
    const auto w = torch::exp(lw - top);
    const double s = w.sum().item<double>();
    return s * s / w.pow(2).sum().item<double>();
}

double log_partition_standard_error(const torch::Tensor& energies, const torch::Tensor& log_q) {
    const double ess = effective_sample_size(energies, log_q);
    if (ess <= 0) return kInf;
    const double m = static_cast<double>(energies.size(0));
    return std::sqrt(std::max(0.0, 1.0 / ess - 1.0 / m));
}

// ---- Total variation ---------------------------------------------------------------------

TvEstimate monte_carlo_tv(const torch::Tensor& target_log_p, const torch::Tensor& model_log_q) {
    require_importance(target_log_p.dim() == 1 && model_log_q.dim() == 1 &&
                           target_log_p.size(0) == model_log_q.size(0),
                       "monte_carlo_tv: target_log_p " + tensor_shape_text(target_log_p) +
                           " and model_log_q " + tensor_shape_text(model_log_q) +
                           " must be 1-D of the same length");
    const int64_t n = target_log_p.size(0);
    require_importance(n >= 2,
                       "monte_carlo_tv: needs at least 2 samples, got " + std::to_string(n));
    const auto lp = target_log_p.detach().to(torch::kFloat64);
    const auto lq = model_log_q.detach().to(torch::kFloat64);
    require_importance(
        torch::isfinite(lp).all().item<bool>(),
        "monte_carlo_tv: target_log_p must be finite (are the points the target's samples?)");
    require_importance(!torch::isnan(lq).any().item<bool>(),
                       "monte_carlo_tv: model_log_q contains NaN");
    // q/p = exp(log q − log p): +inf log q gives term 0, −inf gives term 1.
    const auto terms = (1.0 - torch::exp(lq - lp)).clamp_min(0.0);
    TvEstimate out;
    out.tv = terms.mean().item<double>();
    out.standard_error = terms.std(/*unbiased=*/true).item<double>() / std::sqrt(double(n));
    return out;
}

}  // namespace liftlab
