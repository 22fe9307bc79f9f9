// The ICNN and its positivity strategies (docs/methods.md §3): convexity in x for every strategy
// after random perturbation (Jensen on random pairs, PSD Hessian), pgd's projection, softplus
// gradient attenuation, batch dependence of the lifter's weights, and bad strategy names.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "icnn/icnn.h"
#include "icnn/positivity.h"
#include "nn/readout_kernel.h"
#include "test_helpers.h"

using liftlab::FactoredWeight;
using liftlab::Icnn;
using liftlab::IcnnOptions;
using liftlab::make_positivity;
using liftlab::positivity_strategy_names;
using liftlab::test::has;
using liftlab::test::relative_error;

namespace {
using liftlab::test::kF64;
constexpr int64_t kDim = 3;           // small input so the Hessian is cheap and exact
constexpr int64_t kWidth = 24;        // narrow ICNN keeps the suite fast
constexpr double kJensenTol = 1e-5;   // relative slack on Jensen's inequality
constexpr double kHessianTol = 1e-6;  // min eigenvalue ≥ −tol · max eigenvalue
constexpr double kPerturbStd = 0.3;   // noise added to every trainable parameter
constexpr double kGradTol = 1e-6;     // softplus attenuation identity

class IcnnTest : public ::testing::Test {
protected:
    void SetUp() override { torch::manual_seed(/*seed=*/7); }
};

class IcnnStrategyTest : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override { torch::manual_seed(/*seed=*/11); }
};

Icnn make_icnn(const std::string& strategy, int64_t width = kWidth) {
    Icnn net(IcnnOptions(kDim).width(width).layers(3).strategy(strategy));
    net->to(torch::kFloat64);
    if (strategy == "lifter-decoupled")
        net->strategy().set_independent_batch(torch::randn({64, kDim}, kF64));
    return net;
}

double min_constrained(Icnn& net, const torch::Tensor& batch) {
    double m = 1e300;
    for (const auto& t : net->constrained_weights(batch)) m = std::min(m, t.min().item<double>());
    return m;
}

// Random, not initial, parameters: noise on everything, then after_step() (pgd projects back
// onto θ ≥ 0). Returns the smallest constrained entry before after_step().
double perturb(Icnn& net) {
    {
        torch::NoGradGuard no_grad;
        for (auto& p : net->parameters_for_optimizer()) p.add_(torch::randn_like(p) * kPerturbStd);
    }
    const double before = min_constrained(net, torch::randn({16, kDim}, kF64));
    net->after_step();
    return before;
}

// ∇²E at one point by double backward.
torch::Tensor hessian(Icnn& net, const torch::Tensor& point, const torch::Tensor& batch) {
    auto x = point.clone().reshape({1, kDim}).requires_grad_(true);
    auto e = net->energy(x, batch).sum();
    auto g = torch::autograd::grad({e}, {x}, {}, /*retain_graph=*/true, /*create_graph=*/true)[0];
    std::vector<torch::Tensor> rows;
    for (int64_t j = 0; j < kDim; ++j)
        rows.push_back(torch::autograd::grad({g[0][j]}, {x}, {}, /*retain_graph=*/true)[0][0]);
    return torch::stack(rows);
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
    std::string s = info.param;
    for (auto& c : s)
        if (c == '-') c = '_';
    return s;
}
}  // namespace

TEST_P(IcnnStrategyTest, PerturbedEnergyIsConvexByJensen) {
    Icnn net = make_icnn(GetParam());
    const double before = perturb(net);
    // pgd's noise makes θ negative; after_step() must have restored θ ≥ 0.
    if (GetParam() == "pgd") EXPECT_LT(before, 0.0);
    const auto batch = torch::randn({64, kDim}, kF64);
    EXPECT_GE(min_constrained(net, batch), 0.0);
    torch::NoGradGuard no_grad;
    const auto x = 2.0 * torch::randn({200, kDim}, kF64);
    const auto y = 2.0 * torch::randn({200, kDim}, kF64);
    const auto t = torch::rand({200, 1}, kF64);
    const auto lhs = net->energy(t * x + (1 - t) * y, batch);
    const auto ex = net->energy(x, batch);
    const auto ey = net->energy(y, batch);
    const auto tv = t.squeeze(1);
    const auto rhs = tv * ex + (1 - tv) * ey;
    const auto scale = 1.0 + (tv * ex).abs() + ((1 - tv) * ey).abs();
    const auto violation = ((lhs - rhs) / scale).max().item<double>();
    EXPECT_LE(violation, kJensenTol) << GetParam();
}

TEST_P(IcnnStrategyTest, PerturbedEnergyHasPsdHessian) {
    Icnn net = make_icnn(GetParam());
    perturb(net);
    const auto batch = torch::randn({64, kDim}, kF64);
    for (int k = 0; k < 4; ++k) {
        const auto h = hessian(net, 1.5 * torch::randn({kDim}, kF64), batch);
        EXPECT_LT(relative_error(h, h.transpose(0, 1)), 1e-10);
        const auto eig = torch::linalg::eigvalsh(0.5 * (h + h.transpose(0, 1)), "L");
        const double lo = eig.min().item<double>();
        const double hi = eig.max().item<double>();
        EXPECT_GT(hi, 0.0);
        EXPECT_GE(lo, -kHessianTol * hi) << GetParam() << " point " << k;
        // The (c/2)||x||² term alone gives eigenvalues ≥ c.
        EXPECT_GE(lo, liftlab::IcnnImpl::kQuadratic * (1 - 1e-6)) << GetParam();
    }
}

INSTANTIATE_TEST_SUITE_P(IcnnStrategies, IcnnStrategyTest,
                         ::testing::ValuesIn(positivity_strategy_names()), param_name);

TEST_F(IcnnTest, PgdKeepsThetaNonNegativeAfterEveryAdamStep) {
    Icnn net = make_icnn("pgd");
    const auto batch = torch::randn({32, kDim}, kF64);
    torch::optim::Adam adam(net->parameters_for_optimizer(), torch::optim::AdamOptions(0.1));
    const auto x = torch::randn({32, kDim}, kF64);
    const auto target = torch::randn({32}, kF64);
    int64_t clipped = 0;
    for (int step = 0; step < 20; ++step) {
        adam.zero_grad();
        auto loss = (net->energy(x, batch) - target).pow(2).mean();
        for (const auto& t : net->constrained_weights(batch)) loss = loss + t.sum();  // push θ down
        loss.backward();
        adam.step();
        net->after_step();
        for (const auto& t : net->constrained_weights(batch)) {
            EXPECT_GE(t.min().item<double>(), 0.0) << "step " << step;
            clipped += (t == 0).sum().item<int64_t>();
        }
    }
    EXPECT_GT(clipped, 0) << "the projection never had anything to do";
    // pre_readout is θ itself for pgd.
    const auto theta = net->constrained_weights(batch);
    const auto pre = net->constrained_pre_readout(batch);
    for (size_t i = 0; i < theta.size(); ++i) EXPECT_TRUE(theta[i].is_same(pre[i]));
}

TEST_F(IcnnTest, SoftplusGradientIsAttenuatedBySigmoid) {
    Icnn net = make_icnn("softplus");
    perturb(net);
    const auto batch = torch::randn({16, kDim}, kF64);
    const auto x = torch::randn({32, kDim}, kF64);
    const auto pre = net->constrained_pre_readout(batch);
    const auto theta = net->constrained_weights(batch);
    const auto loss = net->energy_with_weights(x, theta).pow(2).mean();
    std::vector<torch::Tensor> inputs = theta;
    inputs.insert(inputs.end(), pre.begin(), pre.end());
    const auto grads = torch::autograd::grad({loss}, inputs);
    const size_t n = theta.size();
    for (size_t i = 0; i < n; ++i) {
        const auto expected = torch::sigmoid(pre[i]) * grads[i];
        EXPECT_LT(relative_error(grads[n + i], expected), kGradTol) << "tensor " << i;
    }
    // softplus-const: θ̃ = −2 → θ = softplus(−2) ≈ 0.127 everywhere.
    Icnn fresh = make_icnn("softplus-const");
    for (const auto& t : fresh->constrained_pre_readout(batch))
        EXPECT_TRUE(torch::allclose(t, torch::full_like(t, -2.0)));
}

TEST_F(IcnnTest, LifterWeightsFollowTheBatchButNobodyWeightsDoNot) {
    const auto b1 = torch::randn({64, kDim}, kF64);
    const auto b2 = 2.0 * torch::randn({64, kDim}, kF64) + 1.0;
    Icnn lifter = make_icnn("lifter");
    const auto w1 = lifter->constrained_weights(b1);
    const auto w2 = lifter->constrained_weights(b2);
    for (size_t i = 0; i < w1.size(); ++i)
        EXPECT_GT((w1[i] - w2[i]).abs().max().item<double>(), 1e-4) << "tensor " << i;
    // The batch is detached: no gradient flows back into it.
    auto b = b1.clone().requires_grad_(true);
    EXPECT_FALSE(lifter->constrained_weights(b)[0].sum().grad_fn() == nullptr);
    lifter->constrained_weights(b)[0].sum().backward();
    EXPECT_FALSE(b.grad().defined());

    Icnn nobody = make_icnn("lifter-nobody");
    const auto n1 = nobody->constrained_weights(b1);
    const auto n2 = nobody->constrained_weights(b2);
    for (size_t i = 0; i < n1.size(); ++i) EXPECT_TRUE(torch::equal(n1[i], n2[i]));

    // Decoupled: the weights follow X′ and ignore the batch passed in.
    Icnn decoupled = make_icnn("lifter-decoupled");
    const auto d1 = decoupled->constrained_weights(b1);
    const auto d2 = decoupled->constrained_weights(b2);
    for (size_t i = 0; i < d1.size(); ++i) EXPECT_TRUE(torch::equal(d1[i], d2[i]));
    decoupled->strategy().set_independent_batch(b2);
    const auto d3 = decoupled->constrained_weights(b1);
    EXPECT_GT((d1[0] - d3[0]).abs().max().item<double>(), 1e-4);
}

TEST_F(IcnnTest, LifterInitAndNoSlackHasNoSlackParameter) {
    Icnn lifter = make_icnn("lifter");
    Icnn noslack = make_icnn("lifter-noslack");
    auto is_slack = [](const std::string& key) {
        return key.rfind("readout_", 0) == 0 && has(key, ".bias");  // constrained readouts only
    };
    int64_t slack_numel = 0;
    for (const auto& item : lifter->strategy().named_parameters()) {
        if (is_slack(item.key())) {
            slack_numel += item.value().numel();
            EXPECT_TRUE(torch::allclose(item.value(), torch::full_like(item.value(), -2.0)));
        }
    }
    int64_t constrained_numel = 0;
    for (const auto& s : lifter->constrained_shapes()) constrained_numel += s[0] * s[1];
    EXPECT_EQ(slack_numel, constrained_numel);
    for (const auto& item : noslack->strategy().named_parameters())
        EXPECT_FALSE(is_slack(item.key())) << item.key();
    int64_t with = 0, without = 0;
    for (const auto& p : lifter->strategy().parameters()) with += p.numel();
    for (const auto& p : noslack->strategy().parameters()) without += p.numel();
    EXPECT_EQ(with - without, constrained_numel);
    EXPECT_TRUE(lifter->strategy().has_slack());
    EXPECT_FALSE(noslack->strategy().has_slack());
    EXPECT_FALSE(make_icnn("softplus")->strategy().has_slack());
    EXPECT_FALSE(make_icnn("pgd")->strategy().has_slack());
}

// The lifter family emits every ICNN tensor (docs/methods.md §3.3): one emitted tensor per template
// tensor, of its shape; the constrained ones positive; the free ones unconstrained in sign.
TEST_F(IcnnTest, LifterEmitsEveryTensorWithTheTemplateShapes) {
    const auto batch = torch::randn({64, kDim}, kF64);
    for (const std::string m : {"lifter", "lifter-noslack", "lifter-nobody", "lifter-decoupled"}) {
        Icnn net = make_icnn(m);
        ASSERT_TRUE(net->strategy().emits_free()) << m;
        const auto w = net->weights(batch);
        const auto& cs = net->constrained_shapes();
        const auto free = net->free_parameters();
        ASSERT_EQ(w.size(), cs.size() + free.size()) << m;
        ASSERT_EQ(free.size(), 2u * 3u + 1u);  // W_0, b_0, (Wx_i, b_i) × 2, w_x
        for (size_t i = 0; i < cs.size(); ++i) {
            EXPECT_EQ(w[i].sizes().vec(), cs[i]) << m << " constrained " << i;
            EXPECT_GT(w[i].min().item<double>(), 0.0) << m;  // softplus: strictly positive
        }
        double min_free = 0;
        for (size_t j = 0; j < free.size(); ++j) {
            EXPECT_EQ(w[cs.size() + j].sizes(), free[j].sizes()) << m << " free " << j;
            min_free = std::min(min_free, w[cs.size() + j].min().item<double>());
        }
        EXPECT_LT(min_free, 0.0) << m << ": free tensors must not pass through softplus";
        // The energy with the emitted list is the energy the module computes.
        const auto x = torch::randn({5, kDim}, kF64);
        EXPECT_TRUE(torch::allclose(net->energy(x, batch), net->energy_with_weights(x, w)));
    }
    // The direct strategies emit the constrained tensors only.
    for (const std::string m : {"pgd", "softplus", "softplus-const"}) {
        Icnn net = make_icnn(m);
        EXPECT_FALSE(net->strategy().emits_free()) << m;
        EXPECT_EQ(net->weights(batch).size(), net->constrained_shapes().size()) << m;
    }
}

// The lifter's ICNN template is frozen: no gradient reaches it, the optimizer never sees it, and
// changing it changes nothing (every tensor is emitted).
TEST_F(IcnnTest, LifterTemplateIsFrozenAndReceivesNoGradient) {
    Icnn net = make_icnn("lifter");
    const auto batch = torch::randn({64, kDim}, kF64);
    const auto x = torch::randn({32, kDim}, kF64);
    net->energy(x, batch).pow(2).mean().backward();
    for (const auto& p : net->free_parameters()) {
        EXPECT_FALSE(p.requires_grad());
        EXPECT_FALSE(p.grad().defined());
    }
    int64_t trainable = 0, with_grad = 0;
    for (const auto& p : net->parameters_for_optimizer()) {
        ++trainable;
        for (const auto& f : net->free_parameters()) EXPECT_FALSE(p.is_same(f));
        if (p.grad().defined() && p.grad().abs().sum().item<double>() > 0) ++with_grad;
    }
    EXPECT_EQ(with_grad, trainable);  // body, every readout weight and bias
    const auto before = net->energy(x, batch).detach();
    {
        torch::NoGradGuard no_grad;
        for (auto& p : net->free_parameters()) p.add_(1.0);
    }
    EXPECT_TRUE(torch::equal(before, net->energy(x, batch).detach()));
    // For softplus the template's free tensors are trained.
    Icnn direct = make_icnn("softplus");
    for (const auto& p : direct->free_parameters()) EXPECT_TRUE(p.requires_grad());
}

// The reference inits (docs/methods.md §3.1–§3.3), at the preset's size (d = 1, width 128,
// 3 layers):
// lifter readouts with LibTorch's default Linear init, U(±1/√96) (sd 1/√288), slack b = −2;
// softplus θ = max(w, 10⁻⁶) with w folded normal |N(0, π/(2·128))|, so P(θ in the shoulder
// θ ≤ 0.0513) = 2Φ(0.0513/σ) − 1 ≈ 0.357; softplus-const none.
TEST_F(IcnnTest, ReferenceInitsHaveTheStatedDistributions) {
    torch::manual_seed(3);
    Icnn lifter(IcnnOptions(1).width(128).layers(3).strategy("lifter"));
    auto& strategy = dynamic_cast<liftlab::LifterPositivity&>(lifter->strategy());
    const size_t nc = strategy.constrained_count();
    std::vector<torch::Tensor> weights, free_biases;
    for (size_t i = 0; i < nc + strategy.free_shapes().size(); ++i) {
        auto& layer = strategy.readout_layer(i);
        weights.push_back(layer->weight.detach().reshape({-1}));
        if (i < nc)
            EXPECT_TRUE(torch::all(layer->bias == -2.0).item<bool>()) << "slack of " << i;
        else
            free_biases.push_back(layer->bias.detach().reshape({-1}));
    }
    const auto w = torch::cat(weights).to(torch::kFloat64);  // ~3.3 M entries
    const double bound = 1.0 / std::sqrt(96.0), sd = bound / std::sqrt(3.0);
    EXPECT_NEAR(w.mean().item<double>(), 0.0, 5 * sd / std::sqrt(double(w.numel())));
    EXPECT_NEAR(w.std().item<double>(), sd, 0.01 * sd);
    EXPECT_LE(w.abs().max().item<double>(), bound * (1 + 1e-6));  // float32 rounding
    const auto fb = torch::cat(free_biases).to(torch::kFloat64);  // 769 entries
    EXPECT_NEAR(fb.std().item<double>(), sd, 0.1 * sd);
    EXPECT_LE(fb.abs().max().item<double>(), bound * (1 + 1e-6));

    constexpr double kPi = 3.14159265358979323846;
    const double sigma = std::sqrt(kPi / (2.0 * 128));
    const double shoulder = std::log1p(std::exp(std::log(0.05 / 0.95)));  // softplus(logit .05)
    const double expected = std::erf(shoulder / sigma / std::sqrt(2.0));
    Icnn soft(IcnnOptions(1).width(128).layers(3).strategy("softplus"));
    const auto pre = soft->constrained_pre_readout(torch::zeros({1, 1}));
    std::vector<torch::Tensor> flat;
    for (const auto& t : pre) flat.push_back(t.reshape({-1}));
    const auto theta_tilde = torch::cat(flat).to(torch::kFloat64);
    const auto theta = torch::softplus(theta_tilde);
    const double n = static_cast<double>(theta.numel());
    const double in_shoulder = (torch::sigmoid(theta_tilde) <= 0.05).sum().item<double>() / n;
    EXPECT_NEAR(in_shoulder, expected, 4 * std::sqrt(expected * (1 - expected) / n) + 1e-3);
    EXPECT_GT(in_shoulder, 0.25);
    EXPECT_NEAR(theta.mean().item<double>(), sigma * std::sqrt(2 / kPi), 4 * sigma / std::sqrt(n));
    EXPECT_GE(theta.min().item<double>(), 1e-6 * (1 - 1e-3));
    Icnn constant(IcnnOptions(1).width(128).layers(3).strategy("softplus-const"));
    for (const auto& t : constant->constrained_pre_readout(torch::zeros({1, 1})))
        EXPECT_EQ((torch::sigmoid(t) <= 0.05).sum().item<int64_t>(), 0);
}

TEST_F(IcnnTest, DecoupledWithoutIndependentBatchSaysWhatToDo) {
    auto strategy = make_positivity("lifter-decoupled", {{4, 4}}, {{4, 3}}, kDim);
    try {
        strategy->weights(torch::randn({8, kDim}));
        ADD_FAILURE() << "expected std::logic_error";
    } catch (const std::logic_error& e) {
        EXPECT_TRUE(has(e.what(), "set_independent_batch")) << e.what();
    }
}

TEST_F(IcnnTest, UnknownStrategyNameListsTheValidOnes) {
    for (auto build : {+[] {
                           make_positivity("bogus", {{4, 4}}, {}, kDim);
                       },
                       +[] { Icnn(IcnnOptions(kDim).strategy("bogus")); }}) {
        try {
            build();
            ADD_FAILURE() << "expected std::invalid_argument";
        } catch (const std::invalid_argument& e) {
            const std::string msg = e.what();
            EXPECT_TRUE(has(msg, "'bogus'")) << msg;
            for (const auto& name : positivity_strategy_names()) EXPECT_TRUE(has(msg, name)) << msg;
        }
    }
}

TEST_F(IcnnTest, EnergyShapesAndBadInput) {
    Icnn net = make_icnn("softplus");
    const auto batch = torch::randn({8, kDim}, kF64);
    EXPECT_EQ(net->energy(torch::randn({5, kDim}, kF64), batch).sizes(), torch::IntArrayRef({5}));
    EXPECT_EQ(net->constrained_shapes().size(), 3u);  // Wz_1, Wz_2, w_out
    try {
        net->energy(torch::randn({5, kDim + 1}, kF64), batch);
        ADD_FAILURE() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
        EXPECT_TRUE(has(e.what(), "x must be n × 3")) << e.what();
    }
}

// σ²_Jac contracts with the slack: θ̃ = b + Θ_E h, so ∂ℓ/∂b (the readout bias's own gradient)
// equals ∂ℓ/∂θ̃ at the emitted iterate — what the trainer differentiates.
TEST_F(IcnnTest, SlackGradientEqualsThePreReadoutGradient) {
    Icnn net = make_icnn("lifter");
    auto& strategy = dynamic_cast<liftlab::LifterPositivity&>(net->strategy());
    const auto batch = torch::randn({64, kDim}, kF64);
    const auto x = torch::randn({32, kDim}, kF64);
    net->energy(x, batch).pow(2).mean().backward();
    auto pre = strategy.pre_readout(batch);
    std::vector<torch::Tensor> leaves;
    for (size_t i = 0; i < pre.size(); ++i) {
        pre[i] = pre[i].detach().requires_grad_(true);
        if (i < strategy.constrained_count()) leaves.push_back(pre[i]);
    }
    const auto loss = net->energy_with_weights(x, strategy.readout(pre)).pow(2).mean();
    const auto g = torch::autograd::grad({loss}, leaves);
    for (size_t i = 0; i < leaves.size(); ++i) {
        const auto slack_grad = strategy.readout_layer(i)->bias.grad().reshape(g[i].sizes());
        EXPECT_LT(relative_error(slack_grad, g[i]), 1e-10) << "tensor " << i;
    }
}

// Factored readouts (nn/outer_product_gradient.h, nn/readout_kernel.h): for every lifter variant,
// the collected g hᵀ equals the dense ∂ℓ/∂Θ that autograd gives the same network, and every other
// gradient (body φ, slack b, free readouts' biases) agrees — to float32 rounding, since the
// readout products sum in their own order; Θ itself then has no dense gradient.
TEST_F(IcnnTest, FactoredReadoutGradientsEqualTheDenseOnes) {
    for (const std::string name :
         {"lifter", "lifter-noslack", "lifter-nobody", "lifter-decoupled"}) {
        torch::manual_seed(11);
        Icnn dense(IcnnOptions(kDim).width(8).layers(3).strategy(name));
        torch::manual_seed(11);
        Icnn fact(IcnnOptions(kDim).width(8).layers(3).strategy(name));
        const auto factored = fact->strategy().factor_gradients();
        ASSERT_EQ(factored.size(),
                  fact->strategy().constrained_count() + fact->strategy().free_shapes().size());
        torch::manual_seed(12);
        const auto x = torch::randn({16, kDim}), x2 = torch::randn({16, kDim});
        for (Icnn* net : {&dense, &fact}) {
            (*net)->strategy().set_independent_batch(x2);
            (*net)->energy(x, x).sum().backward();
        }
        const auto pd = dense->named_parameters(), pf = fact->named_parameters();
        for (const auto& item : pd) {
            const auto& g_dense = item.value().grad();
            const auto& g_fact = pf[item.key()].grad();
            const FactoredWeight* fw = nullptr;
            for (const auto& f : factored)
                if (f.weight.unsafeGetTensorImpl() == pf[item.key()].unsafeGetTensorImpl()) fw = &f;
            if (!g_dense.defined()) continue;  // the frozen template
            if (fw) {
                EXPECT_FALSE(g_fact.defined()) << name << " " << item.key();
                ASSERT_EQ(fw->gradient->terms.size(), 1u) << name << " " << item.key();
                EXPECT_LT(relative_error(fw->gradient->dense(), g_dense, 1e-6), 1e-4)
                    << name << " " << item.key();
            } else {
                ASSERT_TRUE(g_fact.defined()) << name << " " << item.key();
                EXPECT_LT(relative_error(g_fact, g_dense, 1e-6), 1e-4) << name << " " << item.key();
            }
        }
    }
}

// The readout kernels against the products they replace: y = b + W h and Wᵀ g on a lifter-like
// skinny shape (cols not a multiple of the 8 lanes), float32 to rounding.
TEST(ReadoutKernel, MatchesTheMatrixVectorProducts) {
    torch::manual_seed(21);
    const int64_t rows = 1000, cols = 99;
    const auto w = torch::randn({rows, cols}), h = torch::randn({cols}), b = torch::randn({rows});
    const auto g = torch::randn({rows});
    auto y = torch::empty({rows}), y0 = torch::empty({rows}), gh = torch::empty({cols});
    liftlab::readout_forward(w.data_ptr<float>(), h.data_ptr<float>(), b.data_ptr<float>(),
                             y.data_ptr<float>(), rows, cols);
    liftlab::readout_forward(w.data_ptr<float>(), h.data_ptr<float>(), nullptr,
                             y0.data_ptr<float>(), rows, cols);
    liftlab::readout_backward_code(w.data_ptr<float>(), g.data_ptr<float>(), gh.data_ptr<float>(),
                                   rows, cols);
    const auto f64 = [](const torch::Tensor& t) { return t.to(torch::kFloat64); };
    EXPECT_LT(relative_error(f64(y), f64(b) + f64(w).mv(f64(h))), 1e-5);
    EXPECT_LT(relative_error(f64(y0), f64(w).mv(f64(h))), 1e-5);
    EXPECT_LT(relative_error(f64(gh), f64(w).t().mv(f64(g))), 1e-5);
}

// Whichever instruction-set clone runs, the readout kernels give the bits of the plain scalar
// loops below: the same eight partial sums combined in the same order, no contraction.
TEST(ReadoutKernel, EveryInstructionSetCloneGivesThePortableBits) {
    torch::manual_seed(22);
    const int64_t rows = 301, cols = 99;
    const auto w = torch::randn({rows, cols}), h = torch::randn({cols}), b = torch::randn({rows});
    const auto g = torch::randn({rows});
    auto y = torch::empty({rows}), gh = torch::empty({cols});
    liftlab::readout_forward(w.data_ptr<float>(), h.data_ptr<float>(), b.data_ptr<float>(),
                             y.data_ptr<float>(), rows, cols);
    liftlab::readout_backward_code(w.data_ptr<float>(), g.data_ptr<float>(), gh.data_ptr<float>(),
                                   rows, cols);
    const float* wv = w.data_ptr<float>();
    const float* hv = h.data_ptr<float>();
    auto yr = torch::empty({rows}), ghr = torch::zeros({cols});
    for (int64_t i = 0; i < rows; ++i) {
        float acc[8] = {};
        const int64_t body = cols - cols % 8;
        for (int64_t j = 0; j < body; j += 8)
            for (int l = 0; l < 8; ++l) acc[l] += wv[i * cols + j + l] * hv[j + l];
        float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
        for (int64_t j = body; j < cols; ++j) s += wv[i * cols + j] * hv[j];
        yr.data_ptr<float>()[i] = b.data_ptr<float>()[i] + s;
        for (int64_t j = 0; j < cols; ++j)
            ghr.data_ptr<float>()[j] += g.data_ptr<float>()[i] * wv[i * cols + j];
    }
    EXPECT_TRUE(torch::equal(y, yr));
    EXPECT_TRUE(torch::equal(gh, ghr));
}
