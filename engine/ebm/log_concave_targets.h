// The 1-D log-concave targets of docs/methods.md §8.6:
// Gumbel(0,1), Laplace(0,1), Gamma(2,1), Beta(2,5), HalfNormal(1), SkewNormal(0,1,4). Each knows
// its exact log-density, a seeded float64 sampler, its CDF and moments (for tests), and the
// quadrature range used for log Z and TV.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ebm/quadrature.h"

namespace liftlab {

class LogConcaveTarget {
public:
    virtual ~LogConcaveTarget() = default;
    // Factory name: gumbel | laplace | gamma | beta | halfnormal | skewnormal.
    virtual std::string name() const = 0;
    // Normalised log p(x), elementwise, float64; −inf outside the support.
    virtual torch::Tensor log_density(const torch::Tensor& x) const = 0;
    // n i.i.d. samples, shape {n}, float64; the same seed gives the same samples.
    virtual torch::Tensor sample(int64_t n, uint64_t seed) const = 0;
    // Range for quadrature (8000 points), chosen so it holds all but ~1e-8 of the mass, except
    // Gumbel whose [−5, 12] is fixed by the recipe (docs/methods.md §8.6) and misses ≈ 6.1e-6
    // above 12.
    virtual QuadratureRange range() const = 0;
    // Exact CDF P(X ≤ x), to measure how much mass `range()` leaves out.
    virtual double cdf(double x) const = 0;
    virtual double mean() const = 0;
    virtual double variance() const = 0;
};

// Gumbel(0,1): log p = −x − e^{−x}; sampled as −log(−log U).
class GumbelTarget : public LogConcaveTarget {
public:
    std::string name() const override { return "gumbel"; }
    torch::Tensor log_density(const torch::Tensor& x) const override;
    torch::Tensor sample(int64_t n, uint64_t seed) const override;
    // The recipe fixes [−5, 12]: mass below −5 is e^{−e^5} ≈ 1e-64, above 12 ≈ 6.1e-6.
    QuadratureRange range() const override { return {-5.0, 12.0}; }
    double cdf(double x) const override;
    double mean() const override;      // Euler–Mascheroni γ
    double variance() const override;  // π²/6
};

// Laplace(0,1): log p = −|x| − log 2; sampled as a random sign times Exp(1).
class LaplaceTarget : public LogConcaveTarget {
public:
    std::string name() const override { return "laplace"; }
    torch::Tensor log_density(const torch::Tensor& x) const override;
    torch::Tensor sample(int64_t n, uint64_t seed) const override;
    // Mass outside [−20, 20] is e^{−20} ≈ 2.1e-9. The kink at 0 falls mid-cell (7999 intervals), so
    // the trapezoid log Z is off by −h²/24 ≈ −1.04e-6 (h = 40/7999): +h²/12 from the two smooth
    // halves, −h²/8 from the kink cell.
    QuadratureRange range() const override { return {-20.0, 20.0}; }
    double cdf(double x) const override;
    double mean() const override { return 0.0; }
    double variance() const override { return 2.0; }
};

// Gamma(shape 2, rate 1): log p = log x − x on x > 0; sampled as a sum of two Exp(1).
class GammaTarget : public LogConcaveTarget {
public:
    std::string name() const override { return "gamma"; }
    torch::Tensor log_density(const torch::Tensor& x) const override;
    torch::Tensor sample(int64_t n, uint64_t seed) const override;
    // Support x > 0; mass above 25 is 26·e^{−25} ≈ 3.6e-10.
    QuadratureRange range() const override { return {0.0, 25.0}; }
    double cdf(double x) const override;
    double mean() const override { return 2.0; }
    double variance() const override { return 2.0; }
};

// Beta(2,5): log p = log 30 + log x + 4 log(1 − x) on 0 < x < 1 (1/B(2,5) = 30); sampled as the
// 2nd smallest of 6 uniforms (the k-th order statistic of a+b−1 uniforms is Beta(k, a+b−k)).
class BetaTarget : public LogConcaveTarget {
public:
    std::string name() const override { return "beta"; }
    torch::Tensor log_density(const torch::Tensor& x) const override;
    torch::Tensor sample(int64_t n, uint64_t seed) const override;
    // The whole support.
    QuadratureRange range() const override { return {0.0, 1.0}; }
    double cdf(double x) const override;
    double mean() const override { return 2.0 / 7.0; }
    double variance() const override { return 10.0 / 392.0; }
};

// HalfNormal(1): log p = log √(2/π) − x²/2 on x ≥ 0; sampled as |N(0,1)|.
class HalfNormalTarget : public LogConcaveTarget {
public:
    std::string name() const override { return "halfnormal"; }
    torch::Tensor log_density(const torch::Tensor& x) const override;
    torch::Tensor sample(int64_t n, uint64_t seed) const override;
    // Support x ≥ 0; mass above 7 is erfc(7/√2) ≈ 2.6e-12.
    QuadratureRange range() const override { return {0.0, 7.0}; }
    double cdf(double x) const override;
    double mean() const override;      // √(2/π)
    double variance() const override;  // 1 − 2/π
};

// SkewNormal(ξ = 0, ω = 1, α = 4), the reference's sixth target: p = 2 φ(x) Φ(α x), log-concave
// (log Φ is concave). Sampled as ±(δ u₀ + √(1−δ²) v) with the sign of u₀, δ = α/√(1+α²).
class SkewNormalTarget : public LogConcaveTarget {
public:
    static constexpr double kAlpha = 4.0;
    std::string name() const override { return "skewnormal"; }
    torch::Tensor log_density(const torch::Tensor& x) const override;
    torch::Tensor sample(int64_t n, uint64_t seed) const override;
    // Mass below −4 is < Φ(−4)·Φ(−16) ≈ 1e-62; above 7 it is < 2(1 − Φ(7)) ≈ 2.6e-12.
    QuadratureRange range() const override { return {-4.0, 7.0}; }
    // By composite Simpson on [−12, x] (4000 panels): for tests, accurate to ~1e-12.
    double cdf(double x) const override;
    double mean() const override;      // δ √(2/π)
    double variance() const override;  // 1 − 2δ²/π
};

// The valid factory names, in the order of docs/methods.md §8.6.
std::vector<std::string> log_concave_target_names();

// Builds a target by name; throws std::invalid_argument naming the valid choices otherwise.
std::unique_ptr<LogConcaveTarget> make_log_concave_target(const std::string& name);

}  // namespace liftlab
