#include "ebm/log_concave_targets.h"

#include "core/numeric.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace liftlab {

namespace {

// Euler–Mascheroni constant: the Gumbel(0,1) mean.

// U(0,1) strictly above 0, so −log U is finite (torch::rand draws from [0, 1)).
torch::Tensor to_f64(const torch::Tensor& x) {
    return x.to(torch::kFloat64);
}

}  // namespace

// ---- Gumbel(0,1) -------------------------------------------------------------------------

torch::Tensor GumbelTarget::log_density(const torch::Tensor& x) const {
    const auto v = to_f64(x);
    return -v - torch::exp(-v);
}

torch::Tensor GumbelTarget::sample(int64_t n, uint64_t seed) const {
    check_sample_count(n);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    return -torch::log(-torch::log(open_uniform({n}, gen)));
}

double GumbelTarget::cdf(double x) const {
    return std::exp(-std::exp(-x));
}
double GumbelTarget::mean() const {
    return kEulerGamma;
}
double GumbelTarget::variance() const {
    return kPi * kPi / 6.0;
}

// ---- Laplace(0,1) ------------------------------------------------------------------------

torch::Tensor LaplaceTarget::log_density(const torch::Tensor& x) const {
    return -to_f64(x).abs() - std::log(2.0);
}

torch::Tensor LaplaceTarget::sample(int64_t n, uint64_t seed) const {
    check_sample_count(n);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    const auto magnitude = -torch::log(open_uniform({n}, gen));
    const auto sign = 1.0 - 2.0 * (torch::rand({n}, gen, f64()) < 0.5).to(torch::kFloat64);
    return sign * magnitude;
}

double LaplaceTarget::cdf(double x) const {
    return x < 0.0 ? 0.5 * std::exp(x) : 1.0 - 0.5 * std::exp(-x);
}

// ---- Gamma(2,1) --------------------------------------------------------------------------

torch::Tensor GammaTarget::log_density(const torch::Tensor& x) const {
    const auto v = to_f64(x);
    // Clamp inside the log so the unused branch is finite (no NaN in gradients).
    const auto inside = torch::log(v.clamp_min(std::numeric_limits<double>::min())) - v;
    return torch::where(v > 0.0, inside, torch::full_like(v, -kInf));
}

torch::Tensor GammaTarget::sample(int64_t n, uint64_t seed) const {
    check_sample_count(n);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    return -torch::log(open_uniform({n, 2}, gen)).sum(/*dim=*/1);
}

double GammaTarget::cdf(double x) const {
    return x <= 0.0 ? 0.0 : 1.0 - std::exp(-x) * (1.0 + x);
}

// ---- Beta(2,5) ---------------------------------------------------------------------------

torch::Tensor BetaTarget::log_density(const torch::Tensor& x) const {
    const auto v = to_f64(x);
    const double tiny = std::numeric_limits<double>::min();
    const auto inside = std::log(30.0) + torch::log(v.clamp_min(tiny)) +
                        4.0 * torch::log((1.0 - v).clamp_min(tiny));
    return torch::where((v > 0.0) & (v < 1.0), inside, torch::full_like(v, -kInf));
}

torch::Tensor BetaTarget::sample(int64_t n, uint64_t seed) const {
    check_sample_count(n);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    const auto u = torch::rand({n, 6}, gen, f64());
    return std::get<0>(u.sort(/*dim=*/1)).select(/*dim=*/1, /*index=*/1).contiguous();
}

double BetaTarget::cdf(double x) const {
    if (x <= 0.0) return 0.0;
    if (x >= 1.0) return 1.0;
    // I_x(2,5) = P(at least 2 of 6 uniforms ≤ x).
    return 1.0 - std::pow(1.0 - x, 6) - 6.0 * x * std::pow(1.0 - x, 5);
}

// ---- HalfNormal(1) -----------------------------------------------------------------------

torch::Tensor HalfNormalTarget::log_density(const torch::Tensor& x) const {
    const auto v = to_f64(x);
    const auto inside = 0.5 * std::log(2.0 / kPi) - 0.5 * v * v;
    return torch::where(v >= 0.0, inside, torch::full_like(v, -kInf));
}

torch::Tensor HalfNormalTarget::sample(int64_t n, uint64_t seed) const {
    check_sample_count(n);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    return torch::randn({n}, gen, f64()).abs();
}

double HalfNormalTarget::cdf(double x) const {
    return x <= 0.0 ? 0.0 : std::erf(x / std::sqrt(2.0));
}
double HalfNormalTarget::mean() const {
    return std::sqrt(2.0 / kPi);
}
double HalfNormalTarget::variance() const {
    return 1.0 - 2.0 / kPi;
}

// ---- SkewNormal(0, 1, 4) -----------------------------------------------------------------

namespace {
double skew_delta() {
    return SkewNormalTarget::kAlpha /
           std::sqrt(1.0 + SkewNormalTarget::kAlpha * SkewNormalTarget::kAlpha);
}
double skew_density(double x) {
    const double phi = std::exp(-0.5 * x * x) / std::sqrt(2.0 * kPi);
    return 2.0 * phi * 0.5 * std::erfc(-SkewNormalTarget::kAlpha * x / std::sqrt(2.0));
}
}  // namespace

torch::Tensor SkewNormalTarget::log_density(const torch::Tensor& x) const {
    const auto v = to_f64(x);
    // log 2 + log φ(x) + log Φ(αx); log_ndtr stays finite far in the left tail.
    return std::log(2.0) - 0.5 * std::log(2.0 * kPi) - 0.5 * v * v +
           torch::special::log_ndtr(kAlpha * v);
}

torch::Tensor SkewNormalTarget::sample(int64_t n, uint64_t seed) const {
    check_sample_count(n);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    const double delta = skew_delta();
    const auto u0 = torch::randn({n}, gen, f64());
    const auto v = torch::randn({n}, gen, f64());
    const auto u1 = delta * u0 + std::sqrt(1.0 - delta * delta) * v;
    return torch::where(u0 >= 0.0, u1, -u1);
}

double SkewNormalTarget::cdf(double x) const {
    constexpr double lo = -12.0;
    if (x <= lo) return 0.0;
    constexpr int panels = 4000;
    const double h = (x - lo) / (2 * panels);
    double sum = skew_density(lo) + skew_density(x);
    for (int i = 1; i < 2 * panels; ++i) sum += (i % 2 ? 4.0 : 2.0) * skew_density(lo + i * h);
    return std::min(1.0, sum * h / 3.0);
}
double SkewNormalTarget::mean() const {
    return skew_delta() * std::sqrt(2.0 / kPi);
}
double SkewNormalTarget::variance() const {
    const double d = skew_delta();
    return 1.0 - 2.0 * d * d / kPi;
}

// ---- factory -----------------------------------------------------------------------------

std::vector<std::string> log_concave_target_names() {
    return {"gumbel", "laplace", "gamma", "beta", "halfnormal", "skewnormal"};
}

std::unique_ptr<LogConcaveTarget> make_log_concave_target(const std::string& name) {
    if (name == "gumbel") return std::make_unique<GumbelTarget>();
    if (name == "laplace") return std::make_unique<LaplaceTarget>();
    if (name == "gamma") return std::make_unique<GammaTarget>();
    if (name == "beta") return std::make_unique<BetaTarget>();
    if (name == "halfnormal") return std::make_unique<HalfNormalTarget>();
    if (name == "skewnormal") return std::make_unique<SkewNormalTarget>();
    std::string valid;
    for (const auto& n : log_concave_target_names()) valid += (valid.empty() ? "" : "|") + n;
    throw std::invalid_argument("unknown log-concave target '" + name + "' (valid: " + valid + ")");
}

}  // namespace liftlab
