// 2-D toy data for convex potential flows (docs/methods.md §8.8).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <stdexcept>

#include "ebm/toy2d.h"
#include "test_helpers.h"

namespace {

constexpr int64_t kToySamples = 20000;
using liftlab::kPi;
using liftlab::test::kStdErrors;

TEST(Toy2d, CountsShapeAndDtype) {
    for (int64_t n : {0, 1, 7, 128}) {
        const auto a = liftlab::make_eight_gaussians(n, 0);
        const auto b = liftlab::make_two_spirals(n, 0);
        EXPECT_EQ(a.sizes(), (std::vector<int64_t>{n, 2}));
        EXPECT_EQ(b.sizes(), (std::vector<int64_t>{n, 2}));
        EXPECT_EQ(a.dtype(), torch::kFloat64);
        EXPECT_EQ(b.dtype(), torch::kFloat64);
    }
    EXPECT_THROW(liftlab::make_eight_gaussians(-1, 0), std::invalid_argument);
    EXPECT_THROW(liftlab::make_two_spirals(-1, 0), std::invalid_argument);
}

TEST(Toy2d, DeterministicPerSeed) {
    EXPECT_TRUE(
        torch::equal(liftlab::make_eight_gaussians(64, 3), liftlab::make_eight_gaussians(64, 3)));
    EXPECT_TRUE(torch::equal(liftlab::make_two_spirals(64, 3), liftlab::make_two_spirals(64, 3)));
    EXPECT_FALSE(
        torch::equal(liftlab::make_eight_gaussians(64, 3), liftlab::make_eight_gaussians(64, 4)));
    EXPECT_FALSE(torch::equal(liftlab::make_two_spirals(64, 3), liftlab::make_two_spirals(64, 4)));
}

TEST(Toy2d, EightGaussiansCentredWithAnalyticSpread) {
    const auto x = liftlab::make_eight_gaussians(kToySamples, /*seed=*/1);
    // Per coordinate: E[(4c_x)²] = 16 · ½ = 8 over the 8 centres, plus noise 0.5², all / 1.414².
    const double var = (8.0 + 0.25) / (1.414 * 1.414);
    const double se_mean = std::sqrt(var / kToySamples);
    const auto mean = x.mean(/*dim=*/0);
    EXPECT_NEAR(mean[0].item<double>(), 0.0, kStdErrors * se_mean);
    EXPECT_NEAR(mean[1].item<double>(), 0.0, kStdErrors * se_mean);
    // Loose (2%) check of the spread itself.
    const auto v = x.var(/*dim=*/0);
    EXPECT_NEAR(v[0].item<double>(), var, 0.02 * var);
    EXPECT_NEAR(v[1].item<double>(), var, 0.02 * var);
}

TEST(Toy2d, EightGaussiansSitAtNoiseDistanceFromTheNearestCentre) {
    const auto centres = liftlab::eight_gaussians_centres();
    // Radius 4/1.414 for every centre.
    EXPECT_TRUE(torch::allclose(centres.norm(2, /*dim=*/1),
                                torch::full({8}, 4.0 / 1.414, torch::kFloat64)));
    const auto x = liftlab::make_eight_gaussians(kToySamples, /*seed=*/2);
    const auto d2 = std::get<0>(torch::cdist(x, centres).pow(2).min(/*dim=*/1));
    // Own-centre squared distance is σ²·χ²₂ with σ = 0.5/1.414: mean 2σ² = 0.25036, sd 2σ².
    // Nearest ≤ own, and differs only when the noise crosses a bisector (≈ 0.2% of samples at
    // 3.06σ), so the mean must match 2σ² within 5 standard errors plus a 0.005 allowance.
    const double sigma2 = std::pow(0.5 / 1.414, 2);
    const double se = 2.0 * sigma2 / std::sqrt(static_cast<double>(kToySamples));
    EXPECT_NEAR(d2.mean().item<double>(), 2.0 * sigma2, kStdErrors * se + 0.005);
    // χ²₂ tail: P(d² > 2σ²·t) = e^{−t}; at t = 10 essentially no sample lies that far.
    EXPECT_LT((d2 > 20.0 * sigma2).sum().item<int64_t>(), 5);
}

TEST(Toy2d, TwoSpiralsAreSymmetricByConstruction) {
    const auto x = liftlab::make_two_spirals(kToySamples, /*seed=*/1);
    // The clean rows cancel exactly in pairs, so the mean is pure noise: sd 0.1/√n per coord.
    const double se_mean = 0.1 / std::sqrt(static_cast<double>(kToySamples));
    const auto mean = x.mean(/*dim=*/0);
    EXPECT_NEAR(mean[0].item<double>(), 0.0, kStdErrors * se_mean);
    EXPECT_NEAR(mean[1].item<double>(), 0.0, kStdErrors * se_mean);
    // Mirror pairs: row i + row i + n/2 = noise sum, N(0, 2·0.1²) per coordinate.
    const int64_t m = kToySamples / 2;
    const auto pair_sum = x.narrow(0, 0, m) + x.narrow(0, m, m);
    EXPECT_NEAR(pair_sum.var().item<double>(), 2.0 * 0.01, 0.05 * 0.02);
    // Radius: the arm reaches |n| ≤ 3π, plus jitter ≤ 0.5·√2, all / 3, plus noise.
    const double max_clean = (3.0 * kPi + 0.5 * std::sqrt(2.0)) / 3.0;
    EXPECT_LT(x.norm(2, /*dim=*/1).max().item<double>(), max_clean + 6.0 * 0.1 * std::sqrt(2.0));
}

}  // namespace
