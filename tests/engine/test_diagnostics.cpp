// Feature spectrum and one-step gain against constructed matrices with known singular values.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "diagnostics/feature_spectrum.h"
#include "diagnostics/one_step_gain.h"
#include "test_helpers.h"

namespace {
using liftlab::test::kF64;

// N × d matrix U diag(σ) Vᵀ with random orthonormal U, V; returns it and V.
std::pair<torch::Tensor, torch::Tensor> with_singular_values(int64_t n,
                                                             const std::vector<double>& sv) {
    const int64_t d = static_cast<int64_t>(sv.size());
    auto u = std::get<0>(torch::linalg_qr(torch::randn({n, d}, kF64)));
    auto v = std::get<0>(torch::linalg_qr(torch::randn({d, d}, kF64)));
    return {u.matmul(torch::diag(torch::tensor(sv, kF64))).matmul(v.t()), v};
}
}  // namespace

TEST(FeatureSpectrum, RecoversConstructedSingularValues) {
    torch::manual_seed(21);
    auto [phi, v] = with_singular_values(50, {8, 4, 2, 1});
    auto s = liftlab::feature_spectrum(phi);
    ASSERT_EQ(s.singular_values.size(), 4u);
    EXPECT_NEAR(s.singular_values[0], 8, 1e-10);
    EXPECT_NEAR(s.singular_values[3], 1, 1e-10);
    EXPECT_NEAR(s.kappa, 8.0, 1e-9);
    // p = (8, 4, 2, 1)/15: exp(−Σ p log p).
    double h = 0;
    for (double x : {8.0, 4.0, 2.0, 1.0}) h -= x / 15 * std::log(x / 15);
    EXPECT_NEAR(s.effective_rank, std::exp(h), 1e-9);
    EXPECT_EQ(s.numerical_rank, 4);
}

// The two ends of the effective-rank scale the batch sweeps read: r equal singular values give
// exactly r (uniform p), a rank-one matrix (collapsed features) gives exactly 1.
TEST(FeatureSpectrum, EffectiveRankOfEqualValuesIsTheirCountAndOfRankOneIsOne) {
    torch::manual_seed(23);
    auto [flat, v] = with_singular_values(40, {3, 3, 3, 3, 3});
    auto s = liftlab::feature_spectrum(flat);
    EXPECT_NEAR(s.effective_rank, 5.0, 1e-9);
    EXPECT_NEAR(s.kappa, 1.0, 1e-9);

    auto rank_one = torch::randn({40, 1}, kF64).matmul(torch::randn({1, 6}, kF64));
    auto c = liftlab::feature_spectrum(rank_one);
    EXPECT_EQ(c.numerical_rank, 1);
    EXPECT_NEAR(c.effective_rank, 1.0, 1e-9);
    EXPECT_NEAR(c.kappa, 1.0, 1e-9);

    // Two values in ratio 3:1: p = (3/4, 1/4), exp(H) = 4 / 3^(3/4) ≈ 1.7548.
    auto [two, w] = with_singular_values(40, {3, 1});
    EXPECT_NEAR(liftlab::feature_spectrum(two).effective_rank, 4.0 / std::pow(3.0, 0.75), 1e-9);
}

TEST(FeatureSpectrum, RankDeficientMatrixIgnoresZeroSingularValues) {
    torch::manual_seed(22);
    auto a = torch::randn({30, 2}, kF64);
    auto phi = torch::cat({a, a.sum(1, true)}, 1);  // third column dependent: rank 2
    auto s = liftlab::feature_spectrum(phi);
    EXPECT_EQ(s.numerical_rank, 2);
    EXPECT_TRUE(std::isfinite(s.kappa));
    EXPECT_NEAR(s.effective_rank, 2.0, 1.0);  // between 1 and 2 (two unequal values)
}

TEST(OneStepGain, KnownQuadraticWorstCaseDirection) {
    // λ = 0, Y = ΦW*: f(W) − f* = ½ eᵀΦᵀΦe with e = W − W*. Put e along the right singular vector
    // of σ_min: the gradient step with 1/σ_max² shrinks e by (1 − 1/κ²), so its decrease is
    // (1 − (1 − 1/κ²)²) of the gap while the closed form removes the whole gap:
    //   gain = 1 / (2/κ² − 1/κ⁴) = κ⁴ / (2κ² − 1).
    torch::manual_seed(23);
    const double kappa = 10.0;
    auto [phi, v] = with_singular_values(40, {kappa, 5, 3, 1});
    auto w_star = torch::randn({4, 2}, kF64);
    auto y = phi.matmul(w_star);
    auto e = v.select(1, 3).unsqueeze(1).repeat({1, 2});  // σ_min direction
    auto g = liftlab::one_step_gain(phi, y, w_star + e, /*lambda=*/0.0);
    const double k2 = kappa * kappa;
    EXPECT_NEAR(g.gain, k2 * k2 / (2 * k2 - 1), 1e-6 * g.gain);
    EXPECT_NEAR(g.kappa, kappa, 1e-9);
    EXPECT_NEAR(g.kappa_hessian, k2, 1e-6);
    // Along σ_max the gradient step is exact: gain 1.
    auto e_top = v.select(1, 0).unsqueeze(1).repeat({1, 2});
    EXPECT_NEAR(liftlab::one_step_gain(phi, y, w_star + e_top, 0.0).gain, 1.0, 1e-8);
}

TEST(OneStepGain, RandomStartsRespectTheClassicalBound) {
    // 1 ≤ gain ≤ κ_H for every start: the gradient step contracts the gap by at most (1 − 1/κ_H).
    torch::manual_seed(24);
    for (double lambda : {0.0, 0.5}) {
        auto [phi, v] = with_singular_values(30, {20, 7, 3, 0.5});
        auto y = torch::randn({30, 3}, kF64);
        for (int i = 0; i < 20; ++i) {
            auto g = liftlab::one_step_gain(phi, y, torch::randn({4, 3}, kF64), lambda);
            EXPECT_GE(g.gain, 1.0 - 1e-9);
            EXPECT_LE(g.gain, g.kappa_hessian * (1 + 1e-9));
        }
    }
}
