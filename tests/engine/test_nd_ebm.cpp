// n-D log-concave EBM pieces (docs/methods.md §5.2–§5.6, §8.7): the known targets,
// importance sampling of log Z with a moment-matched proposal, the Monte-Carlo TV, and the
// Fashion-MNIST autoencoder latents. Statistical checks use fixed seeds (deterministic) and
// tolerances in standard errors that a wrong formula would miss by far.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

// Scratch builds outside CMake do not define the test binary folder TempDir lives in.
#ifndef LIFTLAB_TEST_BINARY_DIR
#define LIFTLAB_TEST_BINARY_DIR "/tmp"
#endif
#include "core/errors.h"
#include "data/dataset.h"
#include "data/fmnist_latents.h"
#include "data/idx_loader.h"
#include "data/tabular21.h"
#include "ebm/importance.h"
#include "ebm/nd_targets.h"
#include "methods/method_registry.h"
#include "spec/experiment_spec.h"
#include "test_helpers.h"
#include "training/runner.h"

namespace {

using liftlab::effective_sample_size;
using liftlab::importance_log_partition;
using liftlab::log_partition_standard_error;
using liftlab::make_nd_target;
using liftlab::monte_carlo_tv;
using liftlab::Proposal;
using liftlab::test::expect_invalid_argument;
using liftlab::test::has;
using liftlab::test::TempDir;

using liftlab::kPi;
// Moment / Monte-Carlo checks pass within this many standard errors (fixed seeds; a two-sided
// 5σ miss has probability 6e-7 per check, while the errors they guard against are many σ).
using liftlab::test::kStdErrors;

using liftlab::test::kF64;

// Trapezoid weights of `points` equally spaced nodes on [lo, hi] (h·½ at the ends, h inside).
torch::Tensor trapezoid_weights(double lo, double hi, int64_t points) {
    const double h = (hi - lo) / static_cast<double>(points - 1);
    auto w = torch::full({points}, h, kF64);
    w[0] = w[-1] = 0.5 * h;
    return w;
}

// ∫ p over [lo, hi]^d for d = 1 or 2 by the (tensor-product) trapezoid rule.
double integrate_density(const liftlab::NdTarget& t, double lo, double hi, int64_t points) {
    const auto g = torch::linspace(lo, hi, points, kF64);
    const auto w = trapezoid_weights(lo, hi, points);
    if (t.dim() == 1) return (t.log_density(g.unsqueeze(1)).exp() * w).sum().item<double>();
    const auto grids = torch::meshgrid({g, g}, "ij");
    const auto x = torch::stack({grids[0].reshape(-1), grids[1].reshape(-1)}, 1);
    const auto w2 = torch::outer(w, w).reshape(-1);
    return (t.log_density(x).exp() * w2).sum().item<double>();
}

// ---- Targets -----------------------------------------------------------------------------

TEST(NdTargets, FactoryRejectsBadNamesDimsAndShapes) {
    expect_invalid_argument([] { make_nd_target("banana", 2); },
                            "gaussian, gumbel, correlated, laplace");
    expect_invalid_argument([] { make_nd_target("gaussian", 0); }, "1…32");
    expect_invalid_argument([] { make_nd_target("correlated", 33); }, "dim 33");
    for (const auto& name : liftlab::nd_target_names()) {
        const auto t = make_nd_target(name, 3);
        EXPECT_EQ(t->name(), name);
        EXPECT_EQ(t->dim(), 3);
        expect_invalid_argument([&] { t->log_density(torch::zeros({5, 2}, kF64)); }, "n × 3");
        expect_invalid_argument([&] { t->sample(-1, 0); }, "n must be >= 0");
    }
}

TEST(NdTargets, SamplingIsDeterministicInTheSeedAndStructureInTheFactorySeed) {
    for (const auto& name : liftlab::nd_target_names()) {
        const auto t = make_nd_target(name, 4, /*seed=*/3);
        EXPECT_TRUE(torch::equal(t->sample(100, 7), t->sample(100, 7))) << name;
        EXPECT_FALSE(torch::equal(t->sample(100, 7), t->sample(100, 8))) << name;
        EXPECT_EQ(t->sample(100, 7).scalar_type(), torch::kFloat64);
    }
    const auto a = make_nd_target("correlated", 6, 1), b = make_nd_target("correlated", 6, 1),
               c = make_nd_target("correlated", 6, 2);
    EXPECT_TRUE(torch::equal(a->covariance(), b->covariance()));
    EXPECT_FALSE(torch::allclose(a->covariance(), c->covariance()));
}

TEST(NdTargets, CorrelatedCovarianceHasTheStatedSpectrumAndDensity) {
    const int64_t d = 8;
    const auto t = make_nd_target("correlated", d, 5);
    const auto cov = t->covariance();
    // Eigenvalues log-spaced over [0.25, 4] (condition number 16); 1e-12: eigvalsh round-off.
    const auto ev = torch::linalg_eigvalsh(cov);
    const auto expected = 0.25 * torch::pow(16.0, torch::arange(d, kF64) / double(d - 1));
    EXPECT_LT((ev - expected).abs().max().item<double>(), 1e-12);
    EXPECT_LT((cov - cov.t()).abs().max().item<double>(), 1e-15);
    EXPECT_GT((cov - torch::diag(cov.diagonal())).abs().max().item<double>(), 0.1)
        << "the rotation should correlate the coordinates";
    // log_density (Cholesky path) against −½xᵀΣ⁻¹x − ½ log det(2πΣ) by inverse and slogdet.
    const auto x = torch::randn({20, d}, kF64) * 2.0;
    const auto quad = (x.matmul(torch::linalg_inv(cov)) * x).sum(1);
    const double logdet = std::get<1>(torch::linalg_slogdet(2.0 * kPi * cov)).item<double>();
    EXPECT_LT((t->log_density(x) - (-0.5 * quad - 0.5 * logdet)).abs().max().item<double>(), 1e-12);
}

TEST(NdTargets, DensitiesNormaliseByQuadrature) {
    // Ranges hold all but < 1e-15 of the mass (gaussian: 10σ; gumbel: e^{−e^5} below, e^{−40}
    // above; correlated: the largest σ is 2, so ±20 is 10σ; laplace: e^{−30}). The trapezoid rule
    // is spectrally accurate for these smooth, decaying integrands: tolerance 1e-9.
    struct Case {
        std::string name;
        double lo, hi;
    };
    for (const Case& c :
         {Case{"gaussian", -10, 10}, Case{"gumbel", -5, 40}, Case{"correlated", -20, 20}}) {
        for (int64_t d : {1, 2}) {
            const auto t = make_nd_target(c.name, d, /*seed=*/11);
            const int64_t points = d == 1 ? 20001 : 801;
            EXPECT_NEAR(integrate_density(*t, c.lo, c.hi, points), 1.0, 1e-9)
                << c.name << " d=" << d;
        }
    }
    // Laplace has a kink at the node 0, so the trapezoid rule is only O(h²) there; but its sum is
    // known exactly: (h/2)(1 + 2Σ_{k≥1} e^{−kh}) = (h/2)·coth(h/2) per dimension.
    for (int64_t d : {1, 2}) {
        const int64_t points = d == 1 ? 20001 : 801;
        const double h = 60.0 / double(points - 1);
        const double per_dim = 0.5 * h / std::tanh(0.5 * h);
        EXPECT_NEAR(integrate_density(*make_nd_target("laplace", d), -30, 30, points),
                    std::pow(per_dim, double(d)), 1e-9)
            << "laplace d=" << d;
    }
}

TEST(NdTargets, SampleMomentsMatchMeanAndCovariance) {
    const int64_t n = 40000;
    for (const auto& name : liftlab::nd_target_names()) {
        for (int64_t d : {1, 4}) {
            const auto t = make_nd_target(name, d, /*seed=*/2);
            const auto x = t->sample(n, /*seed=*/100 + d);
            const auto mu = t->mean(), cov = t->covariance();
            ASSERT_EQ(mu.sizes(), torch::IntArrayRef({d}));
            ASSERT_EQ(cov.sizes(), torch::IntArrayRef({d, d}));
            // Mean: CLT standard error √(Σ_ii / n) per coordinate.
            const auto mean_z = (x.mean(0) - mu) / torch::sqrt(cov.diagonal() / double(n));
            EXPECT_LT(mean_z.abs().max().item<double>(), kStdErrors) << name << " d=" << d;
            // Covariance entries: the standard error of mean((x_i−μ_i)(x_j−μ_j)) is the sample
            // sd of the products / √n (the exact mean is used, so no n−1 correction).
            const auto c = x - mu;
            const auto prod = c.unsqueeze(2) * c.unsqueeze(1);  // n × d × d
            const auto se = prod.std(0) / std::sqrt(double(n));
            const auto cov_z = (prod.mean(0) - cov) / se;
            EXPECT_LT(cov_z.abs().max().item<double>(), kStdErrors) << name << " d=" << d;
        }
    }
}

// ---- Proposal ----------------------------------------------------------------------------

TEST(Proposal, StudentTLogProbMatchesClosedFormsAndIntegratesToOne) {
    // ν = 1 is the Cauchy distribution: 1/(πσ(1 + ((x−μ)/σ)²)) in 1-D, and the bivariate
    // Cauchy (2π)⁻¹ |S|^{−½} (1 + r²)^{−3/2} in 2-D. Tolerance 1e-12: lgamma/log round-off.
    const double mu = 0.3, sigma = 1.7;
    const auto cauchy =
        Proposal::student_t(torch::tensor({mu}, kF64), torch::tensor({{sigma * sigma}}, kF64), 1.0);
    const auto x = torch::linspace(-20, 20, 41, kF64).unsqueeze(1);
    const auto u = (x.squeeze(1) - mu) / sigma;
    const auto expected1 = -std::log(kPi * sigma) - torch::log1p(u * u);
    EXPECT_LT((cauchy.log_prob(x) - expected1).abs().max().item<double>(), 1e-12);

    const auto s2 = torch::tensor({{2.0, 0.6}, {0.6, 1.0}}, kF64);
    const auto m2 = torch::tensor({-1.0, 0.5}, kF64);
    const auto cauchy2 = Proposal::student_t(m2, s2, 1.0);
    const auto y = torch::randn({30, 2}, kF64) * 3.0;
    const auto c = y - m2;
    const auto r2 = (c.matmul(torch::linalg_inv(s2)) * c).sum(1);
    const auto expected2 =
        -std::log(2 * kPi) - 0.5 * std::log(torch::det(s2).item<double>()) - 1.5 * torch::log1p(r2);
    EXPECT_LT((cauchy2.log_prob(y) - expected2).abs().max().item<double>(), 1e-12);

    // ν = 5 in 1-D by quadrature over [−4000, 4000]: the tail beyond is ≈ 2e-16; h = 0.01 on an
    // analytic integrand makes the trapezoid error negligible. Tolerance 1e-9.
    const auto t5 =
        Proposal::student_t(torch::tensor({mu}, kF64), torch::tensor({{sigma * sigma}}, kF64), 5.0);
    const int64_t points = 800001;
    const auto g = torch::linspace(-4000, 4000, points, kF64);
    const double mass = (t5.log_prob(g.unsqueeze(1)).exp() * trapezoid_weights(-4000, 4000, points))
                            .sum()
                            .item<double>();
    EXPECT_NEAR(mass, 1.0, 1e-9);
}

TEST(Proposal, FitMatchesTheSampleMomentsAndSamplesFollowLogProb) {
    const auto target = make_nd_target("correlated", 3, 4);
    const auto data = target->sample(5000, 1);
    const auto mu = data.mean(0);
    const auto c = data - mu;
    const auto cov = c.t().matmul(c) / double(data.size(0) - 1);
    // Exact moment matching (1e-12: round-off), with inflation, for both kinds.
    const auto g = Proposal::fit(data, "gaussian", 5.0, 1.5);
    EXPECT_EQ(g.kind(), "gaussian");
    EXPECT_LT((g.mean() - mu).abs().max().item<double>(), 1e-12);
    EXPECT_LT((g.covariance() - 1.5 * cov).abs().max().item<double>(), 1e-12);
    const auto t = Proposal::fit(data, "student-t", 6.0, 1.5);
    EXPECT_EQ(t.kind(), "student-t");
    EXPECT_DOUBLE_EQ(t.dof(), 6.0);
    EXPECT_LT((t.covariance() - 1.5 * cov).abs().max().item<double>(), 1e-12);
    EXPECT_LT((t.scale() - 1.5 * cov * (4.0 / 6.0)).abs().max().item<double>(), 1e-12);

    // Samples: deterministic in the seed, and their Mahalanobis radius r² = (x−μ)ᵀS⁻¹(x−μ) has
    // the right mean: d for the Gaussian, dν/(ν−2) for the t (ν = 6 keeps Var(r²) finite).
    // CLT tolerance in sample standard errors of r².
    EXPECT_TRUE(torch::equal(t.sample(50, 3), t.sample(50, 3)));
    const int64_t m = 60000;
    for (const Proposal* q : {&g, &t}) {
        const auto x = q->sample(m, 9);
        const auto v = x - q->mean();
        const auto r2 = (v.matmul(torch::linalg_inv(q->scale())) * v).sum(1);
        const double expected = q->kind() == "gaussian" ? 3.0 : 3.0 * 6.0 / 4.0;
        const double se = r2.std().item<double>() / std::sqrt(double(m));
        EXPECT_NEAR(r2.mean().item<double>(), expected, kStdErrors * se) << q->kind();
        // And the 1-D marginal of the first coordinate matches the density log_prob integrates:
        // P(x_1 ≤ μ_1 + s) for s = one marginal scale, by quadrature of the marginal
        // (a 1-D proposal with the marginal's location/scale; marginals of a multivariate t are t
        // with the same ν). Binomial standard error.
        const double s11 = q->scale()[0][0].item<double>();
        const auto marginal =
            q->kind() == "gaussian"
                ? Proposal::gaussian(q->mean().slice(0, 0, 1),
                                     q->scale().slice(0, 0, 1).slice(1, 0, 1))
                : Proposal::student_t(q->mean().slice(0, 0, 1),
                                      q->scale().slice(0, 0, 1).slice(1, 0, 1), q->dof());
        const double lo = q->mean()[0].item<double>() - 400.0 * std::sqrt(s11);
        const double hi = q->mean()[0].item<double>() + std::sqrt(s11);
        const int64_t points = 400001;
        const auto grid = torch::linspace(lo, hi, points, kF64).unsqueeze(1);
        const double cdf = (marginal.log_prob(grid).exp() * trapezoid_weights(lo, hi, points))
                               .sum()
                               .item<double>();
        const double freq = (x.select(1, 0) <= hi).to(torch::kFloat64).mean().item<double>();
        EXPECT_NEAR(freq, cdf, kStdErrors * std::sqrt(cdf * (1 - cdf) / double(m))) << q->kind();
    }
}

TEST(Proposal, BadArgumentsAreNamed) {
    const auto data = torch::randn({50, 3}, kF64);
    expect_invalid_argument([&] { Proposal::fit(data, "flow"); }, "gaussian, student-t");
    expect_invalid_argument([&] { Proposal::fit(data, "student-t", 2.0); }, "dof > 2");
    expect_invalid_argument([&] { Proposal::fit(data, "gaussian", 5.0, 0.0); }, "inflate");
    expect_invalid_argument([&] { Proposal::fit(data.slice(0, 0, 3), "gaussian"); }, "at least 4");
    // Rank-deficient samples (the third column copies the first): singular covariance.
    const auto flat = torch::cat({data.slice(1, 0, 2), data.slice(1, 0, 1)}, 1);
    expect_invalid_argument([&] { Proposal::fit(flat, "gaussian"); }, "positive definite");
    const auto g = Proposal::fit(data, "gaussian");
    expect_invalid_argument([&] { g.log_prob(torch::zeros({4, 2}, kF64)); }, "n × 3");
}

// ---- Importance sampling -----------------------------------------------------------------

// E(x) = ½ xᵀAx with A = Σ⁻¹ of the correlated target: log Z = (d/2) log 2π + ½ log det Σ.
struct GaussianEnergy {
    torch::Tensor precision;
    double log_z;
    explicit GaussianEnergy(const torch::Tensor& cov)
        : precision(torch::linalg_inv(cov)),
          log_z(0.5 * cov.size(0) * std::log(2 * kPi) +
                0.5 * std::get<1>(torch::linalg_slogdet(cov)).item<double>()) {}
    torch::Tensor operator()(const torch::Tensor& x) const {
        return 0.5 * (x.matmul(precision) * x).sum(1);
    }
};

TEST(Importance, LogPartitionOfAGaussianEnergyInTwoEightAndThirtyTwoDimensions) {
    // Proposal fitted to 4000 data samples of the same Gaussian (as for an EBM trained on data);
    // M = 20000 proposal draws. Pass within 5 delta-method standard errors √(1/ESS − 1/M) plus
    // the Jensen bias se² of log Ẑ. The ESS floor catches a proposal that only works by luck.
    const int64_t m = 20000;
    for (int64_t d : {2, 8, 32}) {
        const auto target = make_nd_target("correlated", d, /*seed=*/d);
        const GaussianEnergy energy(target->covariance());
        const auto data = target->sample(4000, /*seed=*/1);
        for (const char* kind : {"gaussian", "student-t"}) {
            const auto q = Proposal::fit(data, kind, /*dof=*/10.0, /*inflate=*/1.2);
            const auto x = q.sample(m, /*seed=*/2);
            const auto e = energy(x), lq = q.log_prob(x);
            const double log_z = importance_log_partition(e, lq).item<double>();
            const double se = log_partition_standard_error(e, lq);
            const double ess = effective_sample_size(e, lq);
            EXPECT_NEAR(log_z, energy.log_z, kStdErrors * se + se * se)
                << kind << " d=" << d << " ess=" << ess;
            EXPECT_GT(ess, 0.05 * m) << kind << " d=" << d;
            EXPECT_LT(se, 0.05) << kind << " d=" << d;
        }
    }
}

TEST(Importance, StandardErrorMatchesTheSpreadOverSeeds) {
    // 40 independent estimates of log Z in d = 8 (t proposal, M = 2000): their sample sd must agree
    // with the delta-method se within a factor 1.5 (the sd of 40 draws is itself ±11 %), and their
    // mean must hit log Z within 5 standard errors of that mean plus the Jensen bias se².
    const int64_t d = 8, m = 2000, runs = 40;
    const auto target = make_nd_target("correlated", d, 3);
    const GaussianEnergy energy(target->covariance());
    const auto q = Proposal::fit(target->sample(4000, 1), "student-t", 10.0, 1.2);
    std::vector<double> est, ses;
    for (int64_t r = 0; r < runs; ++r) {
        const auto x = q.sample(m, 1000 + r);
        const auto e = energy(x), lq = q.log_prob(x);
        est.push_back(importance_log_partition(e, lq).item<double>());
        ses.push_back(log_partition_standard_error(e, lq));
    }
    const auto et = torch::tensor(est, kF64), st = torch::tensor(ses, kF64);
    const double sd = et.std().item<double>(), se = st.mean().item<double>();
    EXPECT_GT(sd / se, 1.0 / 1.5);
    EXPECT_LT(sd / se, 1.5);
    EXPECT_NEAR(et.mean().item<double>(), energy.log_z,
                kStdErrors * sd / std::sqrt(runs) + se * se);
}

TEST(Importance, GradientIsMinusTheSelfNormalisedMeanOfTheEnergyGradient) {
    // E_θ(x) = ½ a ‖x‖² + bᵀx with θ = (a, b): ∂E/∂a = ½‖x‖², ∂E/∂b = x.
    const auto q = Proposal::gaussian(torch::zeros({3}, kF64), torch::eye(3, kF64) * 1.5);
    const auto x = q.sample(500, 4);
    const auto lq = q.log_prob(x);
    auto a = torch::tensor(1.3, kF64.requires_grad(true));
    auto b = torch::tensor({0.2, -0.1, 0.4}, kF64.requires_grad(true));
    auto energies = [&](const torch::Tensor& av, const torch::Tensor& bv) {
        return 0.5 * av * x.pow(2).sum(1) + x.matmul(bv);
    };
    const auto log_z = importance_log_partition(energies(a, b), lq);
    ASSERT_EQ(log_z.dim(), 0);
    log_z.backward();
    // Analytic: −Σ w_m ∂E_m/∂θ / Σ w_m with w = exp(−E − log q). Tolerance 1e-12: round-off.
    torch::NoGradGuard no_grad;
    const auto w = torch::softmax(-energies(a, b) - lq, 0);
    EXPECT_NEAR(a.grad().item<double>(), -(w * 0.5 * x.pow(2).sum(1)).sum().item<double>(), 1e-12);
    EXPECT_LT((b.grad() + (w.unsqueeze(1) * x).sum(0)).abs().max().item<double>(), 1e-12);
    // Central finite difference in a (h = 1e-5: truncation ~h² · |∂³| ≈ 1e-10, round-off
    // ~1e-16/h ≈ 1e-11). Tolerance 1e-8.
    const double h = 1e-5;
    const double fd = (importance_log_partition(energies(a + h, b), lq).item<double>() -
                       importance_log_partition(energies(a - h, b), lq).item<double>()) /
                      (2 * h);
    EXPECT_NEAR(a.grad().item<double>(), fd, 1e-8);
}

TEST(Importance, EffectiveSampleSizeAndStandardErrorLimits) {
    const auto lq = torch::zeros({100}, kF64);
    // Equal weights: ESS = M exactly, se = 0; log Ẑ = −E.
    const auto flat = torch::full({100}, 2.0, kF64);
    EXPECT_DOUBLE_EQ(effective_sample_size(flat, lq), 100.0);
    EXPECT_DOUBLE_EQ(log_partition_standard_error(flat, lq), 0.0);
    EXPECT_NEAR(importance_log_partition(flat, lq).item<double>(), -2.0, 1e-15);
    // One weight e^{800} dominates the rest (e^0): ESS → 1, and no overflow.
    auto spike = torch::zeros({100}, kF64);
    spike[7] = -800.0;
    EXPECT_NEAR(effective_sample_size(spike, lq), 1.0, 1e-12);
    EXPECT_NEAR(importance_log_partition(spike, lq).item<double>(), 800.0 - std::log(100.0), 1e-12);
    // Two equal weights and zeros: ESS = 2 (Kish: (2w)²/(2w²)).
    auto two = torch::full({10}, std::numeric_limits<double>::infinity(), kF64);
    two[1] = two[4] = 0.0;
    EXPECT_NEAR(effective_sample_size(two, torch::zeros({10}, kF64)), 2.0, 1e-12);
    expect_invalid_argument([&] { importance_log_partition(flat, torch::zeros({99}, kF64)); },
                            "same length");
    auto bad_lq = lq.clone();
    bad_lq[0] = std::numeric_limits<double>::infinity();
    expect_invalid_argument([&] { importance_log_partition(flat, bad_lq); },
                            "log_q must be finite");
}

// ---- Monte-Carlo TV ----------------------------------------------------------------------

TEST(MonteCarloTv, ADistributionAgainstItselfIsExactlyZero) {
    const auto t = make_nd_target("gumbel", 3);
    const auto lp = t->log_density(t->sample(1000, 1));
    const auto est = monte_carlo_tv(lp, lp);
    EXPECT_EQ(est.tv, 0.0);
    EXPECT_EQ(est.standard_error, 0.0);
    expect_invalid_argument([&] { monte_carlo_tv(lp, lp.slice(0, 0, 10)); }, "same length");
}

TEST(MonteCarloTv, ShiftedGaussiansMatchTwoPhiOfHalfTheShiftMinusOne) {
    // TV(N(0, I), N(δ, I)) = 2Φ(‖δ‖/2) − 1; d = 1 with δ = 1, and d = 4. n = 20000; pass within
    // 4 standard errors (as the brief asks; fixed seeds).
    const int64_t n = 20000;
    const std::vector<std::vector<double>> shifts = {{1.0}, {0.5, -0.3, 0.2, 0.4}};
    for (const auto& s : shifts) {
        const int64_t d = static_cast<int64_t>(s.size());
        const auto delta = torch::tensor(s, kF64);
        const auto p = make_nd_target("gaussian", d);
        const auto x = p->sample(n, 17 + d);
        const auto lq = p->log_density(x - delta);  // N(δ, I) is the shifted standard normal
        const auto est = monte_carlo_tv(p->log_density(x), lq);
        const double exact =
            2.0 * liftlab::test::normal_cdf(delta.norm().item<double>() / 2.0) - 1.0;
        EXPECT_NEAR(est.tv, exact, 4.0 * est.standard_error) << "d=" << d;
        EXPECT_GT(est.standard_error, 0.0);
        EXPECT_LT(est.standard_error, 0.01) << "d=" << d;  // n = 20000 terms in [0, 1]
    }
}

TEST(MonteCarloTv, WithAnImportanceEstimateOfLogZ) {
    // The pipeline for a trained EBM: q ∝ exp(−E) with E = ½‖x − δ‖² (log Z left unknown to the
    // estimator), log Z by importance sampling with a proposal fitted to the target's samples,
    // TV against the target N(0, I). The log Z error (≤ 5 se ≈ 0.02) moves TV by at most about as
    // much, so the tolerance is 4 TV standard errors plus the log Z error bound.
    const int64_t d = 4, n = 20000;
    const auto delta = torch::tensor({0.5, -0.3, 0.2, 0.4}, kF64);
    const auto p = make_nd_target("gaussian", d);
    auto energy = [&](const torch::Tensor& x) { return 0.5 * (x - delta).pow(2).sum(1); };
    const auto q = Proposal::fit(p->sample(4000, 1), "student-t", 10.0, 1.5);
    const auto xq = q.sample(20000, 2);
    const auto eq = energy(xq), lqq = q.log_prob(xq);
    const double log_z = importance_log_partition(eq, lqq).item<double>();
    const double se_z = log_partition_standard_error(eq, lqq);
    EXPECT_NEAR(log_z, 0.5 * d * std::log(2 * kPi), kStdErrors * se_z);
    const auto x = p->sample(n, 3);
    const auto est = monte_carlo_tv(p->log_density(x), -energy(x) - log_z);
    const double exact = 2.0 * liftlab::test::normal_cdf(delta.norm().item<double>() / 2.0) - 1.0;
    EXPECT_NEAR(est.tv, exact, 4.0 * est.standard_error + kStdErrors * se_z);
}

// ---- Fashion-MNIST latents ---------------------------------------------------------------

bool have_fashion_mnist() {
    return std::filesystem::exists(std::string(liftlab::kFashionMnistDir) +
                                   "/train-images-idx3-ubyte.gz");
}

TEST(FashionMnistLatents, TrainsStandardisesAndCaches) {
    if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    TempDir dir;
    liftlab::LatentOptions o;
    o.steps = 150;
    o.n_train = 2000;
    o.n_test = 500;
    o.seed = 3;
    o.cache_dir = dir.str();
    int calls = 0;
    double last = 0.0;
    auto count = [&](double f) { return ++calls, last = f, true; };
    const auto first = liftlab::fashion_mnist_latents(o, count);
    EXPECT_GE(calls, 50);
    EXPECT_DOUBLE_EQ(last, 1.0);
    ASSERT_EQ(first.train.sizes(), torch::IntArrayRef({2000, 32}));
    ASSERT_EQ(first.test.sizes(), torch::IntArrayRef({500, 32}));
    EXPECT_EQ(first.train.scalar_type(), torch::kFloat32);

    // Standardised with train statistics: per-dim mean 0 and population sd 1 (1e-5: float32
    // storage of values computed in float64).
    const auto z = first.train.to(torch::kFloat64);
    EXPECT_LT(z.mean(0).abs().max().item<double>(), 1e-5);
    EXPECT_LT((z.std(0, /*unbiased=*/false) - 1.0).abs().max().item<double>(), 1e-5);
    EXPECT_TRUE(torch::isfinite(first.test).all().item<bool>());

    // The autoencoder learned something: test MSE clearly below predicting the train mean image
    // (≈ 0.088 on these images); "clearly" = less than half. Measured: ≈ 0.026 after 150 steps
    // (0.034 after 100), so the margin is wide.
    const auto data = liftlab::load_fashion_mnist(liftlab::kFashionMnistDir, 2000, 500);
    const auto mean_image = data.images_train.reshape({2000, -1}).mean(0);
    const double baseline =
        (data.images_test.reshape({500, -1}) - mean_image).pow(2).mean().item<double>();
    EXPECT_LT(first.reconstruction_mse, 0.5 * baseline)
        << "mse " << first.reconstruction_mse << " baseline " << baseline;
    EXPECT_GT(first.reconstruction_mse, 0.0);

    // The second call hits the cache: one progress report, identical tensors.
    const auto path = liftlab::fashion_mnist_latents_cache_file(o);
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    calls = 0;
    const auto second = liftlab::fashion_mnist_latents(o, count);
    EXPECT_EQ(calls, 1);
    EXPECT_TRUE(torch::equal(first.train, second.train));
    EXPECT_TRUE(torch::equal(first.test, second.test));
    EXPECT_EQ(first.reconstruction_mse, second.reconstruction_mse);

    // Every result-changing option is in the key; the cache folder is not.
    auto changed = [&](auto edit) {
        auto c = o;
        edit(c);
        return liftlab::fashion_mnist_latents_cache_file(c);
    };
    EXPECT_NE(changed([](auto& c) { c.seed = 4; }), path);
    EXPECT_NE(changed([](auto& c) { c.steps = 151; }), path);
    EXPECT_NE(changed([](auto& c) { c.lr = 2e-3; }), path);
    EXPECT_NE(changed([](auto& c) { c.latent_dim = 16; }), path);
    EXPECT_NE(changed([](auto& c) { c.batch = 64; }), path);
    EXPECT_NE(changed([](auto& c) { c.n_test = 400; }), path);
    EXPECT_NE(changed([](auto& c) { c.data_dir = "/elsewhere"; }), path);
}

TEST(FashionMnistLatents, DeterministicInTheSeedWithoutCache) {
    if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    liftlab::LatentOptions o;
    o.steps = 10;
    o.n_train = 300;
    o.n_test = 50;
    o.latent_dim = 4;
    o.use_cache = false;
    const auto a = liftlab::fashion_mnist_latents(o), b = liftlab::fashion_mnist_latents(o);
    EXPECT_TRUE(torch::equal(a.train, b.train));
    EXPECT_EQ(a.reconstruction_mse, b.reconstruction_mse);
    o.seed = 1;
    EXPECT_FALSE(torch::equal(liftlab::fashion_mnist_latents(o).train, a.train));
}

TEST(FashionMnistLatents, BadInputsAndCancellation) {
    TempDir dir;
    liftlab::LatentOptions o;
    o.cache_dir = dir.str();
    o.steps = 20;
    o.n_train = 200;
    o.n_test = 20;
    o.data_dir = dir.file("no-such-folder");
    const auto e = liftlab::test::data_error([&] { liftlab::fashion_mnist_latents(o); });
    EXPECT_TRUE(has(e.what(), "no-such-folder")) << e.what();
    auto bad = o;
    bad.latent_dim = 0;
    expect_invalid_argument([&] { liftlab::fashion_mnist_latents(bad); }, "latent_dim");
    bad = o;
    bad.lr = -1;
    expect_invalid_argument([&] { liftlab::fashion_mnist_latents(bad); }, "lr");

    if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    o.data_dir = liftlab::kFashionMnistDir;
    int calls = 0;
    auto stop = [&](double) { return ++calls < 3; };
    EXPECT_THROW(liftlab::fashion_mnist_latents(o, stop), liftlab::DataCancelled);
    EXPECT_EQ(calls, 3);
    EXPECT_FALSE(std::filesystem::exists(liftlab::fashion_mnist_latents_cache_file(o)));
}

}  // namespace

// ---- icnn-ebm-nd on tables (the reference's tabular experiment is this EBM) -----------------

namespace {

nlohmann::json table_ebm_json(const std::string& target, const std::string& csv_path) {
    auto j = nlohmann::json::parse(R"({"name": "table-ebm",
        "task": {"kind": "icnn-ebm-nd", "n_train": 160, "n_test": 40, "data_seed": 7,
                 "test_fraction": 0.25, "standardize": true},
        "icnn": {"width": 8, "layers": 2, "is_samples": 128, "eval_is_samples": 512,
                 "reference_size": 64},
        "methods": [{"name": "lifter"}, {"name": "softplus"}, {"name": "pgd"}],
        "batch_size": 32, "steps": 6, "log_every": 3, "seeds": [0], "threads": 1})");
    j["task"]["target"] = target;
    j["task"]["csv_path"] = csv_path;
    return j;
}

}  // namespace

TEST(NdEbmTables, CsvTargetSplitsAndStandardisesTheUsersTable) {
    TempDir dir;
    const auto x = liftlab::make_tabular21(200, /*seed=*/5);
    const std::string path = dir.file("table.csv");
    liftlab::write_tabular_csv(path, x);

    auto j = table_ebm_json("csv", path);
    const auto data = liftlab::make_dataset(liftlab::parse_spec(j).task);
    ASSERT_EQ(data.x_train.sizes(), (std::vector<int64_t>{150, 21}));
    ASSERT_EQ(data.x_test.sizes(), (std::vector<int64_t>{50, 21}));
    ASSERT_EQ(data.input_names.size(), 21u);
    EXPECT_EQ(data.input_names.front(), "f0");
    // z-scored with the training rows' statistics (float32 storage: 1e-5).
    const auto train = data.x_train.to(kF64);
    EXPECT_LT(train.mean(0).abs().max().item<double>(), 1e-5);
    EXPECT_LT((train.std(0) - 1).abs().max().item<double>(), 1e-5);

    // Without standardising, train ∪ test is the file's rows, each once (a permutation).
    j["task"]["standardize"] = false;
    const auto raw = liftlab::make_dataset(liftlab::parse_spec(j).task);
    const auto all = torch::cat({raw.x_train, raw.x_test}).to(kF64);
    const auto key = [](const torch::Tensor& t) { return std::get<0>(t.select(1, 0).sort()); };
    EXPECT_LT((key(all) - key(x)).abs().max().item<double>(), 1e-5);
    EXPECT_LT((all.sum(0) - x.sum(0)).abs().max().item<double>(), 1e-3);

    // The generated table is the 21-D stand-in itself, the test rows an independent draw.
    const auto gen =
        liftlab::make_dataset(liftlab::parse_spec(table_ebm_json("tabular21", "")).task);
    EXPECT_TRUE(torch::equal(gen.x_train.to(kF64),
                             liftlab::make_tabular21(160, 7).to(torch::kFloat32).to(kF64)));
    EXPECT_EQ(gen.x_test.size(0), 40);
}

TEST(NdEbmTables, DataTargetsAreNotSampledAndCsvNeedsItsFile) {
    auto no_file = table_ebm_json("csv", "");
    try {
        liftlab::parse_spec(no_file);
        ADD_FAILURE() << "target csv without csv_path was accepted";
    } catch (const liftlab::SpecError& e) {
        EXPECT_EQ(e.key(), "task.csv_path") << e.what();
    }
    auto fresh = table_ebm_json("tabular21", "");
    fresh["task"]["fresh_samples"] = true;
    try {
        liftlab::parse_spec(fresh);
        ADD_FAILURE() << "fresh samples of a data set were accepted";
    } catch (const liftlab::SpecError& e) {
        EXPECT_EQ(e.key(), "task.fresh_samples") << e.what();
    }
    for (const char* t : {"tabular21", "csv", "fmnist-latents"}) {
        liftlab::TaskSpec task;
        task.kind = "icnn-ebm-nd";
        task.target = t;
        EXPECT_FALSE(liftlab::samples_its_target(task)) << t;
    }
    liftlab::TaskSpec gumbel;
    gumbel.kind = "icnn-ebm-nd";
    gumbel.target = "gumbel";
    EXPECT_TRUE(liftlab::samples_its_target(gumbel));
    // A missing file is a data error naming it, before any training.
    const auto missing = liftlab::parse_spec(table_ebm_json("csv", "/no/such/table.csv"));
    EXPECT_THROW(liftlab::make_dataset(missing.task), liftlab::DataError);
}

TEST(NdEbmTables, RunnerTrainsTheThreeStrategiesOnAUsersTable) {
    TempDir dir;
    const std::string path = dir.file("table.csv");
    liftlab::write_tabular_csv(path, liftlab::make_tabular21(200, /*seed=*/3));
    const auto r = liftlab::run_experiment(liftlab::parse_spec(table_ebm_json("csv", path)), {});
    ASSERT_EQ(r.runs.size(), 3u);
    for (const auto& run : r.runs) {
        EXPECT_EQ(run.status, liftlab::RunStatus::Ok) << run.method << ": " << run.reason;
        EXPECT_TRUE(std::isfinite(run.final_metrics.at("test_loss"))) << run.method;
        EXPECT_TRUE(std::isfinite(run.final_metrics.at("log_z"))) << run.method;
        EXPECT_GT(run.final_metrics.at("ess_fraction"), 0.0) << run.method;
        // No known density behind a table: no TV is claimed.
        EXPECT_EQ(run.final_metrics.count("tv"), 0u) << run.method;
    }
}
