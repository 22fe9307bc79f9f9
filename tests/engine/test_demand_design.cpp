// Demand design of Hartford et al. 2017 (docs/methods.md §8.4):
// the formulas at hand-computed points, the sampling distribution (moments within
// stated statistical tolerances), the test grid and determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "data/demand_design.h"
#include "test_helpers.h"

using liftlab::demand_psi;
using liftlab::demand_structural;

namespace {

constexpr int64_t kDemandSamples = 20000;
constexpr double kRho = 0.5;
constexpr std::uint64_t kSeed = 7;
// Tolerances below are 5 standard errors of the statistic at n = 20000, so a correct generator
// fails with probability < 1e-6 per check (and the seed is fixed anyway).
const double kRootN = std::sqrt(static_cast<double>(kDemandSamples));

double sample_mean(const torch::Tensor& x) {
    return x.mean().item<double>();
}
double sample_var(const torch::Tensor& x) {
    return x.var(/*unbiased=*/true).item<double>();
}
double sample_cov(const torch::Tensor& a, const torch::Tensor& b) {
    return ((a - a.mean()) * (b - b.mean())).sum().item<double>() / (a.numel() - 1);
}
double sample_corr(const torch::Tensor& a, const torch::Tensor& b) {
    return sample_cov(a, b) / std::sqrt(sample_var(a) * sample_var(b));
}

struct Columns {
    torch::Tensor p, c, t, s, y, f, v, e;
};

// The latent noises, recovered from the observed columns: V from P = 25 + (C + 3) ψ(t) + V,
// and e from Y = f(P, t, s) + e.
Columns columns(const liftlab::DemandData& d) {
    Columns k;
    k.p = d.treatment.select(1, 0);
    k.c = d.instruments.select(1, 0);
    k.t = d.instruments.select(1, 1);
    k.s = d.instruments.select(1, 2);
    k.y = d.outcome.select(1, 0);
    k.f = d.structural.select(1, 0);
    k.v = k.p - 25.0 - (k.c + 3.0) * demand_psi(k.t);
    k.e = k.y - k.f;
    return k;
}

}  // namespace

TEST(DemandDesign, PsiAtHandComputedPoints) {
    // ψ(5) = 2(0 + e⁰ + 0.5 − 2) = 2(−0.5) = −1.
    EXPECT_NEAR(demand_psi(5.0), -1.0, 1e-15);
    // ψ(0) = 2(625/600 + e⁻¹⁰⁰ + 0 − 2) = 2(25/24 − 2) = −23/12 (e⁻¹⁰⁰ ≈ 4e−44 is invisible).
    EXPECT_NEAR(demand_psi(0.0), -23.0 / 12.0, 1e-14);
    // ψ(10) = 2(25/24 + e⁻¹⁰⁰ + 1 − 2) = 2/24 = 1/12.
    EXPECT_NEAR(demand_psi(10.0), 1.0 / 12.0, 1e-14);
    // ψ(6) = 2(1/600 + e⁻⁴ + 0.6 − 2) = 2(0.0016667 + 0.0183156 − 1.4) = −2.7600354.
    EXPECT_NEAR(demand_psi(6.0), -2.7600354, 1e-7);
}

TEST(DemandDesign, StructuralFunctionAtHandComputedPoints) {
    // f(20, 5, 3) = 100 + (10 + 20)·3·ψ(5) − 2·20 = 100 − 90 − 40 = −30.
    EXPECT_NEAR(demand_structural(20.0, 5.0, 3.0), -30.0, 1e-12);
    // f(10, 10, 7) = 100 + 20·7·(1/12) − 20 = 80 + 35/3 = 275/3.
    EXPECT_NEAR(demand_structural(10.0, 10.0, 7.0), 275.0 / 3.0, 1e-12);
    // f(25, 0, 1) = 100 + 35·(−23/12) − 50 = 50 − 805/12 = −205/12.
    EXPECT_NEAR(demand_structural(25.0, 0.0, 1.0), -205.0 / 12.0, 1e-12);
}

TEST(DemandDesign, TensorFormulasMatchScalarOnes) {
    const auto opts = torch::TensorOptions().dtype(torch::kFloat64);
    const auto t = torch::linspace(0.0, 10.0, 41, opts);
    const auto p = torch::linspace(10.0, 25.0, 41, opts);
    const auto s = torch::remainder(torch::arange(41, opts), 7.0) + 1.0;
    const auto psi = demand_psi(t);
    const auto f = demand_structural(p, t, s);
    for (int64_t i = 0; i < 41; ++i) {
        const double ti = t[i].item<double>(), pi = p[i].item<double>(), si = s[i].item<double>();
        EXPECT_NEAR(psi[i].item<double>(), demand_psi(ti), 1e-12);
        EXPECT_NEAR(f[i].item<double>(), demand_structural(pi, ti, si), 1e-10);
    }
}

TEST(DemandDesign, ShapesAndColumnsAreConsistent) {
    const auto d = liftlab::make_demand_design(/*n=*/100, kRho, kSeed);
    EXPECT_EQ(d.treatment.sizes(), (std::vector<int64_t>{100, 1}));
    EXPECT_EQ(d.covariates.sizes(), (std::vector<int64_t>{100, 2}));
    EXPECT_EQ(d.instruments.sizes(), (std::vector<int64_t>{100, 3}));
    EXPECT_EQ(d.outcome.sizes(), (std::vector<int64_t>{100, 1}));
    EXPECT_EQ(d.structural.sizes(), (std::vector<int64_t>{100, 1}));
    EXPECT_EQ(d.outcome.scalar_type(), torch::kFloat64);
    // Covariates (t, s) are the instruments' last two columns.
    EXPECT_TRUE(torch::equal(d.covariates, d.instruments.narrow(1, 1, 2)));
    // The structural column is f(P, t, s) at the sampled points.
    for (int64_t i = 0; i < 5; ++i) {
        const double f =
            demand_structural(d.treatment[i][0].item<double>(), d.covariates[i][0].item<double>(),
                              d.covariates[i][1].item<double>());
        EXPECT_NEAR(d.structural[i][0].item<double>(), f, 1e-10 * std::max(1.0, std::abs(f)));
    }
    EXPECT_THROW(liftlab::make_demand_design(0, kRho, kSeed), std::invalid_argument);
    EXPECT_THROW(liftlab::make_demand_design(10, 1.5, kSeed), std::invalid_argument);
}

TEST(DemandDesign, SampleMomentsMatchTheDesign) {
    const auto k = columns(liftlab::make_demand_design(kDemandSamples, kRho, kSeed));

    // t ~ U(0, 10): mean 5, variance 100/12. SE(mean) = √(100/12/n) = 0.020 → tolerance 0.1;
    // SE(var) = √((μ₄ − σ⁴)/n) with μ₄ = 10⁴/80 = 125, σ⁴ = 69.4 → 0.053 → tolerance 0.27.
    EXPECT_GE(k.t.min().item<double>(), 0.0);
    EXPECT_LT(k.t.max().item<double>(), 10.0);
    EXPECT_NEAR(sample_mean(k.t), 5.0, 0.1);
    EXPECT_NEAR(sample_var(k.t), 100.0 / 12.0, 0.27);

    // s ~ Unif{1..7}: integers only, each with frequency 1/7. SE = √(p(1 − p)/n) = 0.0025 →
    // tolerance 0.0125.
    EXPECT_TRUE(torch::equal(k.s, k.s.round()));
    EXPECT_EQ(k.s.min().item<double>(), 1.0);
    EXPECT_EQ(k.s.max().item<double>(), 7.0);
    for (int v = 1; v <= 7; ++v)
        EXPECT_NEAR((k.s == v).to(torch::kFloat64).mean().item<double>(), 1.0 / 7.0, 0.0125)
            << "s = " << v;

    // C, V ~ N(0, 1): SE(mean) = 1/√n = 0.007 → tolerance 0.035; SE(var) = √(2/n) = 0.010 →
    // tolerance 0.05. The same for e ~ N(0, 1) (ρ² + (1 − ρ²) = 1).
    for (const auto* x : {&k.c, &k.v, &k.e}) {
        EXPECT_NEAR(sample_mean(*x), 0.0, 0.035);
        EXPECT_NEAR(sample_var(*x), 1.0, 0.05);
    }

    // corr(e, V) = ρ: SE ≈ (1 − ρ²)/√n = 0.0053 → tolerance 0.027.
    EXPECT_NEAR(sample_corr(k.e, k.v), kRho, 0.027);
    // The instrument is exogenous: corr(C, e) = 0 and corr(C, V) = 0, SE 1/√n → tolerance 0.035.
    EXPECT_NEAR(sample_corr(k.c, k.e), 0.0, 0.035);
    EXPECT_NEAR(sample_corr(k.c, k.v), 0.0, 0.035);
    // The treatment is endogenous: cov(P, e) = cov(V, e) = ρ. The sample covariance has
    // SE ≈ sd(P)·sd(e)/√n; tolerance 5 SE.
    const double tol = 5.0 * std::sqrt(sample_var(k.p) * sample_var(k.e)) / kRootN;
    EXPECT_NEAR(sample_cov(k.p, k.e), kRho, tol);
    EXPECT_GT(sample_cov(k.p, k.e), 0.0);
}

TEST(DemandDesign, RhoZeroAndOneAreTheExtremes) {
    // ρ = 1: e = V exactly. ρ = 0: e independent of V (tolerance 5/√n as above).
    const auto one = columns(liftlab::make_demand_design(kDemandSamples, 1.0, kSeed));
    EXPECT_LT((one.e - one.v).abs().max().item<double>(), 1e-9);
    const auto zero = columns(liftlab::make_demand_design(kDemandSamples, 0.0, kSeed));
    EXPECT_NEAR(sample_corr(zero.e, zero.v), 0.0, 0.035);
}

TEST(DemandDesign, DeterministicForAFixedSeed) {
    const auto a = liftlab::make_demand_design(500, kRho, kSeed);
    const auto b = liftlab::make_demand_design(500, kRho, kSeed);
    const auto c = liftlab::make_demand_design(500, kRho, kSeed + 1);
    EXPECT_TRUE(torch::equal(a.instruments, b.instruments));
    EXPECT_TRUE(torch::equal(a.treatment, b.treatment));
    EXPECT_TRUE(torch::equal(a.outcome, b.outcome));
    EXPECT_FALSE(torch::equal(a.outcome, c.outcome));
    // The global torch seed plays no part.
    torch::manual_seed(123);
    const auto d = liftlab::make_demand_design(500, kRho, kSeed);
    EXPECT_TRUE(torch::equal(a.outcome, d.outcome));
}

TEST(DemandDesign, TestGridCoversTheStatedRanges) {
    const auto g = liftlab::demand_test_grid();
    EXPECT_EQ(g.treatment.sizes(), (std::vector<int64_t>{2800, 1}));
    EXPECT_EQ(g.covariates.sizes(), (std::vector<int64_t>{2800, 2}));
    EXPECT_EQ(g.structural.sizes(), (std::vector<int64_t>{2800, 1}));
    const auto p = g.treatment.select(1, 0), t = g.covariates.select(1, 0),
               s = g.covariates.select(1, 1);
    EXPECT_EQ(std::get<0>(torch::_unique(p)).numel(), 20);
    EXPECT_EQ(std::get<0>(torch::_unique(t)).numel(), 20);
    EXPECT_EQ(std::get<0>(torch::_unique(s)).numel(), 7);
    EXPECT_DOUBLE_EQ(p.min().item<double>(), 10.0);
    EXPECT_DOUBLE_EQ(p.max().item<double>(), 25.0);
    EXPECT_DOUBLE_EQ(t.min().item<double>(), 0.0);
    EXPECT_DOUBLE_EQ(t.max().item<double>(), 10.0);
    EXPECT_DOUBLE_EQ(s.min().item<double>(), 1.0);
    EXPECT_DOUBLE_EQ(s.max().item<double>(), 7.0);
    // Order: p slowest, s fastest. Row 1 is (10, 0, 2); row 7 is (10, 10/19, 1).
    EXPECT_DOUBLE_EQ(s[1].item<double>(), 2.0);
    EXPECT_DOUBLE_EQ(t[7].item<double>(), 10.0 / 19.0);
    EXPECT_DOUBLE_EQ(p[140].item<double>(), 10.0 + 15.0 / 19.0);
    // Each (p, t, s) appears once: 20·20·7 distinct rows.
    const auto key = (p * 1000.0).round() * 1e6 + (t * 1000.0).round() * 10.0 + s;
    EXPECT_EQ(std::get<0>(torch::_unique(key)).numel(), 2800);
    // True f on the grid: the corner f(25, 0, 1) = −205/12 (hand-computed above) is the row
    // (p index 19, t index 0, s = 1) = 19·140.
    EXPECT_NEAR(g.structural[19 * 140][0].item<double>(), -205.0 / 12.0, 1e-10);
    for (int64_t i = 0; i < 2800; i += 97)
        EXPECT_NEAR(
            g.structural[i][0].item<double>(),
            demand_structural(p[i].item<double>(), t[i].item<double>(), s[i].item<double>()),
            1e-10);
}
