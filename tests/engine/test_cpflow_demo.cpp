// The reference's 2-D CP-Flow sweep (presets cpflow-demo-2d and cpflow-demo-2d-symmetric), each
// new piece against maths: the folded-normal init through softplus⁻¹ by a Kolmogorov–Smirnov
// test, the symmetric init perturbation (the same N(0, σ²) values in each strategy's own
// coordinates, pgd projected), the flow without its scales on a zero ICNN is the Gaussian of the
// quadratic in closed form, the 2×2 log-det against the determinant of a finite-difference
// Hessian, the density of a random demo flow integrates to 1, the demo targets' scaling against
// moments derived from the recipe, per-seed test sets, test weights emitted on the test set, and
// the spec keys (recipe, round trip, every refusal naming its key). Seeded; a few seconds in all.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/errors.h"
#include "data/dataset.h"
#include "ebm/toy2d.h"
#include "flows/cp_flow.h"
#include "icnn/icnn.h"
#include "icnn/positivity.h"
#include "spec/experiment_spec.h"
#include "spec/presets.h"
#include "test_helpers.h"
#include "training/icnn_trainer.h"

namespace liftlab {
namespace {

using test::kF64;
using test::kStdErrors;

// Kolmogorov–Smirnov distance between the samples and a continuous CDF.
double demo_ks_distance(const torch::Tensor& samples, const std::function<double(double)>& cdf) {
    const auto sorted = std::get<0>(samples.reshape({-1}).to(torch::kFloat64).sort());
    const auto a = sorted.accessor<double, 1>();
    const int64_t n = sorted.size(0);
    double d = 0;
    for (int64_t i = 0; i < n; ++i) {
        const double f = cdf(a[i]);
        d = std::max({d, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
    }
    return d;
}

// The KS critical value at level 10⁻³: √(−ln(α/2)/2)/√n = 1.949/√n (asymptotic; seeded draws, so
// a failure means a wrong distribution, not bad luck).
double demo_ks_critical(int64_t n) {
    return 1.949 / std::sqrt(static_cast<double>(n));
}

// CDF of |N(0, σ²)| on y ≥ 0.
double demo_folded_normal_cdf(double y, double sigma) {
    return y <= 0 ? 0.0 : std::erf(y / (sigma * std::sqrt(2.0)));
}

const TensorShapes kDemoShapes = {{64, 64}, {64, 64}, {1, 64}};  // the demo ICNN's θ (64 × 3)

// A flow of the demo recipe, float64: no scales, c = 0.05, the lifter's body narrowed for speed.
CpFlow demo_flow(const std::string& strategy, int64_t width = 8) {
    PositivityOptions po;
    po.lifter_body = {16, 16, 32};
    po.lifter_pool_norm = false;
    CpFlow flow(CpFlowOptions(2)
                    .width(width)
                    .layers(3)
                    .strategy(strategy)
                    .scales(false)
                    .quadratic(0.05)
                    .positivity(po));
    flow->to(torch::kFloat64);
    return flow;
}

// Every trainable parameter moved by N(0, (0.5/√fan-in)²) (pgd projected): random, not initial.
void demo_perturb(CpFlow& flow) {
    {
        torch::NoGradGuard no_grad;
        for (auto& p : flow->parameters_for_optimizer()) {
            const double fan_in = p.dim() == 2 ? static_cast<double>(p.size(1)) : 1.0;
            p.add_(torch::randn_like(p) * (0.5 / std::sqrt(fan_in)));
        }
    }
    flow->after_step();
}

// A tiny spec of the demo recipe that trains in well under a second.
ExperimentSpec demo_spec(const std::string& method) {
    auto j = load_spec_source("cpflow-demo-2d");
    j["task"]["target"] = "2spirals-demo";
    j["task"]["n_train"] = 256;
    j["task"]["n_test"] = 128;
    j["icnn"]["width"] = 8;
    j["icnn"]["lifter_body"] = {8, 8, 16};
    j["steps"] = 5;
    j["seeds"] = {0, 1};
    j["threads"] = 1;
    j["methods"] = {{{"name", method}}};
    return parse_spec(j);
}

}  // namespace

TEST(CpFlowDemo, FoldedNormalInitThroughSoftplusInverseIsFoldedNormal) {
    torch::manual_seed(11);
    SoftplusPositivity softplus(kDemoShapes, SoftplusPositivity::Init::FoldedNormal);
    PgdPositivity pgd(kDemoShapes);
    const double sigma = std::sqrt(kPi / (2.0 * 64));  // |N(0, π/(2 n_in))|, n_in = 64
    const auto cdf = [&](double y) { return demo_folded_normal_cdf(y, sigma); };
    const auto x = torch::zeros({4, 2});
    for (auto* s : std::vector<PositivityStrategy*>{&softplus, &pgd}) {
        torch::NoGradGuard no_grad;
        const auto w = s->weights(x);
        const auto hidden = torch::cat({w[0].reshape(-1), w[1].reshape(-1)});  // 8192 values
        EXPECT_LT(demo_ks_distance(hidden, cdf), demo_ks_critical(hidden.numel()));
        EXPECT_GE(torch::cat({hidden, w[2].reshape(-1)}).min().item<double>(), 0.0);
    }
    // The share in the softplus shoulder, σ(θ̃) ≤ 0.05 ⟺ softplus(θ̃) ≤ −ln 0.95: for the
    // folded normal P(|N(0, σ²)| ≤ 0.0513) = erf(0.0513/(σ√2)) ≈ 0.256 — the "sizeable share"
    // direct softplus starts with.
    torch::NoGradGuard no_grad;
    const auto theta_tilde = softplus.pre_readout(x);
    const auto pre = torch::cat({theta_tilde[0].reshape(-1), theta_tilde[1].reshape(-1)});
    const double share = (torch::sigmoid(pre) <= 0.05).to(torch::kFloat64).mean().item<double>();
    const double p = cdf(-std::log(0.95));
    EXPECT_NEAR(p, 0.256, 0.001);
    EXPECT_NEAR(share, p, kStdErrors * std::sqrt(p * (1 - p) / pre.numel()));
}

TEST(CpFlowDemo, InitNoiseIsOneDrawInEveryStrategysOwnCoordinates) {
    constexpr double kSd = 0.5;
    auto gen = [] { return at::make_generator<at::CPUGeneratorImpl>(/*seed=*/42); };
    torch::manual_seed(3);
    SoftplusPositivity softplus0(kDemoShapes, SoftplusPositivity::Init::FoldedNormal);
    torch::manual_seed(3);
    SoftplusPositivity softplus1(kDemoShapes, SoftplusPositivity::Init::FoldedNormal);
    torch::manual_seed(3);
    PgdPositivity pgd0(kDemoShapes);
    torch::manual_seed(3);
    PgdPositivity pgd1(kDemoShapes);
    LifterPositivity lifter(kDemoShapes, {{64, 2}},
                            LifterPositivityOptions(2).body_widths({16, 16, 32}).pool_norm(false));
    auto g = gen();
    softplus1.perturb_init(kSd, g);
    g = gen();
    pgd1.perturb_init(kSd, g);
    g = gen();
    lifter.perturb_init(kSd, g);

    torch::NoGradGuard no_grad;
    const auto x = torch::zeros({4, 2});
    const auto t0 = softplus0.pre_readout(x), t1 = softplus1.pre_readout(x);
    const auto p0 = pgd0.pre_readout(x), p1 = pgd1.pre_readout(x);
    std::vector<torch::Tensor> all_noise;
    for (size_t i = 0; i < kDemoShapes.size(); ++i) {
        const auto noise = t1[i] - t0[i];  // softplus: θ̃ += noise
        all_noise.push_back(noise.reshape(-1));
        // pgd: θ ← max(θ + noise, 0), the same noise values.
        EXPECT_LT((p1[i] - (p0[i] + noise).clamp_min(0)).abs().max().item<double>(), 1e-6) << i;
        EXPECT_GE(p1[i].min().item<double>(), 0.0);
        // lifter: the slack b of readout i is the noise itself (in place of −2).
        EXPECT_LT((lifter.readout_layer(i)->bias - noise.reshape(-1)).abs().max().item<double>(),
                  1e-6)
            << i;
    }
    // The free tensors' readouts keep PyTorch's default init U(±1/√d_h).
    EXPECT_LE(lifter.readout_layer(3)->bias.abs().max().item<double>(), 1 / std::sqrt(32.0));
    const auto noise = torch::cat(all_noise);
    const auto normal = [&](double v) { return test::normal_cdf(v / kSd); };
    EXPECT_LT(demo_ks_distance(noise, normal), demo_ks_critical(noise.numel()));
    // Nothing to perturb: softplus-const's constant, lifter-noslack's missing slack.
    SoftplusPositivity constant(kDemoShapes, SoftplusPositivity::Init::Constant);
    LifterPositivity noslack(kDemoShapes, {}, LifterPositivityOptions(2).slack(false));
    g = gen();
    EXPECT_THROW(constant.perturb_init(kSd, g), std::invalid_argument);
    EXPECT_THROW(noslack.perturb_init(kSd, g), std::invalid_argument);
}

TEST(CpFlowDemo, WithoutScalesAZeroIcnnIsTheGaussianOfItsQuadratic) {
    // θ = 0 leaves E = w_xᵀx + (c/2)|x|² (+ w_out·z = 0): f = w_x + c x, ∇²F = c I, so
    // p(x) = N(x; −w_x/c, c⁻² I) exactly.
    torch::manual_seed(4);
    CpFlow flow = demo_flow("pgd");
    std::vector<torch::Tensor> zeros;
    for (const auto& shape : flow->icnn()->constrained_shapes())
        zeros.push_back(torch::zeros(shape, kF64));
    flow->icnn()->strategy().start_from(zeros);
    constexpr double c = 0.05;
    const auto x = 20.0 * torch::randn({7, 2}, kF64);
    const auto theta = flow->weights(x);
    const auto w_x = flow->icnn()->free_parameters().back().reshape({1, 2});
    torch::NoGradGuard no_grad;
    const auto z = (x + w_x / c) * c;  // standardised: (x − mean)/sd with sd = 1/c
    const auto expected = -0.5 * z.pow(2).sum(1) - std::log(2 * kPi) + 2 * std::log(c);
    EXPECT_LT((flow->log_prob_with_weights(x, theta) - expected).abs().max().item<double>(), 1e-12);
    EXPECT_LT((flow->log_det_hessian(x, theta) - 2 * std::log(c)).abs().max().item<double>(),
              1e-12);
    EXPECT_EQ(flow->quadratic_scale().item<double>(), 0.0);
    EXPECT_EQ(flow->icnn_scale().item<double>(), 1.0);
    EXPECT_TRUE(flow->named_parameters(/*recurse=*/false).is_empty());  // no w0, w1
    // Without the scales c is the Hessian's only floor: c = 0 is refused.
    EXPECT_THROW(CpFlow(CpFlowOptions(2).scales(false).quadratic(0.0)), std::invalid_argument);
}

TEST(CpFlowDemo, TwoByTwoLogDetIsTheLogOfTheFiniteDifferenceHessianDeterminant) {
    torch::manual_seed(6);
    for (const std::string strategy : {"lifter", "softplus", "pgd"}) {
        CpFlow flow = demo_flow(strategy);
        demo_perturb(flow);
        const auto theta = flow->weights(torch::randn({32, 2}, kF64));
        const auto x = 1.5 * torch::randn({6, 2}, kF64);
        const auto log_det = flow->log_det_hessian(x, theta).detach();
        // Central differences of f = ∇F in float64 (step 1e-5: error ≈ 1e-10 relative).
        constexpr double h = 1e-5;
        auto fd = torch::empty({6, 2, 2}, kF64);
        for (int64_t k = 0; k < 2; ++k) {
            auto step = torch::zeros_like(x);
            step.select(1, k).fill_(h);
            fd.select(2, k).copy_((flow->transport_with_weights(x + step, theta) -
                                   flow->transport_with_weights(x - step, theta)) /
                                  (2 * h));
        }
        const auto det = fd.select(1, 0).select(1, 0) * fd.select(1, 1).select(1, 1) -
                         fd.select(1, 0).select(1, 1) * fd.select(1, 1).select(1, 0);
        EXPECT_LT((log_det - det.log()).abs().max().item<double>(), 1e-7) << strategy;
        // And the Cholesky log-det of the autograd Hessian (the n-D path) to rounding.
        const auto hess = flow->hessian(x, theta).detach();
        const auto sym = 0.5 * (hess + hess.transpose(1, 2));
        EXPECT_LT((log_det - torch::logdet(sym)).abs().max().item<double>(), 1e-12) << strategy;
    }
}

// A random demo flow (c = 0.05, no scales) on x = a·u/(1 − u²), u ∈ [−U, U]² (tensor Simpson in
// u with the Jacobian a(1 + u²)/(1 − u²)² per axis): the grid reaches |x| ≈ 200, where
// |f| > 6 on the boundary, so the mass outside is below e^(−18) (as the 2-D test of
// test_cp_flow.cpp argues: f(R) contains the disc of radius min_∂R |f|).
TEST(CpFlowDemo, DensityOfARandomDemoFlowIntegratesToOne) {
    torch::manual_seed(8);
    CpFlow flow = demo_flow("lifter");
    demo_perturb(flow);
    const auto theta = flow->weights(torch::randn({64, 2}, kF64));
    constexpr double a = 4.0, U = 0.99;
    constexpr int64_t kPoints = 401;
    const auto u = torch::linspace(-U, U, kPoints, kF64);
    const auto xs = a * u / (1 - u * u);
    const auto jac = a * (1 + u * u) / (1 - u * u).pow(2);
    const double hu = 2 * U / (kPoints - 1);
    auto w = torch::full({kPoints}, 2.0, kF64);
    w.slice(0, 1, kPoints, 2).fill_(4.0);
    w[0] = 1.0;
    w[kPoints - 1] = 1.0;
    w = w * (hu / 3.0) * jac;
    const auto mesh = torch::meshgrid({xs, xs}, "ij");
    const auto x = torch::stack({mesh[0].reshape(-1), mesh[1].reshape(-1)}, 1);
    torch::NoGradGuard no_grad;
    const auto p = torch::exp(flow->log_prob_with_weights(x, theta)).view({kPoints, kPoints});
    const double integral = (p * w.unsqueeze(1) * w.unsqueeze(0)).sum().item<double>();
    const auto f = flow->transport_with_weights(x, theta).norm(2, 1).view({kPoints, kPoints});
    const double r = torch::stack({f.select(0, 0), f.select(0, kPoints - 1), f.select(1, 0),
                                   f.select(1, kPoints - 1)})
                         .min()
                         .item<double>();
    EXPECT_LT(f.min().item<double>(), r) << "argmin F must lie inside the grid";
    EXPECT_GT(r, 6.0);  // measured 9.5
    // A wrong log-det or a missing Jacobian moves the integral by O(1); the mapped Simpson rule
    // on 401² points is within 3.2e-5 of 1 here (the mass outside is below e^(−45)).
    EXPECT_NEAR(integral, 1.0, 1e-4);
}

TEST(CpFlowDemo, DemoTargetsFollowTheReferenceScaling) {
    constexpr int64_t n = 20000;
    EXPECT_TRUE(torch::equal(make_two_spirals_demo(64, 3), make_two_spirals_demo(64, 3)));
    EXPECT_FALSE(torch::equal(make_two_spirals_demo(64, 3), make_two_spirals_demo(64, 4)));
    EXPECT_EQ(make_eight_gaussians_demo(7, 1).sizes(), (std::vector<int64_t>{7, 2}));
    EXPECT_EQ(make_two_spirals_demo(7, 1).sizes(), (std::vector<int64_t>{7, 2}));
    // 8-Gaussians: centres 2·(cos 2πk/8, sin 2πk/8); own-centre squared distance 0.1²·χ²₂ (mean
    // 0.02, sd 0.02); per-coordinate variance E[(2 cos 2πk/8)²] + 0.1² = 2 + 0.01.
    const auto centres = eight_gaussians_demo_centres();
    EXPECT_LT((centres.norm(2, 1) - 2.0).abs().max().item<double>(), 1e-15);
    EXPECT_NEAR(centres[1][0].item<double>(), std::sqrt(2.0), 1e-15);
    const auto x8 = make_eight_gaussians_demo(n, 1);
    const auto d2 = std::get<0>(torch::cdist(x8, centres).pow(2).min(1));
    EXPECT_NEAR(d2.mean().item<double>(), 0.02, kStdErrors * 0.02 / std::sqrt(double(n)));
    EXPECT_NEAR(x8.var(0)[0].item<double>(), 2.01, 0.05);
    // 2-spirals: rows i and i + n/2 mirror each other before the noise, so 3(x_i + x_{i+n/2}) is
    // N(0, 2·0.1²); |3x| − noise = t + π with t = 3π√U: mean 3π, sd 3π/√18, at least π.
    const auto xs = make_two_spirals_demo(n, 2) * 3.0;
    const auto pair = xs.narrow(0, 0, n / 2) + xs.narrow(0, n / 2, n / 2);
    const double var = pair.var().item<double>();
    EXPECT_NEAR(var, 0.02, kStdErrors * 0.02 * std::sqrt(2.0 / n));
    const auto radius = xs.norm(2, 1);
    EXPECT_NEAR(radius.mean().item<double>(), 3 * kPi,
                kStdErrors * 3 * kPi / std::sqrt(18.0 * n) + 1e-3);
    EXPECT_GT(radius.min().item<double>(), kPi - 0.6);
    EXPECT_LT(radius.max().item<double>(), 4 * kPi + 0.6);
}

TEST(CpFlowDemo, PerSeedTestSetsAreSharedByTheMethodsOfASeed) {
    const auto lifter = demo_spec("lifter");
    const auto softplus = demo_spec("softplus");
    const auto data = make_dataset(lifter.task);
    IcnnTrainer a(lifter, lifter.methods[0], data, 0), b(softplus, softplus.methods[0], data, 0);
    IcnnTrainer c(lifter, lifter.methods[0], data, 1);
    ASSERT_EQ(a.test_set().sizes(), (std::vector<int64_t>{128, 2}));
    EXPECT_TRUE(torch::equal(a.test_set(), b.test_set()));
    EXPECT_FALSE(torch::equal(a.test_set(), c.test_set()));
    EXPECT_FALSE(torch::equal(a.test_set().narrow(0, 0, 128), data.x_test.narrow(0, 0, 128)));
    // A trainer of the same seed repeats the same fresh batches.
    IcnnTrainer a2(lifter, lifter.methods[0], data, 0);
    EXPECT_EQ(a.step(), a2.step());
}

TEST(CpFlowDemo, TestNllUsesWeightsEmittedOnTheTestSet) {
    for (const std::string m : {"lifter", "softplus"}) {
        auto spec = demo_spec(m);
        const auto data = make_dataset(spec.task);
        IcnnTrainer trainer(spec, spec.methods[0], data, 0);
        for (int i = 0; i < 3; ++i) trainer.step();
        const double reported = trainer.evaluate_test().at("test_loss");
        torch::NoGradGuard no_grad;
        const auto& x = trainer.test_set();
        const double scored =
            trainer.nll_with_weights(x, trainer.icnn()->weights(x)).item<double>();
        const double at_reference =
            trainer
                .nll_with_weights(
                    x, trainer.icnn()->strategy().readout(trainer.reference_pre_readout()))
                .item<double>();
        EXPECT_NEAR(reported, scored, 1e-6 * std::abs(scored)) << m;
        // Only the lifter's weights depend on the conditioning set.
        if (m == "lifter")
            EXPECT_GT(std::abs(scored - at_reference), 1e-6) << m;
        else
            EXPECT_EQ(scored, at_reference) << m;
    }
}

TEST(ExperimentSpecCpFlowDemo, PresetsCarryTheReferenceRecipe) {
    for (const std::string name : {"cpflow-demo-2d", "cpflow-demo-2d-symmetric"}) {
        const auto s = parse_spec(load_spec_source(name));
        EXPECT_EQ(s.task.kind, "cpflow-toy");
        EXPECT_EQ(s.task.target, "8gaussians-demo");
        EXPECT_TRUE(s.task.fresh_samples && s.task.test_per_seed);
        EXPECT_EQ(s.task.n_test, 1024);
        EXPECT_EQ(s.icnn.architecture, "liftlab");
        EXPECT_EQ(s.icnn.width, 64);
        EXPECT_EQ(s.icnn.layers, 3);
        EXPECT_EQ(s.icnn.strong_convexity, 0.05);
        EXPECT_FALSE(s.icnn.flow_scales);
        EXPECT_EQ(s.icnn.lifter_body, (std::vector<int>{192, 192, 256}));
        EXPECT_FALSE(s.icnn.lifter_pool_norm);
        EXPECT_EQ(s.icnn.eval_conditioning, "scored");
        EXPECT_EQ(s.icnn.grad_clip, 10.0);
        EXPECT_EQ(s.optimizer.kind, "adam");
        EXPECT_EQ(s.optimizer.lr, 1e-3);
        EXPECT_EQ(s.optimizer.lr_step_every, 0);
        EXPECT_EQ(s.batch_size, 64);
        EXPECT_EQ(s.steps, 6000);
        EXPECT_EQ(s.seeds.size(), 100u);
        const bool symmetric = name == "cpflow-demo-2d-symmetric";
        ASSERT_EQ(s.methods.size(), symmetric ? 3u : 2u);
        EXPECT_EQ(s.methods[0].name, "lifter");
        EXPECT_EQ(s.methods[0].init_noise, 0.5);
        EXPECT_EQ(s.methods[1].name, "softplus");
        EXPECT_EQ(s.methods[1].init_noise, symmetric ? 0.5 : 0.0);
        if (symmetric) {
            EXPECT_EQ(s.methods[2].name, "pgd");
            EXPECT_EQ(s.methods[2].init_noise, 0.5);
        }
        const auto j = to_json(s);
        EXPECT_EQ(to_json(parse_spec(j)), j) << name;
    }
    // The defaults leave every existing spec as it was.
    const ExperimentSpec d;
    EXPECT_EQ(d.icnn.strong_convexity, IcnnImpl::kQuadratic);
    EXPECT_EQ(IcnnOptions(2).quadratic(), IcnnImpl::kQuadratic);
    EXPECT_TRUE(d.icnn.flow_scales && d.icnn.lifter_pool_norm && !d.task.test_per_seed);
    EXPECT_EQ(d.icnn.lifter_body, (std::vector<int>{64, 64, 96}));
    EXPECT_EQ(d.icnn.eval_conditioning, "reference");
    EXPECT_EQ(MethodSpec{}.init_noise, 0.0);
}

TEST(ExperimentSpecCpFlowDemo, EveryRefusalNamesItsKey) {
    const auto base = load_spec_source("cpflow-demo-2d");
    auto key_of = [](const nlohmann::json& j) -> std::string {
        try {
            parse_spec(j);
        } catch (const SpecError& e) {
            return e.key();
        }
        return "(accepted)";
    };
    auto with = [&](const std::string& assignment) {
        auto j = base;
        apply_override(j, assignment);
        return key_of(j);
    };
    EXPECT_EQ(with("icnn.strong_convexity=-0.1"), "icnn.strong_convexity");
    EXPECT_EQ(with("icnn.strong_convexity=0"), "icnn.flow_scales");  // no floor left
    EXPECT_EQ(with("icnn.lifter_body=[]"), "icnn.lifter_body");
    EXPECT_EQ(with("icnn.lifter_body=[64,0]"), "icnn.lifter_body[1]");
    EXPECT_EQ(with("icnn.eval_conditioning=test"), "icnn.eval_conditioning");
    EXPECT_EQ(with("task.fresh_samples=false"), "task.test_per_seed");
    EXPECT_EQ(with("methods.0.init_noise=-1"), "methods[0].init_noise");
    EXPECT_EQ(with("methods=[{\"name\":\"softplus-const\",\"init_noise\":0.5}]"),
              "methods[0].init_noise");
    EXPECT_EQ(with("methods=[{\"name\":\"lifter-noslack\",\"init_noise\":0.5}]"),
              "methods[0].init_noise");
    // The FFJORD-recipe toys are data sets: no fresh samples, no per-seed test sets.
    EXPECT_EQ(with("task.target=8gaussians"), "task.fresh_samples");
    // Keys of the built-in ICNN are refused where nothing reads them.
    auto published = base;
    apply_override(published, "icnn.architecture=cpflow-published");
    apply_override(published, "task.fresh_samples=false");
    apply_override(published, "task.test_per_seed=false");
    EXPECT_EQ(key_of(published), "icnn.flow_scales");
    apply_override(published, "icnn.flow_scales=true");
    EXPECT_EQ(key_of(published), "icnn.strong_convexity");
    apply_override(published, "icnn.strong_convexity=0.02");
    EXPECT_EQ(key_of(published), "icnn.lifter_body");
    apply_override(published, "icnn.lifter_body=[64,64,96]");
    EXPECT_EQ(key_of(published), "icnn.lifter_pool_norm");
    apply_override(published, "icnn.lifter_pool_norm=true");
    EXPECT_EQ(key_of(published), "icnn.eval_conditioning");
    apply_override(published, "icnn.eval_conditioning=reference");
    EXPECT_EQ(key_of(published), "methods[0].init_noise");
    apply_override(published, "methods.0.init_noise=0");
    EXPECT_EQ(key_of(published), "(accepted)");
    auto ebm = parse_spec(nlohmann::json::parse(
        R"({"name": "e", "task": {"kind": "icnn-ebm-1d"}, "methods": [{"name": "lifter"}]})"));
    auto j = to_json(ebm);
    j["icnn"]["flow_scales"] = false;
    EXPECT_EQ(key_of(j), "icnn.flow_scales");
    j["icnn"]["flow_scales"] = true;
    j["methods"][0]["init_noise"] = 0.5;
    j["icnn"]["strong_convexity"] = 0.05;
    EXPECT_EQ(key_of(j), "(accepted)");  // the energy models read both
}

}  // namespace liftlab
