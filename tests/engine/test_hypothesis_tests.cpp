// The claims table's statistics (engine/stats/hypothesis_tests.h) against closed forms, textbook
// tables, exact combinatorics and the null distributions they assume (seeded Monte Carlo).
// References not from a closed form were computed independently of this code with Python's
// standard library: statistics.NormalDist for normal quantiles, Simpson's rule on the t density
// (200 000 panels) for t tail areas, scripts/cpflow-demo-stats.py for the basin threshold.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "stats/hypothesis_tests.h"

namespace liftlab::stats {
namespace {

constexpr double kPi = 3.14159265358979323846;

TEST(HypothesisTests, NormalQuantileInvertsTheCdf) {
    EXPECT_NEAR(normal_quantile(0.975), 1.9599639845400536, 1e-13);
    EXPECT_NEAR(normal_quantile(0.95), 1.6448536269514715, 1e-13);
    EXPECT_NEAR(normal_quantile(0.3), -0.5244005127080407, 1e-13);
    EXPECT_NEAR(normal_quantile(1e-10), -6.361340902404056, 1e-10);
    for (double p : {1e-12, 0.01, 0.2, 0.5, 0.77, 0.999})
        EXPECT_NEAR(normal_cdf(normal_quantile(p)), p, 1e-14 + 1e-12 * p);
    EXPECT_THROW(normal_quantile(0), std::invalid_argument);
    EXPECT_THROW(normal_quantile(1), std::invalid_argument);
}

TEST(HypothesisTests, IncompleteBetaAndGammaMatchClosedForms) {
    for (double x : {0.0, 0.1, 0.37, 0.5, 0.9, 1.0}) {
        EXPECT_NEAR(regularized_beta(x, 1, 1), x, 1e-14);
        EXPECT_NEAR(regularized_beta(x, 3.5, 1), std::pow(x, 3.5), 1e-13);
        EXPECT_NEAR(regularized_beta(x, 1, 4.2), 1 - std::pow(1 - x, 4.2), 1e-13);
    }
    EXPECT_NEAR(regularized_beta(0.5, 7.3, 7.3), 0.5, 1e-13);
    // P(1, x) = 1 − e^{−x}; P(2, x) = 1 − e^{−x}(1 + x).
    for (double x : {0.01, 0.5, 1.0, 2.0, 7.5, 30.0}) {
        EXPECT_NEAR(regularized_gamma_p(1, x), -std::expm1(-x), 1e-14);
        EXPECT_NEAR(regularized_gamma_p(2, x), 1 - std::exp(-x) * (1 + x), 1e-13);
    }
    EXPECT_THROW(regularized_beta(1.5, 1, 1), std::invalid_argument);
    EXPECT_THROW(regularized_gamma_p(0, 1), std::invalid_argument);
}

TEST(HypothesisTests, StudentTMatchesClosedFormsAndTables) {
    for (double t : {-30.0, -2.5, -0.3, 0.0, 0.8, 4.0}) {
        EXPECT_NEAR(student_t_cdf(t, 1), 0.5 + std::atan(t) / kPi, 1e-14);  // Cauchy
        EXPECT_NEAR(student_t_cdf(t, 2), 0.5 + t / (2 * std::sqrt(2 + t * t)), 1e-14);
    }
    // t_{0.975, 10} (table), t_{0.95, 5} and t_{0.995, 3}: roots of the closed-form CDFs
    // ½ + [x/u·(1 + 2/(3u)) + atan x]/π (5 df) and ½ + [x/u + atan x]/π (3 df), x = t/√df,
    // u = 1 + x², solved by bisection in double precision.
    EXPECT_NEAR(student_t_quantile(0.975, 10), 2.228138851986274, 1e-10);
    EXPECT_NEAR(student_t_quantile(0.95, 5), 2.0150483733330224, 1e-10);
    EXPECT_NEAR(student_t_quantile(0.995, 3), 5.840909309733352, 1e-9);
    EXPECT_NEAR(student_t_quantile(0.025, 10), -2.228138851986274, 1e-10);
    // Non-integer df (Welch's): Simpson on the density.
    EXPECT_NEAR(1 - student_t_cdf(1.5, 7.3), 0.08778154640154517, 1e-12);
    // Large df tends to the normal.
    EXPECT_NEAR(student_t_cdf(1.96, 1e7), normal_cdf(1.96), 1e-7);
}

TEST(HypothesisTests, ChiSquaredTailMatchesClosedForms) {
    for (double x : {0.1, 1.0, 3.841458820694124, 12.0}) {
        EXPECT_NEAR(chi_squared_sf(x, 2), std::exp(-x / 2), 1e-14);
        EXPECT_NEAR(chi_squared_sf(x, 1), std::erfc(std::sqrt(x / 2)), 1e-13);
        EXPECT_NEAR(chi_squared_sf(x, 4), std::exp(-x / 2) * (1 + x / 2), 1e-13);
    }
    EXPECT_NEAR(chi_squared_sf(3.841458820694124, 1), 0.05, 1e-12);
    EXPECT_NEAR(chi_squared_sf(18.307038053275146, 10), 0.05, 1e-12);
}

TEST(HypothesisTests, WelchTestMatchesAHandComputedExample) {
    const std::vector<double> a = {5.1, 4.9, 6.2, 5.8, 6.0, 5.5, 5.3};
    const std::vector<double> b = {4.1, 4.6, 4.0, 5.2, 4.4};
    const auto g = welch_t_test(a, b, Alternative::Greater);
    EXPECT_NEAR(g.statistic, 3.867615420634889, 1e-12);
    EXPECT_NEAR(g.df, 8.790572378156437, 1e-12);
    EXPECT_NEAR(g.p, 0.0019878767281673957, 1e-12);
    EXPECT_NEAR(g.estimate, 5.542857142857143 - 4.46, 1e-12);
    EXPECT_TRUE(std::isinf(g.ci_high));
    EXPECT_LT(g.ci_low, g.estimate);
    const auto two = welch_t_test(a, b, Alternative::TwoSided);
    EXPECT_NEAR(two.p, 2 * g.p, 1e-14);
    // The two-sided interval is estimate ± t_{0.975, df}·se.
    EXPECT_NEAR(two.ci_high - two.estimate, student_t_quantile(0.975, two.df) * two.se, 1e-12);
    EXPECT_NEAR(welch_t_test(a, b, Alternative::Less).p, 1 - g.p, 1e-14);
    EXPECT_THROW(welch_t_test({1.0}, b, Alternative::Less), std::invalid_argument);
}

// Under the null (both samples from one normal), Welch's p is uniform: a seeded Monte Carlo of
// 4000 tests, checked by Kolmogorov–Smirnov at level 1e-3 (critical value 1.95/√n).
TEST(HypothesisTests, WelchAndMannWhitneyPValuesAreUniformUnderTheNull) {
    std::mt19937_64 rng(11);
    std::normal_distribution<double> n01(0, 1);
    const int reps = 4000;
    std::vector<double> pw, pm;
    for (int r = 0; r < reps; ++r) {
        std::vector<double> a(6), b(9);
        for (double& x : a) x = 2 + 3 * n01(rng);
        for (double& x : b) x = 2 + 3 * n01(rng);
        pw.push_back(welch_t_test(a, b, Alternative::TwoSided).p);
        pm.push_back(mann_whitney_u(a, b, Alternative::Less).p);
    }
    std::sort(pw.begin(), pw.end());
    double ks = 0;
    for (int i = 0; i < reps; ++i)
        ks = std::max({ks, std::abs(pw[i] - (i + 1.0) / reps), std::abs(pw[i] - 1.0 * i / reps)});
    EXPECT_LT(ks, 1.95 / std::sqrt(reps));
    // The exact U test is discrete: P(p ≤ α) ≤ α, and close to it at its attainable levels.
    const double share = std::count_if(pm.begin(), pm.end(), [](double p) { return p <= 0.05; }) /
                         static_cast<double>(reps);
    EXPECT_LE(share, 0.05 + 5 * std::sqrt(0.05 * 0.95 / reps));
    EXPECT_GE(share, 0.03);
}

TEST(HypothesisTests, MannWhitneyExactDistributionMatchesTheTable) {
    // n = m = 3, complete separation: P(U = 0) = 1/C(6, 3) = 1/20.
    const auto r = mann_whitney_u({1, 2, 3}, {4, 5, 6}, Alternative::Less);
    EXPECT_TRUE(r.exact);
    EXPECT_EQ(r.u, 0);
    EXPECT_NEAR(r.p, 1.0 / 20, 1e-15);
    EXPECT_NEAR(mann_whitney_u({1, 2, 3}, {4, 5, 6}, Alternative::TwoSided).p, 0.1, 1e-15);
    EXPECT_NEAR(mann_whitney_u({4, 5, 6}, {1, 2, 3}, Alternative::Greater).p, 0.05, 1e-15);
    // n = m = 4: P(U ≤ 0, 1, 2, 3) = 1, 2, 4, 7 out of C(8, 4) = 70.
    const std::vector<double> b = {10, 20, 30, 40};
    EXPECT_NEAR(mann_whitney_u({1, 2, 3, 4}, b, Alternative::Less).p, 1.0 / 70, 1e-15);
    EXPECT_NEAR(mann_whitney_u({1, 2, 3, 15}, b, Alternative::Less).p, 2.0 / 70, 1e-15);
    EXPECT_NEAR(mann_whitney_u({1, 2, 3, 25}, b, Alternative::Less).p, 4.0 / 70, 1e-15);
    EXPECT_NEAR(mann_whitney_u({1, 2, 12, 15}, b, Alternative::Less).p, 4.0 / 70, 1e-15);
    EXPECT_NEAR(mann_whitney_u({1, 2, 3, 35}, b, Alternative::Less).p, 7.0 / 70, 1e-15);
    // With ties: the normal approximation, U counting ties as ½.
    const auto t = mann_whitney_u({1, 2, 2, 3}, {2, 4, 5}, Alternative::Less);
    EXPECT_FALSE(t.exact);
    EXPECT_EQ(t.u, 2.0);
}

TEST(HypothesisTests, FisherCombinedMatchesItsClosedForm) {
    // One p: −2 log p ~ χ²₂ has tail exactly p.
    EXPECT_NEAR(fisher_combined({0.037}).p, 0.037, 1e-14);
    // k p-values with product P: combined p = P Σ_{i<k} (−log P)^i / i!.
    const std::vector<double> ps = {0.05, 0.2, 0.6};
    const double P = 0.05 * 0.2 * 0.6, L = -std::log(P);
    const auto c = fisher_combined(ps);
    EXPECT_EQ(c.df, 6);
    EXPECT_NEAR(c.statistic, 2 * L, 1e-13);
    EXPECT_NEAR(c.p, P * (1 + L + L * L / 2), 1e-13);
    EXPECT_THROW(fisher_combined({}), std::invalid_argument);
    EXPECT_THROW(fisher_combined({0.0}), std::invalid_argument);
}

TEST(HypothesisTests, BinomialAndFisherExactMatchCombinatorics) {
    EXPECT_NEAR(binomial_test(9, 10, 0.5, Alternative::Greater), 11.0 / 1024, 1e-15);
    EXPECT_NEAR(binomial_test(1, 10, 0.5, Alternative::Less), 11.0 / 1024, 1e-15);
    EXPECT_NEAR(binomial_test(9, 10, 0.5, Alternative::TwoSided), 22.0 / 1024, 1e-15);
    // P(X ≥ 2 | n = 10, 0.05) = 1 − 0.95¹⁰ − 10·0.05·0.95⁹.
    EXPECT_NEAR(binomial_test(2, 10, 0.05, Alternative::Greater),
                1 - std::pow(0.95, 10) - 10 * 0.05 * std::pow(0.95, 9), 1e-14);
    // Clopper–Pearson at the ends: (0, 1 − (α/2)^{1/n}) and ((α/2)^{1/n}, 1).
    const auto lo = clopper_pearson(0, 10);
    EXPECT_EQ(lo.first, 0);
    EXPECT_NEAR(lo.second, 1 - std::pow(0.025, 0.1), 1e-10);
    const auto hi = clopper_pearson(10, 10);
    EXPECT_NEAR(hi.first, std::pow(0.025, 0.1), 1e-10);
    EXPECT_EQ(hi.second, 1);
    // Fisher's tea-tasting table [[3, 1], [1, 3]]: P(≥ 3) = 17/70.
    EXPECT_NEAR(fisher_exact_test(3, 1, 1, 3, Alternative::Greater), 17.0 / 70, 1e-14);
    EXPECT_NEAR(fisher_exact_test(3, 1, 1, 3, Alternative::TwoSided), 34.0 / 70, 1e-14);
    EXPECT_NEAR(fisher_exact_test(1, 3, 3, 1, Alternative::Less), 17.0 / 70, 1e-14);
}

TEST(HypothesisTests, SeedsForPowerMatchCohensTable) {
    // Cohen (1988), two-sided α = 0.05, power 0.8: d = 0.5 → 64, d = 0.8 → 26 per group.
    EXPECT_EQ(seeds_for_power(0.5, 1, 1, 0.05, 0.8, false), 64);
    EXPECT_EQ(seeds_for_power(0.8, 1, 1, 0.05, 0.8, false), 26);
    EXPECT_NEAR(static_cast<double>(seeds_for_power(0.2, 1, 1, 0.05, 0.8, false)), 393, 1);
    // Scale invariance and the one-sided test's smaller need.
    EXPECT_EQ(seeds_for_power(5, 10, 10, 0.05, 0.8, false), 64);
    EXPECT_LT(seeds_for_power(0.5, 1, 1, 0.05, 0.8, true), 64);
    EXPECT_EQ(seeds_for_power(0, 1, 1, 0.05, 0.8, false), -1);
    // One sample: n = ((z_α + z_β)/d)² + z_α²/2; d = 0.5, two-sided: 31.4 + 1.9 → 34.
    EXPECT_EQ(seeds_for_power_one_sample(0.5, 1, 0.05, 0.8, false), 34);
}

TEST(HypothesisTests, BasinThresholdMatchesTheSweepScript) {
    std::vector<double> v;
    for (int i = 0; i < 30; ++i) v.push_back(0.8 + 0.2 * std::sin(i));
    for (int i = 0; i < 30; ++i) v.push_back(3.55 + 0.02 * std::cos(i));
    EXPECT_NEAR(basin_threshold(v), 2.193204789231742, 1e-9);
    std::vector<double> arcsine;
    for (int i = 0; i < 40; ++i) arcsine.push_back(std::sin(i * 0.37));
    EXPECT_NEAR(basin_threshold(arcsine), -0.1920712546220722, 1e-9);
    std::vector<double> normal;
    for (int i = 0; i < 40; ++i) normal.push_back(normal_quantile((i + 0.5) / 40));
    EXPECT_TRUE(std::isnan(basin_threshold(normal)));
    EXPECT_TRUE(std::isnan(basin_threshold({1, 2, 3})));
}

TEST(HypothesisTests, NumbersAreWrittenLocaleFree) {
    EXPECT_EQ(format_number(0.012345), "0.0123");
    EXPECT_EQ(format_number(-3.76e-4), "-3.76e-04");
    EXPECT_EQ(format_number(1234.4, 4), "1234");
    EXPECT_EQ(format_p(0.0498), "0.0498");
    EXPECT_EQ(format_p(2.4e-5), "2.4e-05");
    EXPECT_EQ(format_p(0), "< 1e-12");
}

}  // namespace
}  // namespace liftlab::stats
