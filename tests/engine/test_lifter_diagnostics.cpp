// Lifter diagnostics (docs/methods.md §4.1): σ²_Jac with its permutation test against constructed
// pairs of known cross-covariance, independent pairs (uniform p-values), constant iterates and
// g = −θ̃; the readout-shoulder mask at its exact thresholds and the shoulder tracker on
// hand-worked sequences and a two-state Markov chain with known exit probability.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "diagnostics/cross_covariance.h"
#include "diagnostics/shoulder.h"
#include "test_helpers.h"

using liftlab::cross_covariance_trace;
using liftlab::shoulder_mask;
using liftlab::ShoulderTracker;

namespace {
using liftlab::test::kF64;
constexpr int kPerms = 200;

using liftlab::test::has;
using liftlab::test::values;

// Standard deviation of the permutation distribution of (1/(B−1)) Σ_b ⟨x_b, g_π(b)⟩ for centred
// X, G (Hoeffding's combinatorial CLT): Var = ||X Gᵀ||_F² / (B−1)³, and ||X Gᵀ||_F² =
// tr((XᵀX)(GᵀG)) needs only P × P products.
double hoeffding_sd(const torch::Tensor& x, const torch::Tensor& g) {
    const auto xc = x - x.mean(0, true), gc = g - g.mean(0, true);
    const double b1 = static_cast<double>(x.size(0) - 1);
    const double fro2 = torch::trace(xc.t().matmul(xc).matmul(gc.t().matmul(gc))).item<double>();
    return std::sqrt(fro2 / (b1 * b1 * b1));
}

std::string invalid_argument_message(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected std::invalid_argument";
    return "";
}

torch::Tensor bool_mask(const std::vector<int>& v) {
    return torch::tensor(std::vector<int64_t>(v.begin(), v.end())).to(torch::kBool);
}

// Uniform double in [0, 1) from 53 random bits (portable, unlike std::uniform_real_distribution).
double unit(std::mt19937_64& rng) {
    return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}
}  // namespace

// ---------------------------------------------------------------- σ²_Jac

TEST(CrossCovariance, KnownCrossCovarianceOfLinearPair) {
    // z_b ~ N(0, I_k), θ̃_b = A z_b, g_b = C z_b + s ε_b with ε_b ~ N(0, I_P) independent:
    // Cov(θ̃, g) = E[A z zᵀ Cᵀ] = A Cᵀ, so σ²_Jac estimates tr(A Cᵀ) = Σ_ij A_ij C_ij (unbiased: the
    // 1/(B−1) sample cross-covariance). Its standard error is that of the mean of
    // u = zᵀ (AᵀC) z + s (A z)ᵀ ε: for Gaussian z, Var(zᵀ M z) = 2 tr(M_s²) with M_s = (M + Mᵀ)/2,
    // and the ε term adds s² ||A||_F² (uncorrelated with the first), so SE = sqrt(Var u / B) up to
    // O(1/B) centring corrections. Tolerance: 4 SE.
    torch::manual_seed(101);
    const int64_t batches = 4000, k = 3;
    const double s = 0.5;
    const auto a =
        torch::tensor({1.0, 0.5, 0.0, 0.0, 1.0, -0.5, 0.3, 0.0, 1.0, 0.5, 0.5, 0.5}, kF64)
            .reshape({4, k});
    const auto c =
        torch::tensor({0.8, 0.0, 0.2, 0.1, 0.9, 0.0, 0.0, -0.3, 0.7, 0.4, 0.0, 0.4}, kF64)
            .reshape({4, k});
    const auto z = torch::randn({batches, k}, kF64);
    const auto x = z.matmul(a.t());
    const auto g = z.matmul(c.t()) + s * torch::randn({batches, 4}, kF64);

    const double expected = (a * c).sum().item<double>();  // tr(A Cᵀ) = 2.8
    const auto m = a.t().matmul(c), ms = 0.5 * (m + m.t());
    const double var_u =
        2 * torch::trace(ms.matmul(ms)).item<double>() + s * s * a.pow(2).sum().item<double>();
    const double se = std::sqrt(var_u / batches);

    const auto r = cross_covariance_trace(x, g, kPerms, /*seed=*/5);  // B > 2048: row path
    EXPECT_EQ(r.batches, batches);
    EXPECT_EQ(r.permutations, kPerms);
    EXPECT_NEAR(r.sigma2_jac, expected, 4 * se);
    // tr(A Cᵀ) is ~90 permutation standard deviations from 0: no shuffle reaches it, so p is the
    // smallest attainable value 1/201.
    EXPECT_LT(r.p_value, 0.01);
    EXPECT_DOUBLE_EQ(r.p_value, 1.0 / (1 + kPerms));
    // The permutation null: mean exactly 0 in expectation (G centred), sd from Hoeffding. With 200
    // draws the sample mean has SE sd/√200 (tolerance 4 of those) and the sample sd a relative SE
    // of 1/√(2·199) ≈ 0.05 (tolerance 0.2 = 4 of those).
    const double sd = hoeffding_sd(x, g);
    EXPECT_NEAR(r.null_mean, 0.0, 4 * sd / std::sqrt(double(kPerms)));
    EXPECT_NEAR(r.null_sd / sd, 1.0, 0.2);
    // iterate_spread = tr Cov(θ̃) → tr(A Aᵀ); checked exactly against the sample covariance.
    const double spread = torch::var(x, /*dim=*/0, /*unbiased=*/true).sum().item<double>();
    EXPECT_NEAR(r.iterate_spread, spread, 1e-12 * spread);
}

TEST(CrossCovariance, IndependentPairsGiveUniformPValuesAndZeroMean) {
    // θ̃, g independent N(0, I_P): the permutation p-value is exactly uniform on {1..201}/201, so
    // P(p ≤ 0.05) = 10/201 and P(p ≤ 0.5) = 100/201. Over 400 seeds the counts are binomial:
    // tolerance 4 binomial standard deviations. σ²_Jac = (1/(B−1)) Σ_p x_pᵀ H g_p (H the centring
    // projector) has mean 0 and variance exactly P/(B−1); its mean over seeds is within 4 SE of 0
    // and its sample variance within 30% of P/(B−1) (relative sd of a sample variance over 400
    // draws ≈ √(2/399 + excess kurtosis 0.05/400) ≈ 0.072; 0.3 ≈ 4 of those).
    const int seeds = 400;
    const int64_t batches = 30, coords = 4;  // B ≤ 2048: the Gram-matrix evaluation
    int below_005 = 0, below_05 = 0;
    double sum = 0, sum_sq = 0, ratio_sum = 0;
    for (int i = 0; i < seeds; ++i) {
        torch::manual_seed(1000 + i);
        const auto x = torch::randn({batches, coords}, kF64);
        const auto g = torch::randn({batches, coords}, kF64);
        const auto r = cross_covariance_trace(x, g, kPerms, /*seed=*/static_cast<uint64_t>(i));
        ASSERT_GE(r.p_value, 1.0 / (1 + kPerms));
        ASSERT_LE(r.p_value, 1.0);
        below_005 += r.p_value <= 0.05;
        below_05 += r.p_value <= 0.5;
        sum += r.sigma2_jac;
        sum_sq += r.sigma2_jac * r.sigma2_jac;
        ratio_sum += r.null_sd / hoeffding_sd(x, g);
    }
    const double p1 = 10.0 / 201, p2 = 100.0 / 201;
    EXPECT_NEAR(below_005, seeds * p1, 4 * std::sqrt(seeds * p1 * (1 - p1)));
    EXPECT_NEAR(below_05, seeds * p2, 4 * std::sqrt(seeds * p2 * (1 - p2)));
    const double var = double(coords) / double(batches - 1);
    const double mean = sum / seeds;
    EXPECT_NEAR(mean, 0.0, 4 * std::sqrt(var / seeds));
    const double sample_var = (sum_sq - seeds * mean * mean) / (seeds - 1);
    EXPECT_NEAR(sample_var / var, 1.0, 0.3);
    // The permutation sd matches Hoeffding's formula: each estimate has relative SE ≈ 0.05, the
    // mean over 400 seeds ≈ 0.0025 (plus the −1/(4·200) bias of a sample sd); tolerance 0.02.
    EXPECT_NEAR(ratio_sum / seeds, 1.0, 0.02);
}

TEST(CrossCovariance, ConstantIteratesGiveExactlyZeroAndPOne) {
    torch::manual_seed(102);
    // Entries like 0.1 are not dyadic: a plain mean of 20 copies need not round back to them.
    const auto row = torch::tensor({0.1, 0.7, 1.0 / 3, -2.9444389791664403, 1e-8, 123.456}, kF64);
    const auto x = row.unsqueeze(0).repeat({20, 1});
    const auto g = torch::randn({20, 6}, kF64) * 3 + 1;
    for (int perms : {kPerms, 0}) {  // Gram and row-by-row evaluations
        const auto r = cross_covariance_trace(x, g, perms, /*seed=*/3);
        EXPECT_EQ(r.sigma2_jac, 0.0);
        EXPECT_EQ(r.p_value, 1.0);  // every |perm| = 0 ≥ |obs| = 0
        EXPECT_EQ(r.iterate_spread, 0.0);
        EXPECT_EQ(r.null_mean, 0.0);
        EXPECT_EQ(r.null_sd, 0.0);
    }
    // Constant coordinates contribute exactly nothing when others move: coordinate 0 constant with
    // large gradient noise, coordinate 1 moving with zero gradient.
    auto x2 = torch::randn({20, 2}, kF64);
    x2.select(1, 0).fill_(0.1);
    auto g2 = torch::zeros({20, 2}, kF64);
    g2.select(1, 0).copy_(torch::randn({20}, kF64) * 100);
    const auto r2 = cross_covariance_trace(x2, g2, kPerms, /*seed=*/4);
    EXPECT_EQ(r2.sigma2_jac, 0.0);
    EXPECT_EQ(r2.p_value, 1.0);
    EXPECT_GT(r2.iterate_spread, 0.0);
}

TEST(CrossCovariance, NegatedIteratesGiveMinusTheCovarianceTrace) {
    // g = −θ̃: ⟨θ̃_b − mean, g_b − mean⟩ = −||θ̃_b − mean||², so σ²_Jac = −tr Cov(θ̃) exactly (up to
    // rounding: relative 1e-12 allows ~10⁴ ulps of accumulated summation error).
    torch::manual_seed(103);
    const auto x = torch::randn({50, 7}, kF64) * torch::linspace(0.1, 2.0, 7, kF64) + 3.0;
    const auto g = -x;
    const double trace = torch::var(x, /*dim=*/0, /*unbiased=*/true).sum().item<double>();
    const auto gram = cross_covariance_trace(x, g, kPerms, /*seed=*/9);  // Gram path
    const auto rows = cross_covariance_trace(x, g, 0);  // no permutations: row path
    EXPECT_LT(gram.sigma2_jac, 0.0);
    EXPECT_NEAR(gram.sigma2_jac, -trace, 1e-12 * trace);
    EXPECT_NEAR(rows.sigma2_jac, -trace, 1e-12 * trace);
    EXPECT_NEAR(gram.iterate_spread, trace, 1e-12 * trace);
    // By Cauchy–Schwarz no shuffle reaches |obs| = Σ||x_b||²/(B−1) unless it fixes every distinct
    // row, so p = 1/201 barring the identity shuffle (probability 200/50!).
    EXPECT_DOUBLE_EQ(gram.p_value, 1.0 / (1 + kPerms));
    EXPECT_EQ(rows.p_value, 1.0);  // no permutations: (1 + 0)/(1 + 0)
}

TEST(CrossCovariance, SeededAndDeterministic) {
    torch::manual_seed(104);
    const auto x = torch::randn({40, 5}, kF64), g = torch::randn({40, 5}, kF64) + 0.3 * x;
    const auto a = cross_covariance_trace(x, g, kPerms, 17);
    const auto b = cross_covariance_trace(x, g, kPerms, 17);
    const auto c = cross_covariance_trace(x, g, kPerms, 18);
    EXPECT_EQ(a.p_value, b.p_value);
    EXPECT_EQ(a.null_mean, b.null_mean);
    EXPECT_EQ(a.null_sd, b.null_sd);
    EXPECT_EQ(a.sigma2_jac, c.sigma2_jac);  // the statistic does not depend on the seed
    EXPECT_NE(a.null_mean, c.null_mean);    // the shuffles do (continuous data: no exact ties)
    // float32 input is promoted: same statistic as the float64 computation on the rounded data.
    const auto x32 = x.to(torch::kFloat32), g32 = g.to(torch::kFloat32);
    const auto f = cross_covariance_trace(x32, g32, kPerms, 17);
    const auto d =
        cross_covariance_trace(x32.to(torch::kFloat64), g32.to(torch::kFloat64), kPerms, 17);
    EXPECT_EQ(f.sigma2_jac, d.sigma2_jac);
}

TEST(CrossCovariance, BadInputThrows) {
    const auto x = torch::randn({10, 4}, kF64);
    EXPECT_TRUE(has(invalid_argument_message([&] { cross_covariance_trace(x.reshape({-1}), x); }),
                    "iterates"));
    EXPECT_TRUE(has(invalid_argument_message([&] {
                        cross_covariance_trace(x, torch::randn({10, 5}, kF64));
                    }),
                    "gradients"));
    EXPECT_TRUE(has(invalid_argument_message([&] {
                        cross_covariance_trace(x, torch::randn({11, 4}, kF64));
                    }),
                    "gradients"));
    EXPECT_TRUE(has(invalid_argument_message([&] { cross_covariance_trace(x, x.reshape({-1})); }),
                    "gradients"));
    EXPECT_TRUE(has(invalid_argument_message(
                        [&] { cross_covariance_trace(x.slice(0, 0, 2), x.slice(0, 0, 2)); }),
                    "3 batches"));
    EXPECT_TRUE(
        has(invalid_argument_message([&] { cross_covariance_trace(x, x, -1); }), "permutations"));
    auto bad = x.clone();
    bad[3][2] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_TRUE(
        has(invalid_argument_message([&] { cross_covariance_trace(x, bad); }), "gradients"));
    EXPECT_NO_THROW(cross_covariance_trace(x.slice(0, 0, 3), x.slice(0, 0, 3)));  // B = 3 is fine
}

// ---------------------------------------------------------------- shoulder mask

TEST(ShoulderMask, SoftplusThresholdIsExactlySigmoidFivePercent) {
    // sigmoid(t) ≤ 0.05 ⇔ t ≤ log(0.05/0.95): the threshold itself is in, the next double up is
    // out.
    const double t = std::log(0.05 / 0.95);
    const double up = std::nextafter(t, HUGE_VAL), down = std::nextafter(t, -HUGE_VAL);
    const auto theta = torch::tensor({t, up, down, -10.0, 0.0, 5.0, -2.9, -3.0}, kF64);
    EXPECT_EQ(values(shoulder_mask(theta, false)), (std::vector<int64_t>{1, 0, 1, 1, 0, 0, 0, 1}));
    // Equivalent readings of the same threshold: θ = softplus(t) = −log 0.95 ≈ 0.0513 and an
    // attenuation 1/sigmoid(t) = 20.
    EXPECT_NEAR(std::log1p(std::exp(t)), -std::log(0.95), 1e-15);
    EXPECT_NEAR(1.0 / (1.0 + std::exp(-t)), liftlab::kShoulderSigmoid, 1e-15);
    // Any shape, flattened to a 1-D bool mask; float32 input just either side of the threshold
    // (float spacing near 2.94 is 2.4e-7, so ±1e-6 are distinct floats on the right sides).
    const auto f =
        torch::tensor({float(t - 1e-6), float(t + 1e-6), -4.f, 1.f, -1.f, -3.f}).reshape({2, 3});
    const auto m = shoulder_mask(f, false);
    EXPECT_EQ(m.dim(), 1);
    EXPECT_EQ(m.scalar_type(), torch::kBool);
    EXPECT_EQ(values(m), (std::vector<int64_t>{1, 0, 1, 0, 0, 1}));
    // NaN is never in the shoulder.
    EXPECT_EQ(values(shoulder_mask(torch::tensor({std::nan("")}, kF64), false)),
              (std::vector<int64_t>{0}));
}

TEST(ShoulderMask, ProjectedMeansExactlyZero) {
    const liftlab::test::KeepSubnormals subnormals;  // the values below include denormals
    // pgd: only θ == 0 (−0 too); the smallest denormal and a value deep in the softplus shoulder
    // are not zero.
    const auto theta = torch::tensor({0.0, -0.0, 5e-324, 1e-300, 0.3, -3.0}, kF64);
    EXPECT_EQ(values(shoulder_mask(theta, true)), (std::vector<int64_t>{1, 1, 0, 0, 0, 0}));
    EXPECT_EQ(values(shoulder_mask(theta.to(torch::kFloat32).reshape({3, 2}), true)),
              (std::vector<int64_t>{1, 1, 1, 1, 0, 0}));  // 5e-324, 1e-300 underflow to 0 in float
}

// ---------------------------------------------------------------- shoulder tracker

TEST(ShoulderTracker, HandWorkedSequenceWithUnevenSpacing) {
    // Observations at steps 0, 2, 3, 7, 10 of four coordinates (1 = in the shoulder):
    //   step   0  2  3  7  10
    //   c0     1  1  0  0  1    left-censored, exits at 3 (not listed); re-enters at 10 (running)
    //   c1     0  1  1  0  0    enters 2, exits 7: dwell 5
    //   c2     0  0  1  0  1    enters 3, exits 7: dwell 4; enters 10 (running)
    //   c3     0  1  0  1  0    enters 2, exits 3: dwell 1; enters 7, exits 10: dwell 3
    // in-counts 1, 3, 2, 1, 2; exposure = 1·2 + 3·1 + 2·4 + 1·3 = 16.
    ShoulderTracker t(4);
    EXPECT_EQ(t.observations(), 0);
    EXPECT_TRUE(std::isnan(t.occupancy()));
    EXPECT_TRUE(std::isnan(t.median_dwell()));
    EXPECT_TRUE(std::isnan(t.exit_rate()));

    t.observe(0, bool_mask({1, 0, 0, 0}));
    EXPECT_EQ(t.censored_start(), 1);
    EXPECT_EQ(t.entries(), 0);
    EXPECT_DOUBLE_EQ(t.occupancy(), 0.25);
    EXPECT_TRUE(std::isnan(t.exit_rate()));  // no time spent yet

    t.observe(2, bool_mask({1, 1, 0, 1}));
    t.observe(3, bool_mask({0, 1, 1, 0}));
    EXPECT_EQ(t.entries(), 3);
    EXPECT_EQ(t.exits(), 2);
    EXPECT_EQ(t.completed_dwells(), (std::vector<int64_t>{1}));  // c0's exit is left-censored
    EXPECT_DOUBLE_EQ(t.median_dwell(), 1.0);
    EXPECT_EQ(t.exposure(), 5);
    EXPECT_DOUBLE_EQ(t.exit_rate(), 2.0 / 5);

    t.observe(7, bool_mask({0, 0, 0, 1}));
    EXPECT_EQ(t.completed_dwells(), (std::vector<int64_t>{1, 5, 4}));
    EXPECT_DOUBLE_EQ(t.median_dwell(), 4.0);  // odd count: the middle value

    t.observe(10, bool_mask({1, 0, 1, 0}));
    EXPECT_EQ(t.observations(), 5);
    EXPECT_DOUBLE_EQ(t.occupancy(), 0.5);
    EXPECT_EQ(t.entries(), 6);
    EXPECT_EQ(t.exits(), 5);
    EXPECT_EQ(t.completed_dwells(), (std::vector<int64_t>{1, 5, 4, 3}));
    EXPECT_DOUBLE_EQ(t.median_dwell(), 3.5);  // even count: mean of 3 and 4
    EXPECT_EQ(t.censored(), 2);               // c0 and c2
    EXPECT_EQ(t.censored(), t.censored_start() + t.entries() - t.exits());
    EXPECT_EQ(t.exposure(), 16);
    EXPECT_DOUBLE_EQ(t.exit_rate(), 5.0 / 16);
}

TEST(ShoulderTracker, AbsorbedCoordinatesHaveZeroExitRate) {
    // Direct-softplus picture: everything enters and stays. exit_rate = 0 (time in, no exits), no
    // completed dwell (median NaN), every dwell right-censored.
    ShoulderTracker t(3);
    t.observe(1, bool_mask({0, 0, 1}));
    t.observe(4, bool_mask({1, 0, 1}));
    t.observe(5, bool_mask({1, 1, 1}));
    t.observe(9, bool_mask({1, 1, 1}));
    EXPECT_EQ(t.exits(), 0);
    EXPECT_EQ(t.entries(), 2);
    EXPECT_EQ(t.censored(), 3);
    EXPECT_EQ(t.exposure(), 1 * 3 + 2 * 1 + 3 * 4);
    EXPECT_EQ(t.exit_rate(), 0.0);
    EXPECT_TRUE(t.completed_dwells().empty());
    EXPECT_TRUE(std::isnan(t.median_dwell()));
    EXPECT_DOUBLE_EQ(t.occupancy(), 1.0);
}

TEST(ShoulderTracker, TwoStateMarkovChainRecoversExitProbability) {
    // Each coordinate is a two-state chain: out → in with probability a, in → out with q per step,
    // started from its stationary law P(in) = a/(a+q) and observed every step for T steps.
    // - exit_rate is the MLE of q: given the exposure n_in, exits ~ Binomial(n_in, q), so
    //   tolerance 4·sqrt(q(1−q)/n_in); likewise the entry rate against a.
    // - Dwells are geometric(q): mean 1/q, variance (1−q)/q². Only dwells that end by step T are
    //   listed, so a dwell of length d is seen with weight ∝ (T − d): the listed mean is
    //   (Tμ − E D²)/(T − μ) = μ − Var D/(T − μ) (0.018 below 1/q here). Tolerance 4·sd(D)/√n.
    // - Median of geometric(0.1) is 7: P(D ≤ 6) = 0.469, P(D ≤ 7) = 0.522, both > 8 sd of an
    //   empirical CDF over ~3·10⁴ dwells away from 1/2.
    const int64_t coords = 200;
    const int steps = 5000;
    const double a = 0.05, q = 0.1;
    std::mt19937_64 rng(20261202);
    std::vector<uint8_t> state(coords);
    for (auto& s : state) s = unit(rng) < a / (a + q);
    ShoulderTracker t(coords);
    auto observe = [&](int step) {
        t.observe(step, torch::from_blob(state.data(), {coords}, torch::kBool));
    };
    observe(0);
    for (int step = 1; step <= steps; ++step) {
        for (auto& s : state) s = s ? (unit(rng) >= q) : (unit(rng) < a);
        observe(step);
    }
    const double n_in = static_cast<double>(t.exposure());
    const double n_out = static_cast<double>(coords) * steps - n_in;
    EXPECT_NEAR(t.exit_rate(), q, 4 * std::sqrt(q * (1 - q) / n_in));
    EXPECT_NEAR(t.entries() / n_out, a, 4 * std::sqrt(a * (1 - a) / n_out));

    const auto& d = t.completed_dwells();
    ASSERT_GT(d.size(), 20000u);
    double sum = 0;
    for (int64_t v : d) sum += static_cast<double>(v);
    const double mu = 1 / q, var = (1 - q) / (q * q);
    EXPECT_NEAR(sum / d.size(), mu - var / (steps - mu), 4 * std::sqrt(var / d.size()));
    EXPECT_EQ(t.median_dwell(), 7.0);
    // Occupancy at the last step: Binomial(200, 1/3)/200, tolerance 4 sd.
    const double pi = a / (a + q);
    EXPECT_NEAR(t.occupancy(), pi, 4 * std::sqrt(pi * (1 - pi) / coords));
    EXPECT_EQ(t.censored(), t.censored_start() + t.entries() - t.exits());
}

TEST(ShoulderTracker, LargeTrackerCountsMatchAndObserveIsCheap) {
    // P = 33 000 (the size of a lifter's constrained weights), observed every 5 steps; each
    // coordinate flips with probability 0.02 between observations. Counts are checked against
    // the generator's own tally; the time per observe() is printed (not asserted: shared machine).
    const int64_t coords = 33000;
    const int observations = 300;
    std::mt19937_64 rng(7);
    std::vector<uint8_t> state(coords);
    for (auto& s : state) s = unit(rng) < 0.3;
    int64_t ups = 0, downs = 0, first_in = 0;
    for (auto s : state) first_in += s;
    ShoulderTracker t(coords);
    double seconds = 0;
    for (int i = 0; i < observations; ++i) {
        if (i > 0)
            for (auto& s : state)
                if (unit(rng) < 0.02) {
                    (s ? downs : ups) += 1;
                    s = !s;
                }
        const auto mask = torch::from_blob(state.data(), {coords}, torch::kBool);
        const auto start = std::chrono::steady_clock::now();
        t.observe(5 * i, mask);
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    EXPECT_EQ(t.censored_start(), first_in);
    EXPECT_EQ(t.entries(), ups);
    EXPECT_EQ(t.exits(), downs);
    int64_t in_now = 0;
    for (auto s : state) in_now += s;
    EXPECT_EQ(t.censored(), in_now);
    std::printf("[ timing   ] ShoulderTracker::observe, P = %lld: %.1f us per call\n",
                static_cast<long long>(coords), 1e6 * seconds / observations);
}

TEST(ShoulderTracker, BadInputThrows) {
    EXPECT_TRUE(has(invalid_argument_message([] { ShoulderTracker t(0); }), "coordinates"));
    ShoulderTracker t(3);
    EXPECT_TRUE(has(invalid_argument_message([&] {
                        t.observe(0, bool_mask({1, 0}));
                    }),
                    "in_shoulder"));
    EXPECT_TRUE(has(invalid_argument_message([&] {
                        t.observe(0, torch::tensor({1.0, 0.0, 1.0}, kF64));
                    }),
                    "bool"));
    t.observe(5, bool_mask({1, 0, 1}));
    EXPECT_TRUE(has(invalid_argument_message([&] { t.observe(5, bool_mask({1, 0, 1})); }), "step"));
    EXPECT_TRUE(has(invalid_argument_message([&] { t.observe(4, bool_mask({1, 0, 1})); }), "step"));
    EXPECT_EQ(t.observations(), 1);                      // rejected observations leave no trace
    t.observe(6, bool_mask({0, 0, 1}).reshape({1, 3}));  // any shape with P entries
    EXPECT_EQ(t.exits(), 1);
}
