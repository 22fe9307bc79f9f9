// The convex potential flow (docs/methods.md §6.1, §8.7) and the generated
// 21-D tabular set. CP-Flow: transport = ∇ potential and Hessian = ∇ transport by central finite
// differences, the Hessian is SPD with the analytic eigenvalue floor, log det and log p against an
// independent Eigen computation, the density integrates to 1 in 1-D (exactly, by change of
// variables) and in 2-D (with a bound on the mass outside the grid), parameter gradients of the
// NLL against finite differences, a few Adam steps reduce the 8-Gaussians NLL, bad input throws.
// Tabular21: shape, determinism, mean / covariance / skewness against moments derived here from
// the recipe, and a CSV round trip through read_csv_table.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <Eigen/Dense>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "data/csv_table.h"
#include "data/tabular21.h"
#include "ebm/toy2d.h"
#include "flows/cp_flow.h"
#include "icnn/icnn.h"
#include "test_helpers.h"

using liftlab::CpFlow;
using liftlab::CpFlowOptions;
using liftlab::test::has;
using liftlab::test::relative_error;

namespace {
using liftlab::test::kF64;
constexpr double kLogTwoPi = 1.8378770664093454836;
constexpr int64_t kFlowWidth = 16;       // narrow ICNN keeps the suite fast
constexpr double kFlowPerturbStd = 0.5;  // noise per unit fan-in on every trainable parameter
// Central differences in float64: truncation h²/6·|F'''| ≈ 1e-11 plus rounding ε|F|/h ≈ 1e-10,
// so 1e-7 relative leaves three orders of margin and still catches any missing term.
constexpr double kFdStep = 1e-5;
constexpr double kFdTol = 1e-7;

class CpFlowStrategyTest : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override { torch::manual_seed(/*seed=*/5); }
};

class CpFlowTest : public ::testing::Test {
protected:
    void SetUp() override { torch::manual_seed(/*seed=*/9); }
};

CpFlow make_flow(const std::string& strategy, int64_t dim, int64_t width = kFlowWidth) {
    CpFlow flow(CpFlowOptions(dim).width(width).layers(3).strategy(strategy));
    flow->to(torch::kFloat64);
    return flow;
}

// Random, not initial, parameters (w0, w1 included); pgd is projected back onto θ ≥ 0. Noise on a
// weight matrix is scaled by 1/√fan-in so that every pre-activation moves by O(kFlowPerturbStd):
// the same absolute noise on the lifter's 96-input readouts would move θ̃ by ≈ 10·kFlowPerturbStd
// and saturate every softplus (flat second derivatives, a degenerate test case).
void perturb_flow(CpFlow& flow) {
    {
        torch::NoGradGuard no_grad;
        for (auto& p : flow->parameters_for_optimizer()) {
            const double fan_in = p.dim() == 2 ? static_cast<double>(p.size(1)) : 1.0;
            p.add_(torch::randn_like(p) * (kFlowPerturbStd / std::sqrt(fan_in)));
        }
    }
    flow->after_step();
}

// (softplus(w0) + c·softplus(w1)): ∇²F is at least this times I (the ICNN's Hessian is ⪰ c·I).
double eigenvalue_floor(CpFlow& flow) {
    return flow->quadratic_scale().item<double>() +
           liftlab::IcnnImpl::kQuadratic * flow->icnn_scale().item<double>();
}

// Composite Simpson weights for an odd number of equally spaced nodes: h/3 · (1 4 2 4 … 4 1).
torch::Tensor simpson_weights(int64_t points, double h) {
    auto w = torch::full({points}, 2.0, kF64);
    w.slice(0, 1, points, 2).fill_(4.0);
    w[0] = 1.0;
    w[points - 1] = 1.0;
    return w * (h / 3.0);
}

std::string flow_param_name(const ::testing::TestParamInfo<std::string>& info) {
    return info.param;
}
}  // namespace

TEST_P(CpFlowStrategyTest, TransportIsTheGradientOfThePotential) {
    CpFlow flow = make_flow(GetParam(), /*dim=*/3);
    perturb_flow(flow);
    const auto cond = torch::randn({32, 3}, kF64);
    const auto theta = flow->weights(cond);
    const auto x = 1.5 * torch::randn({6, 3}, kF64);
    const auto f = flow->transport_with_weights(x, theta);
    ASSERT_EQ(f.sizes(), (std::vector<int64_t>{6, 3}));
    torch::NoGradGuard no_grad;
    auto fd = torch::empty_like(x);
    for (int64_t j = 0; j < 3; ++j) {
        auto step = torch::zeros_like(x);
        step.select(1, j).fill_(kFdStep);
        fd.select(1, j).copy_(
            (flow->potential(x + step, theta) - flow->potential(x - step, theta)) / (2 * kFdStep));
    }
    EXPECT_LT(relative_error(f, fd), kFdTol) << GetParam();
    // transport(x, batch) emits θ from the batch itself.
    EXPECT_LT(relative_error(flow->transport(x, cond), f), 1e-14);
}

TEST_P(CpFlowStrategyTest, HessianIsTheJacobianOfTransportAndSpd) {
    CpFlow flow = make_flow(GetParam(), /*dim=*/3);
    perturb_flow(flow);
    const auto theta = flow->weights(torch::randn({32, 3}, kF64));
    const auto x = 1.5 * torch::randn({6, 3}, kF64);
    const auto h = flow->hessian(x, theta);
    ASSERT_EQ(h.sizes(), (std::vector<int64_t>{6, 3, 3}));
    auto fd = torch::empty_like(h);
    for (int64_t k = 0; k < 3; ++k) {
        auto step = torch::zeros_like(x);
        step.select(1, k).fill_(kFdStep);
        // Column k of the Jacobian: ∂f/∂x_k.
        fd.select(2, k).copy_((flow->transport_with_weights(x + step, theta) -
                               flow->transport_with_weights(x - step, theta)) /
                              (2 * kFdStep));
    }
    EXPECT_LT(relative_error(h, fd), kFdTol) << GetParam();
    // Mixed partials come from different reverse passes: equal up to rounding only.
    EXPECT_LT(relative_error(h, h.transpose(1, 2)), 1e-12);
    const auto eig = torch::linalg::eigvalsh(0.5 * (h + h.transpose(1, 2)), "L");
    const double floor = eigenvalue_floor(flow);
    EXPECT_GT(floor, 0.0);
    // Exact arithmetic gives λ_min ≥ floor; allow rounding relative to λ_max.
    EXPECT_GE(eig.min().item<double>(), floor - 1e-10 * eig.max().item<double>()) << GetParam();
}

TEST_P(CpFlowStrategyTest, LogDetAndLogProbMatchEigen) {
    constexpr int64_t kDim = 4;
    CpFlow flow = make_flow(GetParam(), kDim);
    perturb_flow(flow);
    const auto theta = flow->weights(torch::randn({32, kDim}, kF64));
    const auto x = 1.5 * torch::randn({5, kDim}, kF64);
    const auto h = flow->hessian(x, theta).detach();
    const auto f = flow->transport_with_weights(x, theta).detach();
    const auto log_det = flow->log_det_hessian(x, theta).detach();
    const auto log_p = flow->log_prob_with_weights(x, theta).detach();
    for (int64_t i = 0; i < x.size(0); ++i) {
        Eigen::MatrixXd m(kDim, kDim);
        for (int64_t r = 0; r < kDim; ++r)
            for (int64_t c = 0; c < kDim; ++c) m(r, c) = h[i][r][c].item<double>();
        const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(m);
        const double expected_log_det = solver.eigenvalues().array().log().sum();
        double norm2 = 0.0;
        for (int64_t r = 0; r < kDim; ++r) norm2 += std::pow(f[i][r].item<double>(), 2);
        const double expected_log_p = -0.5 * norm2 - 0.5 * kDim * kLogTwoPi + expected_log_det;
        // Cholesky vs eigenvalues of a well-conditioned 4×4 (κ ≲ 10³): agreement to 1e-10.
        EXPECT_NEAR(log_det[i].item<double>(), expected_log_det, 1e-10) << GetParam();
        EXPECT_NEAR(log_p[i].item<double>(), expected_log_p, 1e-10) << GetParam();
    }
}

// 1-D: ∫_a^b φ(f(x)) f′(x) dx = Φ(f(b)) − Φ(f(a)) exactly (f increasing), whatever a, b.
TEST_P(CpFlowStrategyTest, DensityIntegratesToOneIn1d) {
    for (bool perturbed : {false, true}) {
        CpFlow flow = make_flow(GetParam(), /*dim=*/1);
        if (perturbed) perturb_flow(flow);
        const auto theta = flow->weights(torch::randn({32, 1}, kF64));
        constexpr double kHalfWidth = 20.0;
        constexpr int64_t kPoints = 8001;  // h = 0.005
        const auto grid = torch::linspace(-kHalfWidth, kHalfWidth, kPoints, kF64).unsqueeze(1);
        torch::NoGradGuard no_grad;
        const auto p = torch::exp(flow->log_prob_with_weights(grid, theta));
        const double integral =
            (p * simpson_weights(kPoints, 2 * kHalfWidth / (kPoints - 1))).sum().item<double>();
        const auto ends = flow->transport_with_weights(
            torch::tensor({-kHalfWidth, kHalfWidth}, kF64).unsqueeze(1), theta);
        const double lo = ends[0][0].item<double>();
        const double hi = ends[1][0].item<double>();
        const double exact =
            0.5 * (std::erfc(-hi / std::sqrt(2.0)) - std::erfc(-lo / std::sqrt(2.0)));
        // The grid holds essentially all the mass: f(±20) beyond ±6 leaves < 2e-9 outside.
        EXPECT_LT(lo, -6.0) << GetParam();
        EXPECT_GT(hi, 6.0) << GetParam();
        // Simpson on an analytic density that has decayed to ~0 at both ends converges faster
        // than any power of h (the Euler–Maclaurin end corrections vanish); measured ≈ 1e-15 at
        // h = 0.005. 1e-10 is far above that and far below any modelling error (a wrong log det
        // or a missing Jacobian factor moves the integral by O(1)).
        EXPECT_NEAR(integral, exact, 1e-10) << GetParam() << (perturbed ? " perturbed" : " init");
        EXPECT_NEAR(integral, 1.0, 1e-8) << GetParam();  // 1 − exact < 2e-9 by the line above
    }
}

// 2-D on R = [−L, L]²: f is a homeomorphism, so f(R) is bounded by f(∂R). With
// r = min_{∂R} |f|, the disc |z| < r misses f(∂R) and holds f(x*) = 0 when x* ∈ R, hence lies in
// f(R): 1 − exp(−r²/2) ≤ ∫_R p ≤ 1.
TEST_P(CpFlowStrategyTest, DensityIntegratesToOneIn2d) {
    for (bool perturbed : {false, true}) {
        CpFlow flow = make_flow(GetParam(), /*dim=*/2);
        if (perturbed) perturb_flow(flow);
        const auto theta = flow->weights(torch::randn({32, 2}, kF64));
        constexpr double kHalfWidth = 8.0;
        constexpr int64_t kPoints = 161;  // h = 0.1 per axis
        const auto axis = torch::linspace(-kHalfWidth, kHalfWidth, kPoints, kF64);
        const auto mesh = torch::meshgrid({axis, axis}, "ij");
        const auto x = torch::stack({mesh[0].reshape(-1), mesh[1].reshape(-1)}, 1);
        torch::NoGradGuard no_grad;
        const auto p = torch::exp(flow->log_prob_with_weights(x, theta)).view({kPoints, kPoints});
        const auto w = simpson_weights(kPoints, 2 * kHalfWidth / (kPoints - 1));
        const double integral = (p * w.unsqueeze(1) * w.unsqueeze(0)).sum().item<double>();

        const auto f = flow->transport_with_weights(x, theta).norm(2, 1).view({kPoints, kPoints});
        const double r = torch::stack({f.select(0, 0), f.select(0, kPoints - 1), f.select(1, 0),
                                       f.select(1, kPoints - 1)})
                             .min()
                             .item<double>();
        EXPECT_LT(f.min().item<double>(), r) << "x* = argmin F must lie inside the grid";
        EXPECT_GT(r, 6.0) << GetParam();  // mass outside ≤ exp(−18) ≈ 1.5e-8
        // Tensor Simpson with h = 0.1 on an analytic density that has decayed at the edges:
        // exponentially accurate, measured ≈ 1e-15 (the outside mass is ≤ 1.5e-8). 1e-6 leaves
        // margin; a wrong log det moves the integral by O(1).
        EXPECT_NEAR(integral, 1.0, 1e-6) << GetParam() << (perturbed ? " perturbed" : " init");
    }
}

INSTANTIATE_TEST_SUITE_P(CpFlowStrategies, CpFlowStrategyTest,
                         ::testing::Values("pgd", "softplus", "lifter"), flow_param_name);

// The NLL's gradient carries the log-det's second-order terms: compare every kind of parameter
// (w0, w1, lifter body, slack and the readouts of the emitted free tensors) with central
// differences of the loss. The lifter's ICNN template is frozen: it gets no gradient.
TEST_F(CpFlowTest, NllGradientMatchesFiniteDifferences) {
    CpFlow flow = make_flow("lifter", /*dim=*/2);
    perturb_flow(flow);
    const auto x = liftlab::make_eight_gaussians(64, /*seed=*/3);
    const auto cond = liftlab::make_eight_gaussians(64, /*seed=*/4);
    auto loss_fn = [&] { return -flow->log_prob(x, cond).mean(); };
    flow->zero_grad();
    loss_fn().backward();
    int checked = 0;
    for (const auto& item : flow->named_parameters()) {
        auto p = item.value();
        if (!p.requires_grad()) {  // the frozen template
            EXPECT_FALSE(p.grad().defined()) << item.key();
            EXPECT_FALSE(has(item.key(), "positivity")) << item.key();
            continue;
        }
        ASSERT_TRUE(p.grad().defined()) << item.key();
        EXPECT_GT(p.grad().abs().max().item<double>(), 0.0) << item.key();
        const bool pick =
            item.key() == "w0" || item.key() == "w1" || has(item.key(), "free_readout_0.weight") ||
            has(item.key(), "free_readout_6.bias") ||
            (has(item.key(), "readout_") && has(item.key(), "bias")) || has(item.key(), "body");
        if (!pick) continue;
        auto flat = p.view({-1});
        const int64_t idx = flat.numel() / 2;
        const double analytic = p.grad().view({-1})[idx].item<double>();
        torch::NoGradGuard no_grad;
        constexpr double kStep = 1e-6;
        const double orig = flat[idx].item<double>();
        flat[idx] = orig + kStep;
        const double up = loss_fn().item<double>();
        flat[idx] = orig - kStep;
        const double down = loss_fn().item<double>();
        flat[idx] = orig;
        // Truncation ~ h² ≈ 1e-12, rounding ε·|loss|/h ≈ 1e-9: 1e-6 + 1e-6·|g|.
        EXPECT_NEAR(analytic, (up - down) / (2 * kStep), 1e-6 * (1 + std::abs(analytic)))
            << item.key();
        ++checked;
    }
    EXPECT_GE(checked, 7);
}

TEST_F(CpFlowTest, NoGradEvaluationMatchesAndIsDetached) {
    CpFlow flow = make_flow("lifter", /*dim=*/2);
    perturb_flow(flow);
    const auto x = torch::randn({10, 2}, kF64);
    const auto with_graph = flow->log_prob(x, x);
    EXPECT_TRUE(with_graph.requires_grad());
    torch::NoGradGuard no_grad;
    const auto detached = flow->log_prob(x, x);
    EXPECT_FALSE(detached.requires_grad());
    EXPECT_LT(relative_error(detached, with_graph.detach()), 1e-14);
    EXPECT_FALSE(flow->transport(x, x).requires_grad());
}

// float32 as in training: the reference Adam 5e-3, batch 128 on 8-Gaussians.
TEST_F(CpFlowTest, AdamStepsReduceEightGaussiansNll) {
    for (const std::string strategy : {"pgd", "lifter"}) {
        CpFlow flow(CpFlowOptions(2).width(32).layers(3).strategy(strategy));
        const auto test = liftlab::make_eight_gaussians(512, /*seed=*/100).to(torch::kFloat32);
        const auto reference = liftlab::make_eight_gaussians(256, /*seed=*/101).to(torch::kFloat32);
        auto test_nll = [&] {
            torch::NoGradGuard no_grad;
            return -flow->log_prob(test, reference).mean().item<double>();
        };
        const double before = test_nll();
        torch::optim::Adam adam(flow->parameters_for_optimizer(), torch::optim::AdamOptions(5e-3));
        for (int step = 0; step < 30; ++step) {
            const auto batch = liftlab::make_eight_gaussians(128, 1000 + step).to(torch::kFloat32);
            adam.zero_grad();
            const auto loss = -flow->log_prob(batch, batch).mean();
            loss.backward();
            adam.step();
            flow->after_step();
        }
        const double after = test_nll();
        // Init is ≈ N(−f(0), 1/4): far too narrow for modes at radius 2.83; widening alone is
        // worth > 1 nat. 0.3 nats is far above the ±0.05 noise of a 512-sample NLL estimate.
        EXPECT_LT(after, before - 0.3) << strategy << ": " << before << " → " << after;
    }
}

TEST_F(CpFlowTest, BadInputThrowsNamingTheArgument) {
    CpFlow flow = make_flow("softplus", /*dim=*/3);
    const auto cond = torch::randn({8, 3}, kF64);
    auto expect_message = [](auto f, const std::string& part) {
        try {
            f();
            ADD_FAILURE() << "expected std::invalid_argument containing '" << part << "'";
        } catch (const std::invalid_argument& e) {
            EXPECT_TRUE(has(e.what(), part)) << e.what();
        }
    };
    expect_message([&] { flow->log_prob(torch::randn({5, 4}, kF64), cond); }, "x must be n × 3");
    expect_message([&] { flow->log_prob(torch::randn({5}, kF64), cond); }, "x must be n × 3");
    expect_message([&] { flow->transport(torch::randn({2, 5, 3}, kF64), cond); }, "x must be");
    expect_message(
        [&] {
            flow->hessian(torch::randn({5, 2}, kF64), flow->weights(cond));
        },
        "x must be n × 3");
    expect_message([&] { flow->log_prob(torch::randn({5, 3}), cond); }, "dtype");
    expect_message([&] { flow->potential(torch::randn({5, 3}, kF64), {}); }, "constrained");
    expect_message([] { CpFlow(CpFlowOptions(0)); }, "input_dim");
    expect_message([] { CpFlow(CpFlowOptions(2).strategy("bogus")); }, "'bogus'");
}

TEST_F(CpFlowTest, InitHasUnitScales) {
    CpFlow flow(CpFlowOptions(2));
    EXPECT_NEAR(flow->quadratic_scale().item<double>(), 1.0, 1e-6);  // float32 softplus
    EXPECT_NEAR(flow->icnn_scale().item<double>(), 1.0, 1e-6);
    EXPECT_EQ(flow->parameters_for_optimizer().size(),
              flow->icnn()->parameters_for_optimizer().size() + 2);
}

// ---- Tabular 21-D --------------------------------------------------------------------------

namespace {
constexpr int64_t kTabularSamples = 200000;
using liftlab::test::kStdErrors;

// Analytic moments of u (before standardisation) under the recipe, derived here independently:
// per component N(μ, S), exp columns e^{a z}; E[e^{tᵀz}] = exp(tᵀμ + tᵀSt/2).
struct UMoments {
    torch::Tensor mean;    // 21
    torch::Tensor second;  // 21 × 21, E[u uᵀ]
    torch::Tensor third;   // 21, E[u_i³]
};

UMoments analytic_u_moments() {
    const auto& r = liftlab::tabular21_recipe();
    const int64_t d = liftlab::kTabular21Dim;
    const double a = liftlab::kTabular21ExpRate;
    auto is_exp = [](int64_t i) { return i < liftlab::kTabular21ExpColumns; };
    UMoments m{torch::zeros({d}, kF64), torch::zeros({d, d}, kF64), torch::zeros({d}, kF64)};
    for (int64_t k = 0; k < liftlab::kTabular21Components; ++k) {
        const double pi = r.weights[k].item<double>();
        const auto mu = r.means[k];
        const auto s = r.covariances[k];
        auto mu_ = [&](int64_t i) { return mu[i].item<double>(); };
        auto s_ = [&](int64_t i, int64_t j) { return s[i][j].item<double>(); };
        for (int64_t i = 0; i < d; ++i) {
            const double ei = std::exp(a * mu_(i) + 0.5 * a * a * s_(i, i));
            m.mean[i] += pi * (is_exp(i) ? ei : mu_(i));
            m.third[i] += pi * (is_exp(i) ? std::exp(3 * a * mu_(i) + 4.5 * a * a * s_(i, i))
                                          : std::pow(mu_(i), 3) + 3 * mu_(i) * s_(i, i));
            for (int64_t j = 0; j < d; ++j) {
                const double ej = std::exp(a * mu_(j) + 0.5 * a * a * s_(j, j));
                double v;
                if (is_exp(i) && is_exp(j))
                    v = std::exp(a * (mu_(i) + mu_(j)) +
                                 0.5 * a * a * (s_(i, i) + s_(j, j) + 2 * s_(i, j)));
                else if (is_exp(i))  // E[z_j e^{a z_i}] = (μ_j + a S_ij) E[e^{a z_i}]
                    v = (mu_(j) + a * s_(i, j)) * ei;
                else if (is_exp(j))
                    v = (mu_(i) + a * s_(i, j)) * ej;
                else
                    v = s_(i, j) + mu_(i) * mu_(j);
                m.second[i][j] += pi * v;
            }
        }
    }
    return m;
}
}  // namespace

TEST(Tabular21, ShapeDtypeAndDeterminism) {
    for (int64_t n : {0, 1, 37}) {
        const auto x = liftlab::make_tabular21(n, 0);
        EXPECT_EQ(x.sizes(), (std::vector<int64_t>{n, 21}));
        EXPECT_EQ(x.dtype(), torch::kFloat64);
    }
    EXPECT_TRUE(torch::equal(liftlab::make_tabular21(64, 3), liftlab::make_tabular21(64, 3)));
    EXPECT_FALSE(torch::equal(liftlab::make_tabular21(64, 3), liftlab::make_tabular21(64, 4)));
    EXPECT_THROW(liftlab::make_tabular21(-1, 0), std::invalid_argument);
    // The exp columns undo to u = e^{a z} > 0.
    const auto& r = liftlab::tabular21_recipe();
    const auto u = liftlab::make_tabular21(1000, 5) * r.scale + r.shift;
    EXPECT_GT(u.slice(1, 0, liftlab::kTabular21ExpColumns).min().item<double>(), 0.0);
    EXPECT_LT(u.slice(1, liftlab::kTabular21ExpColumns).min().item<double>(), 0.0);
}

TEST(Tabular21, RecipeStandardisesEveryColumnAnalytically) {
    const auto& r = liftlab::tabular21_recipe();
    const auto m = analytic_u_moments();
    EXPECT_LT(relative_error(r.shift, m.mean), 1e-12);
    EXPECT_LT(relative_error(r.scale * r.scale, m.second.diagonal() - m.mean * m.mean), 1e-12);
    EXPECT_NEAR(r.weights.sum().item<double>(), 1.0, 1e-15);
    // Σ_k = 0.3 I + PSD: eigenvalues ≥ 0.3.
    EXPECT_GE(torch::linalg::eigvalsh(r.covariances, "L").min().item<double>(), 0.3 - 1e-12);
}

TEST(Tabular21, SampleMomentsMatchTheRecipe) {
    const auto x = liftlab::make_tabular21(kTabularSamples, /*seed=*/7);
    const auto& r = liftlab::tabular21_recipe();
    const auto m = analytic_u_moments();
    const auto cov_u = m.second - torch::outer(m.mean, m.mean);
    const auto expected_cov = cov_u / torch::outer(r.scale, r.scale);
    const double sqrt_n = std::sqrt(static_cast<double>(kTabularSamples));

    // Means are 0: standard error sd/√n with sd = 1.
    const auto mean = x.mean(0);
    EXPECT_LT(mean.abs().max().item<double>(), kStdErrors / sqrt_n);

    // Covariance entries: the standard error of the mean of x_i x_j is sd(x_i x_j)/√n, with
    // Var(x_i x_j) = E[x_i² x_j²] − E[x_i x_j]² (centring by the sample mean changes it by O(1/n)).
    const double n = static_cast<double>(kTabularSamples);
    const auto centred = x - mean;
    const auto sample_cov = centred.t().matmul(centred) / n;
    const auto squares = centred * centred;
    const auto se = torch::sqrt(squares.t().matmul(squares) / n - sample_cov * sample_cov) / sqrt_n;
    const auto z = ((sample_cov - expected_cov).abs() / se).max().item<double>();
    EXPECT_LT(z, kStdErrors) << "worst covariance entry, in standard errors";
    // The columns are genuinely correlated (the test would be vacuous otherwise).
    const auto off = expected_cov - torch::diag(expected_cov.diagonal());
    EXPECT_GT(off.abs().max().item<double>(), 0.3);

    // Skewness of the exp columns: E[x³] = E[(u − m)³]/s³, from E[u³], E[u²], E[u].
    for (int64_t i = 0; i < liftlab::kTabular21ExpColumns; ++i) {
        const double mu = m.mean[i].item<double>();
        const double m2 = m.second[i][i].item<double>();
        const double m3 = m.third[i].item<double>();
        const double s = r.scale[i].item<double>();
        const double skew = (m3 - 3 * mu * m2 + 2 * mu * mu * mu) / (s * s * s);
        const auto cubes = x.select(1, i).pow(3);
        const double se3 = cubes.std().item<double>() / sqrt_n;
        EXPECT_NEAR(cubes.mean().item<double>(), skew, kStdErrors * se3) << "column " << i;
        EXPECT_GT(skew, 0.5) << "column " << i << " should be clearly right-skewed";
    }
}

TEST(Tabular21, CsvRoundTripThroughReadCsvTable) {
    liftlab::test::TempDir dir;
    const auto x = liftlab::make_tabular21(300, /*seed=*/11);
    const std::string path = dir.file("tabular21.csv");
    liftlab::write_tabular_csv(path, x);
    const auto table = liftlab::read_csv_table(path);
    ASSERT_EQ(table.columns.size(), 21u);
    EXPECT_EQ(table.columns.front(), "f0");
    EXPECT_EQ(table.columns.back(), "f20");
    ASSERT_EQ(table.rows.size(), 300u);
    double worst = 0.0;
    for (int64_t i = 0; i < 300; ++i)
        for (int64_t j = 0; j < 21; ++j) {
            const double v = x[i][j].item<double>();
            worst = std::max(worst, std::abs(table.rows[i][j] - v) / std::max(1.0, std::abs(v)));
        }
    // %.9g keeps 9 significant digits: ≤ 5e-9 relative (absolute for |v| < 1).
    EXPECT_LT(worst, 1e-8);
    EXPECT_GT(worst, 0.0) << "9 digits cannot be exact for random doubles";

    EXPECT_THROW(liftlab::write_tabular_csv(path, torch::zeros({4}, kF64)), std::invalid_argument);
    EXPECT_THROW(liftlab::write_tabular_csv(path, torch::full({2, 2}, NAN, kF64)),
                 std::invalid_argument);
    EXPECT_THROW(liftlab::write_tabular_csv(dir.file("no/such/dir/x.csv"), x), liftlab::DataError);
}
