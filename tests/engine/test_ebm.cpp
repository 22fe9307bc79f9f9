// Log-concave 1-D targets and the quadrature for log Z and TV (docs/methods.md §5.1,
// §8.6).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "ebm/log_concave_targets.h"
#include "ebm/quadrature.h"
#include "test_helpers.h"

namespace {

using liftlab::kQuadraturePoints;
using liftlab::log_partition;
using liftlab::quadrature_grid;
using liftlab::QuadratureRange;
using liftlab::total_variation;

using liftlab::kPi;
// Quadrature tolerance on log Z and TV (trapezoid with 8000 points; worst case Gamma ≈ 8e-7).
constexpr double kQuadTol = 1e-6;
// Moment checks: n samples, pass within this many (sample-estimated) standard errors.
constexpr int64_t kMomentSamples = 50000;
using liftlab::test::kStdErrors;

TEST(EbmQuadrature, GaussianEnergyLogPartitionIsLogSigmaSqrtTwoPi) {
    for (double sigma : {0.3, 1.0, 2.5}) {
        const auto grid = quadrature_grid({-12.0 * sigma, 12.0 * sigma});
        const auto energy = grid * grid / (2.0 * sigma * sigma);
        const double log_z = log_partition(energy, grid).item<double>();
        EXPECT_NEAR(log_z, std::log(sigma * std::sqrt(2.0 * kPi)), 1e-9) << "sigma " << sigma;
    }
}

TEST(EbmQuadrature, LogPartitionIsStableForHugeEnergiesAndCarriesGradient) {
    const auto grid = quadrature_grid({-10.0, 10.0});
    // A constant shift of 1e4 would underflow exp() naively; logsumexp keeps it exact.
    const auto energy = grid * grid / 2.0 + 1e4;
    EXPECT_NEAR(log_partition(energy, grid).item<double>(), std::log(std::sqrt(2.0 * kPi)) - 1e4,
                1e-8);
    // d/da log ∫ exp(−a x²/2) dx = −1/(2a).
    auto a = torch::tensor(1.5, torch::TensorOptions().dtype(torch::kFloat64).requires_grad(true));
    log_partition(a * grid * grid / 2.0, grid).backward();
    EXPECT_NEAR(a.grad().item<double>(), -1.0 / 3.0, 1e-9);
}

TEST(EbmQuadrature, TotalVariationOfADistributionWithItselfIsZero) {
    const auto grid = quadrature_grid({-8.0, 8.0});
    const auto log_p = -grid * grid / 2.0;
    EXPECT_NEAR(total_variation(log_p, log_p, grid), 0.0, 1e-15);
}

TEST(EbmQuadrature, TotalVariationOfShiftedGaussiansMatchesAnalytic) {
    const auto grid = quadrature_grid({-10.0, 11.0});
    const auto log_p = -grid * grid / 2.0;
    const auto log_q = -(grid - 1.0) * (grid - 1.0) / 2.0 + 7.0;  // unnormalised on purpose
    EXPECT_NEAR(total_variation(log_p, log_q, grid), 2.0 * liftlab::test::normal_cdf(0.5) - 1.0,
                kQuadTol);
    EXPECT_NEAR(total_variation(log_q, log_p, grid), 2.0 * liftlab::test::normal_cdf(0.5) - 1.0,
                kQuadTol);
}

TEST(EbmQuadrature, BadInputsAreRejectedWithAMessage) {
    const auto grid = quadrature_grid({0.0, 1.0}, /*points=*/10);
    EXPECT_EQ(quadrature_grid({0.0, 1.0}).size(0), kQuadraturePoints);
    auto expect_msg = [](auto&& fn, const std::string& needle) {
        try {
            fn();
            ADD_FAILURE() << "expected std::invalid_argument containing '" << needle << "'";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    expect_msg([&] { log_partition(torch::zeros({9}, torch::kFloat64), grid); },
               "one entry per grid point");
    expect_msg(
        [&] {
            log_partition(torch::zeros({3}), torch::tensor({0.0, 0.1, 0.5}));
        },
        "uniformly spaced");
    expect_msg([&] { quadrature_grid({1.0, 0.0}); }, "need hi > lo");
    const auto none = torch::full({10}, -std::numeric_limits<double>::infinity(), torch::kFloat64);
    expect_msg([&] { total_variation(none, torch::zeros({10}, torch::kFloat64), grid); },
               "no finite mass");
}

TEST(EbmTargets, QuadratureLogPartitionOfEachTargetIsZero) {
    for (const auto& name : liftlab::log_concave_target_names()) {
        const auto target = liftlab::make_log_concave_target(name);
        ASSERT_EQ(target->name(), name);
        const auto r = target->range();
        const auto grid = quadrature_grid(r);
        const double log_z = log_partition(-target->log_density(grid), grid).item<double>();
        // Against the exact in-range mass: isolates the quadrature error.
        const double mass = target->cdf(r.hi) - target->cdf(r.lo);
        if (name == "laplace") {
            // The kink of e^{−|x|} sits mid-cell: the trapezoid error is exactly −h²/24 to O(h⁴)
            // (+h²/12 from the smooth halves, −h²/8 from the kink cell), ≈ −1.04e-6.
            const double h = (r.hi - r.lo) / (kQuadraturePoints - 1);
            EXPECT_NEAR(log_z, std::log(mass) - h * h / 24.0, 1e-9) << name;
            EXPECT_NEAR(log_z, 0.0, 1.1e-6) << name;
            continue;
        }
        EXPECT_NEAR(log_z, std::log(mass), kQuadTol) << name;
        if (name == "gumbel") {
            // The recipe's [−5, 12] leaves e^{−e^{−12}} short of 1: ≈ 6.1e-6 of the mass.
            EXPECT_NEAR(1.0 - mass, 6.144e-6, 1e-9);
            EXPECT_NEAR(log_z, 0.0, 1e-5) << name;
        } else {
            EXPECT_GT(mass, 1.0 - 1e-8) << name;
            EXPECT_NEAR(log_z, 0.0, kQuadTol) << name;
        }
    }
}

// Composite Gauss–Legendre (the training-time log Z): exact, to rounding, for a polynomial of
// degree 2·8 − 1 = 15 on each panel.
TEST(EbmQuadrature, GaussLegendreIsExactForDegreeFifteenPerPanel) {
    for (const int64_t panels : {1, 3}) {
        const auto rule = liftlab::gauss_legendre_rule({0.0, 1.0}, 8 * panels, 8);
        ASSERT_EQ(rule.nodes.numel(), 8 * panels);
        EXPECT_GT(rule.nodes.min().item<double>(), 0.0);
        EXPECT_LT(rule.nodes.max().item<double>(), 1.0);
        EXPECT_NEAR(rule.log_weights.exp().sum().item<double>(), 1.0, 1e-14);
        // ∫₀¹ x¹⁵ dx = 1/16 with E = −15 log x.
        const auto e = -15.0 * torch::log(rule.nodes);
        if (panels == 1)
            EXPECT_NEAR(log_partition(e, rule).item<double>(), std::log(1.0 / 16.0), 1e-13);
        // A degree-16 monomial is not integrated exactly by one panel.
        if (panels == 1)
            EXPECT_GT(std::abs(log_partition(-16.0 * torch::log(rule.nodes), rule).item<double>() -
                               std::log(1.0 / 17.0)),
                      1e-10);
    }
    EXPECT_THROW(liftlab::gauss_legendre_rule({0.0, 1.0}, 12, 8), std::invalid_argument);
    EXPECT_THROW(liftlab::gauss_legendre_rule({1.0, 0.0}, 16, 8), std::invalid_argument);
}

// The training rule (512 Gauss–Legendre nodes) against the 8000-point trapezoid that reports
// log Z, on every 1-D target: within 1e-4 nats (the tolerance; measured ≲ 1e-7).
TEST(EbmTargets, TrainingGaussLegendreLogZAgreesWithTheTrapezoidGrid) {
    for (const auto& name : liftlab::log_concave_target_names()) {
        const auto target = liftlab::make_log_concave_target(name);
        const auto grid = quadrature_grid(target->range());
        const double trap = log_partition(-target->log_density(grid), grid).item<double>();
        const auto rule = liftlab::gauss_legendre_rule(target->range(), 512);
        const double gl = log_partition(-target->log_density(rule.nodes), rule).item<double>();
        EXPECT_NEAR(gl, trap, 1e-4) << name;
        EXPECT_NEAR(gl, 0.0, 1e-4) << name;
    }
}

TEST(EbmTargets, LogDensityIsMinusInfinityOutsideTheSupport) {
    const auto x = torch::tensor({-0.5, 1.5}, torch::kFloat64);
    for (const char* name : {"gamma", "beta", "halfnormal"}) {
        const auto lp = liftlab::make_log_concave_target(name)->log_density(x);
        EXPECT_TRUE(std::isinf(lp[0].item<double>()) && lp[0].item<double>() < 0) << name;
    }
    const auto beta = liftlab::make_log_concave_target("beta")->log_density(x);
    EXPECT_TRUE(std::isinf(beta[1].item<double>()));
    // Inside: HalfNormal at 0 is √(2/π); Beta(2,5) at ½ is 30·(1/2)^5.
    EXPECT_NEAR(liftlab::HalfNormalTarget().log_density(torch::zeros({1}))[0].item<double>(),
                0.5 * std::log(2.0 / kPi), 1e-12);
    EXPECT_NEAR(liftlab::BetaTarget().log_density(torch::full({1}, 0.5))[0].item<double>(),
                std::log(30.0 / 32.0), 1e-12);
}

TEST(EbmTargets, SamplerMomentsMatchAnalyticWithinFiveStandardErrors) {
    for (const auto& name : liftlab::log_concave_target_names()) {
        const auto target = liftlab::make_log_concave_target(name);
        const auto x = target->sample(kMomentSamples, /*seed=*/11);
        ASSERT_EQ(x.dtype(), torch::kFloat64);
        ASSERT_EQ(x.numel(), kMomentSamples);
        const double n = static_cast<double>(kMomentSamples);
        const double mean = x.mean().item<double>();
        const auto sq = (x - mean).pow(2);
        const double var = sq.mean().item<double>() * n / (n - 1.0);
        // Standard errors from the sample: sd/√n for the mean, sd((x − x̄)²)/√n for the variance.
        const double se_mean = std::sqrt(var / n);
        const double se_var = sq.std().item<double>() / std::sqrt(n);
        EXPECT_NEAR(mean, target->mean(), kStdErrors * se_mean) << name;
        EXPECT_NEAR(var, target->variance(), kStdErrors * se_var) << name;
        // Samples lie in the support.
        EXPECT_TRUE(torch::isfinite(target->log_density(x)).all().item<bool>()) << name;
    }
    // The analytic values quoted in METHODS-style tables.
    EXPECT_NEAR(liftlab::GumbelTarget().mean(), 0.5772156649, 1e-10);
    EXPECT_NEAR(liftlab::GumbelTarget().variance(), kPi * kPi / 6.0, 1e-12);
    EXPECT_NEAR(liftlab::BetaTarget().variance(), 10.0 / 392.0, 1e-15);
}

TEST(EbmTargets, SamplersAreDeterministicPerSeed) {
    for (const auto& name : liftlab::log_concave_target_names()) {
        const auto target = liftlab::make_log_concave_target(name);
        EXPECT_TRUE(torch::equal(target->sample(100, 5), target->sample(100, 5))) << name;
        EXPECT_FALSE(torch::equal(target->sample(100, 5), target->sample(100, 6))) << name;
    }
}

TEST(EbmTargets, UnknownNameListsTheValidOnes) {
    try {
        liftlab::make_log_concave_target("cauchy");
        FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("'cauchy'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("gumbel|laplace|gamma|beta|halfnormal|skewnormal"), std::string::npos)
            << msg;
    }
}

}  // namespace
