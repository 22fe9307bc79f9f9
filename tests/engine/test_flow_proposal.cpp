// The affine-coupling flow proposal of n-D log Z (engine/ebm/flow_proposal.h): exact inverse and
// log-determinant, a density that integrates to 1, samples that follow it, importance log Z of a
// Gaussian energy within its reported standard error, ESS = M when the proposal is the target, and
// the keyed cache. Fixed seeds throughout; tolerances are stated at each check.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>

#ifndef LIFTLAB_TEST_BINARY_DIR
#define LIFTLAB_TEST_BINARY_DIR "/tmp"
#endif
#include "ebm/flow_proposal.h"
#include "ebm/importance.h"
#include "test_helpers.h"

namespace {

using liftlab::AffineCouplingFlow;
using liftlab::AffineCouplingFlowOptions;
using liftlab::fit_flow_proposal;
using liftlab::FlowFitOptions;
using liftlab::test::has;
using liftlab::test::TempDir;

using liftlab::kPi;

// A curved, skewed 2-D sample (a "banana"): x1 ~ N(0, 1), x2 = 0.5 x1² + 0.5 ε, shifted and
// scaled, so a fitted flow has clearly non-trivial couplings.
torch::Tensor banana(int64_t n, uint64_t seed) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    const auto e = torch::randn({n, 2}, gen, torch::kFloat64);
    const auto x1 = e.select(1, 0);
    const auto x2 = 0.5 * x1.pow(2) + 0.5 * e.select(1, 1);
    return torch::stack({2.0 * x1 + 1.0, x2 - 0.5}, 1);
}

AffineCouplingFlow fitted_banana_flow() {
    FlowFitOptions fit;
    fit.steps = 600;
    fit.batch = 256;
    fit.lr = 3e-3;
    return fit_flow_proposal(banana(4000, 1), AffineCouplingFlowOptions(2).layers(4).hidden(32),
                             fit)
        .flow;
}

// Density of the flow on an equally spaced 2-D grid over [lo, hi]² (points per side).
struct GridDensity {
    torch::Tensor axis, density;  // density[i][j] at (axis[i], axis[j])
    double h = 0;
};
GridDensity grid_density(const AffineCouplingFlow& flow, double lo, double hi, int64_t points) {
    torch::NoGradGuard no_grad;
    GridDensity g;
    g.axis = torch::linspace(lo, hi, points, torch::kFloat64);
    g.h = (hi - lo) / static_cast<double>(points - 1);
    const auto mesh = torch::meshgrid({g.axis, g.axis}, "ij");
    const auto pts = torch::stack({mesh[0].reshape(-1), mesh[1].reshape(-1)}, 1);
    g.density = flow->log_prob(pts).exp().reshape({points, points});
    return g;
}

TEST(FlowProposal, DecodeInvertsEncodeAndTheLogDetIsTheJacobians) {
    torch::manual_seed(0);
    AffineCouplingFlow flow(AffineCouplingFlowOptions(3).layers(3).hidden(16).seed(7));
    flow->to(torch::kFloat64);
    {
        // Random coupling outputs (the init makes them ≈ 0): perturb every parameter.
        torch::NoGradGuard no_grad;
        auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
        for (auto& p : flow->parameters())
            p.add_(0.3 * torch::randn(p.sizes(), gen, torch::kFloat64));
    }
    auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
    const auto x = torch::randn({5, 3}, gen, torch::kFloat64);
    const auto [z, log_det] = flow->encode(x);
    const auto [x_back, log_det_back] = flow->decode(z);
    EXPECT_LT((x_back - x).abs().max().item<double>(), 1e-12);
    EXPECT_LT((log_det + log_det_back).abs().max().item<double>(), 1e-12);
    for (int64_t i = 0; i < x.size(0); ++i) {
        auto xi = x.narrow(0, i, 1).clone().requires_grad_(true);
        const auto zi = flow->encode(xi).first;
        auto jac = torch::zeros({3, 3}, torch::kFloat64);
        for (int64_t r = 0; r < 3; ++r)
            jac[r] = torch::autograd::grad({zi[0][r]}, {xi}, {}, /*retain_graph=*/true)[0][0];
        const double expected = std::log(std::abs(torch::det(jac).item<double>()));
        EXPECT_NEAR(log_det[i].item<double>(), expected, 1e-10) << "row " << i;
    }
}

TEST(FlowProposal, FittedDensityIntegratesToOneOnATwoDGrid) {
    const auto flow = fitted_banana_flow();
    // [−12, 12]² with h = 0.03: the banana's data lie within ≈ [−7, 9] × [−2, 10]; the mass left
    // outside and the trapezoid error are both far below the 2e-3 tolerance.
    const auto g = grid_density(flow, -12.0, 12.0, 801);
    const double mass = g.density.sum().item<double>() * g.h * g.h;
    EXPECT_NEAR(mass, 1.0, 2e-3);
    // The fit learned something: its NLL beats the best Gaussian's on the banana.
    const auto data = banana(4000, 1);
    const double flow_nll = -flow->log_prob(data).mean().item<double>();
    const auto gauss = liftlab::Proposal::fit(data, "gaussian");
    const double gauss_nll = -gauss.log_prob(data).mean().item<double>();
    EXPECT_LT(flow_nll, gauss_nll - 0.1) << "flow " << flow_nll << " gaussian " << gauss_nll;
}

TEST(FlowProposal, SamplesMatchTheDensityByKolmogorovSmirnovOnMarginals) {
    const auto flow = fitted_banana_flow();
    const auto g = grid_density(flow, -12.0, 12.0, 801);
    const int64_t n = 20000;
    const auto [samples, log_q] = flow->sample(n, /*seed=*/5);
    // The log q returned with the draws is the density at those draws.
    EXPECT_LT((log_q - flow->log_prob(samples)).abs().max().item<double>(), 1e-4);
    for (int axis = 0; axis < 2; ++axis) {
        // Marginal CDF of the grid density at the grid points (midpoint-corrected cumulative
        // sum: F(a_j) ≈ h Σ_{i<j} m_i + h m_j / 2, error O(h²)), interpolated linearly at each
        // sorted sample.
        const auto marginal = g.density.sum(1 - axis) * g.h;
        const auto cdf = torch::cumsum(marginal, 0) * g.h - 0.5 * g.h * marginal;
        const auto total = cdf[-1].item<double>();
        const auto xs = std::get<0>(samples.select(1, axis).sort());
        const auto a = g.axis.accessor<double, 1>();
        const auto c = cdf.accessor<double, 1>();
        const auto s = xs.accessor<double, 1>();
        double d_max = 0;
        int64_t j = 0;
        for (int64_t i = 0; i < n; ++i) {
            while (j + 1 < g.axis.size(0) && a[j + 1] < s[i]) ++j;
            const double t = std::clamp((s[i] - a[j]) / g.h, 0.0, 1.0);
            const double f =
                ((1 - t) * c[j] + t * c[std::min<int64_t>(j + 1, cdf.size(0) - 1)]) / total;
            d_max = std::max({d_max, std::abs(f - double(i) / n), std::abs(f - double(i + 1) / n)});
        }
        // KS critical value at α = 0.001 is 1.95/√n = 0.0138; 0.01 more covers the grid's
        // discretisation and the mass outside it with a wide margin.
        EXPECT_LT(d_max, 1.95 / std::sqrt(double(n)) + 0.01) << "axis " << axis;
    }
}

TEST(FlowProposal, ImportanceLogZOfAGaussianEnergyIsWithinItsStandardError) {
    // E(x) = ½ (x − μ)ᵀ A (x − μ) in d = 8: log Z = (d/2) log 2π − ½ log det A. The flow is fitted
    // to 5000 draws of N(μ, A⁻¹), so it is close to but not exactly the normalised target.
    const int64_t d = 8;
    auto gen = at::make_generator<at::CPUGeneratorImpl>(21);
    const auto mu = torch::randn({d}, gen, torch::kFloat64);
    const auto b = torch::randn({d, d}, gen, torch::kFloat64) / std::sqrt(double(d));
    const auto a = b.matmul(b.t()) + 0.5 * torch::eye(d, torch::kFloat64);
    const auto cov = torch::linalg_inv(a);
    const auto l = torch::linalg_cholesky(cov);
    const auto data = torch::randn({5000, d}, gen, torch::kFloat64).matmul(l.t()) + mu;
    FlowFitOptions fit;
    fit.steps = 800;
    const auto flow =
        fit_flow_proposal(data, AffineCouplingFlowOptions(d).layers(4).hidden(32), fit).flow;
    const auto [x, log_q] = flow->sample(20000, /*seed=*/8, /*base_variance=*/1.1);
    const auto v = x - mu;
    const auto energies = 0.5 * (v.matmul(a) * v).sum(1);
    const double estimate = liftlab::importance_log_partition(energies, log_q).item<double>();
    const double se = liftlab::log_partition_standard_error(energies, log_q);
    const double exact = 0.5 * d * std::log(2 * kPi) - 0.5 * torch::logdet(a).item<double>();
    // Within 5 reported standard errors plus the Jensen bias se²; the ESS floor rules out a
    // proposal that passes only because its error bar is huge.
    EXPECT_NEAR(estimate, exact, 5 * se + se * se);
    EXPECT_GT(liftlab::effective_sample_size(energies, log_q) / 20000.0, 0.3);
}

TEST(FlowProposal, EffectiveSampleSizeIsMWhenTheProposalIsTheTarget) {
    const auto flow = fitted_banana_flow();
    const auto [x, log_q] = flow->sample(4096, /*seed=*/9);
    // Energy = −log q: every weight is exactly 1, log Z = 0.
    const auto energies = -flow->log_prob(x);
    const double ess = liftlab::effective_sample_size(energies, log_q);
    EXPECT_GT(ess / 4096.0, 0.999);
    EXPECT_NEAR(liftlab::importance_log_partition(energies, log_q).item<double>(), 0.0, 1e-4);
}

TEST(FlowProposal, FitIsCachedKeyedByDataAndOptions) {
    TempDir dir;
    FlowFitOptions fit;
    fit.steps = 50;
    fit.cache_dir = dir.str();
    const auto data = banana(500, 2);
    const auto opts = AffineCouplingFlowOptions(2).layers(2).hidden(8);
    const auto first = fit_flow_proposal(data, opts, fit);
    EXPECT_FALSE(first.from_cache);
    const auto again = fit_flow_proposal(data, opts, fit);
    EXPECT_TRUE(again.from_cache);
    EXPECT_DOUBLE_EQ(again.train_nll, first.train_nll);
    const auto probe = banana(10, 3);
    EXPECT_LT(
        (again.flow->log_prob(probe) - first.flow->log_prob(probe)).abs().max().item<double>(),
        1e-12);
    // Other data, or other options: a miss, and a different fit.
    EXPECT_FALSE(fit_flow_proposal(banana(500, 4), opts, fit).from_cache);
    fit.steps = 60;
    EXPECT_FALSE(fit_flow_proposal(data, opts, fit).from_cache);
}

TEST(FlowProposal, BadOptionsAreNamed) {
    const auto expect_invalid = [](auto f, const std::string& needle) {
        liftlab::test::expect_invalid_argument(f, needle);
    };
    expect_invalid([] { AffineCouplingFlow f(AffineCouplingFlowOptions(1)); }, "dim must be >= 2");
    expect_invalid([] { AffineCouplingFlow(AffineCouplingFlowOptions(2).layers(0)); }, "layers");
    expect_invalid(
        [] {
            fit_flow_proposal(torch::zeros({10, 3}), AffineCouplingFlowOptions(2), {});
        },
        "n × 2");
    expect_invalid(
        [] {
            auto x = torch::randn({10, 2});
            x[0][0] = NAN;
            fit_flow_proposal(x, AffineCouplingFlowOptions(2), {});
        },
        "finite");
}

// E(x) = ½ (x − μ)ᵀ A (x − μ) with A = BBᵀ + ½ I (B seeded): log Z = (d/2) log 2π − ½ log det A.
struct ShiftedGaussianEnergy {
    torch::Tensor mu, a;
    double log_z = 0;
    ShiftedGaussianEnergy(int64_t d, uint64_t seed) {
        auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
        mu = torch::randn({d}, gen, torch::kFloat64) + 1.0;
        const auto b = torch::randn({d, d}, gen, torch::kFloat64) / std::sqrt(double(d));
        a = b.matmul(b.t()) + 0.5 * torch::eye(d, torch::kFloat64);
        log_z = 0.5 * double(d) * std::log(2 * kPi) - 0.5 * torch::logdet(a).item<double>();
    }
    torch::Tensor operator()(const torch::Tensor& x) const {
        const auto v = x - mu.to(x.dtype());
        return 0.5 * (v.matmul(a.to(x.dtype())) * v).sum(1);
    }
};

TEST(FlowProposal, MixtureSamplesCarryTheirDensityAndTheDensityIntegratesToOne) {
    const auto flow = fitted_banana_flow();
    liftlab::BaseMixture base;
    base.weights = {0.7, 0.3};
    base.variances = {1.0, 4.0};
    const auto [x, log_q] = liftlab::mixture_sample(*flow, 2000, /*seed=*/4, base);
    torch::NoGradGuard no_grad;
    // The draws' log q (from the exact base draw) is the density at the draw (from encode).
    EXPECT_LT((liftlab::mixture_log_prob(*flow, x, base) - log_q).abs().max().item<double>(), 1e-3);
    // One component with τ² is the flow's own log_prob with that base variance.
    liftlab::BaseMixture wide;
    wide.variances = {4.0};
    EXPECT_LT((liftlab::mixture_log_prob(*flow, x, wide) - flow->log_prob(x, 4.0))
                  .abs()
                  .max()
                  .item<double>(),
              1e-9);
    // Riemann sum on a grid wide enough for the τ² = 4 component (its mass outside < 1 %).
    const auto axis = torch::linspace(-16, 16, 321, torch::kFloat64);
    const double h = 32.0 / 320;
    const auto mesh = torch::meshgrid({axis, axis}, "ij");
    const auto pts = torch::stack({mesh[0].reshape(-1), mesh[1].reshape(-1)}, 1);
    const double mass =
        liftlab::mixture_log_prob(*flow, pts, base).exp().sum().item<double>() * h * h;
    EXPECT_NEAR(mass, 1.0, 0.02);
}

TEST(FlowProposal, EnergyFitFromAMismatchedStartGivesLogZWithinItsStandardError) {
    // A 16-D correlated Gaussian energy, mean ≈ 1, and a flow that starts as N(0, I): the start's
    // ESS fraction is below 1 %. Reverse KL must lift the probe ESS above 50 % (the target), and
    // the defensive mixture's log Z on 20 000 fresh draws must agree with the analytic value within
    // 5 reported standard errors (plus the Jensen bias se²), the error itself below 0.05 nats.
    const int64_t d = 16;
    const ShiftedGaussianEnergy energy(d, 31);
    AffineCouplingFlow flow(AffineCouplingFlowOptions(d).layers(4).hidden(32).seed(2));
    liftlab::EnergyFitOptions o;
    o.max_steps = 1500;
    o.batch = 256;
    o.lr = 3e-3;
    o.check_every = 100;
    o.target_ess = 0.5;
    o.base.weights = {0.9, 0.1};
    o.base.variances = {1.0, 4.0};
    o.seed = 5;
    const auto fit = liftlab::fit_flow_to_energy(
        *flow, [&](const torch::Tensor& x) { return energy(x); }, o);
    EXPECT_LT(fit.start_ess_fraction, 0.01);
    EXPECT_GE(fit.ess_fraction, 0.5);
    EXPECT_LT(fit.steps, o.max_steps);  // stopped at the target
    const auto [x, log_q] = liftlab::mixture_sample(*flow, 20000, /*seed=*/77, o.base);
    const auto e = energy(x);
    const double estimate = liftlab::importance_log_partition(e, log_q).item<double>();
    const double se = liftlab::log_partition_standard_error(e, log_q);
    EXPECT_LT(se, 0.05);
    EXPECT_GT(liftlab::effective_sample_size(e, log_q) / 20000.0, 0.3);
    EXPECT_NEAR(estimate, energy.log_z, 5 * se + se * se);
}

TEST(FlowProposal, EnergyFitKeepsTheBestFlowAndZeroStepsOnlyProbes) {
    const int64_t d = 8;
    const ShiftedGaussianEnergy energy(d, 32);
    AffineCouplingFlow flow(AffineCouplingFlowOptions(d).layers(2).hidden(16));
    const auto probe = torch::randn({5, d}, torch::kFloat64);
    const auto before = flow->log_prob(probe).detach();
    liftlab::EnergyFitOptions o;
    o.max_steps = 0;
    const auto none = liftlab::fit_flow_to_energy(
        *flow, [&](const torch::Tensor& x) { return energy(x); }, o);
    EXPECT_EQ(none.steps, 0);
    EXPECT_EQ(none.ess_fraction, none.start_ess_fraction);
    EXPECT_LT((flow->log_prob(probe) - before).abs().max().item<double>(), 1e-12);
    // An energy whose gradients are NaN: every step is skipped and the start is kept.
    o.max_steps = 20;
    o.check_every = 5;
    const auto skipped = liftlab::fit_flow_to_energy(
        *flow, [&](const torch::Tensor& x) { return energy(x) + 0 * x.sqrt().sum(1); }, o);
    EXPECT_EQ(skipped.steps, 20);
    EXPECT_LT((flow->log_prob(probe) - before).abs().max().item<double>(), 1e-12);
    liftlab::test::expect_invalid_argument(
        [&] {
            liftlab::EnergyFitOptions bad;
            bad.base.weights = {0.5, 0.4};
            bad.base.variances = {1.0, 2.0};
            liftlab::fit_flow_to_energy(
                *flow, [&](const torch::Tensor& x) { return energy(x); }, bad);
        },
        "sum to 1");
}

}  // namespace
