// CP-Flow's published toy recipe (engine/flows/published_cp_flow.h) and its trainer: the
// density integrates to 1 on a 2-D grid for each positivity construction (which checks the
// closed-form 2×2 log-det, the ActNorm log-det and the prior together), a row's log p does not
// depend on the rest of its batch, softplus and pgd start from the same network,
// the jet pass equals autograd's double backward (log p and parameter gradients),
// the ActNorm init standardises the first batch, pgd stays non-negative, a few steps of the
// published schedule reduce the NLL, and bad options are named. Recipe B's stack of blocks
// (ActNorm between blocks, w0 frozen, standard-normal prior, each lifter block conditioned on its
// own input) passes the same density, jet and schedule checks. Small networks keep it fast.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "data/dataset.h"
#include "ebm/toy2d.h"
#include "flows/published_cp_flow.h"
#include "icnn/positivity.h"
#include "spec/experiment_spec.h"
#include "test_helpers.h"
#include "training/published_cpflow_trainer.h"

namespace {

using liftlab::PublishedCpFlow;
using liftlab::PublishedCpFlowOptions;
using liftlab::test::has;

// A narrow cloud (sd 0.3): after the ActNorm and the e² prior the model's density has sd ≈ 0.8,
// so a [−7, 7]² grid holds all but a negligible part of its mass.
torch::Tensor cloud(int64_t n, uint64_t seed) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    return 0.3 * torch::randn({n, 2}, gen, torch::kFloat64) + 0.1;
}

PublishedCpFlow small_flow(const std::string& strategy, uint64_t seed = 3, bool fanin = false) {
    PublishedCpFlow flow(PublishedCpFlowOptions(2)
                             .hidden(8)
                             .depth(3)
                             .strategy(strategy)
                             .seed(seed)
                             .readout_fanin_scale(fanin));
    flow->initialise(cloud(256, 1));
    return flow;
}

// Recipe B's layout at test size: `blocks` convex blocks with ActNorms between them.
PublishedCpFlow stacked_flow(const std::string& strategy, uint64_t seed = 3, int64_t blocks = 3) {
    PublishedCpFlow flow(
        PublishedCpFlowOptions(2).hidden(8).depth(3).blocks(blocks).strategy(strategy).seed(seed));
    flow->initialise(cloud(256, 1));
    return flow;
}

// The density integrates to 1 on a [−7, 7]² grid of `points` nodes per axis: this checks the
// closed-form 2×2 log-det, every ActNorm's log-det and the prior together. The clouds' model
// densities have sd ≈ 0.3–0.8, so the trapezoid error on a smooth, fast-decaying density and
// the tail mass outside ±7 are both far below 2e-3; a wrong log-det or prior term moves the mass
// by O(1).
void expect_density_integrates_to_one(PublishedCpFlow flow, int64_t points) {
    const auto raw = flow->constrained(cloud(128, 2));
    const double lo = -7.0, hi = 7.0, h = (hi - lo) / static_cast<double>(points - 1);
    const auto axis = torch::linspace(lo, hi, points, torch::kFloat64);
    const auto mesh = torch::meshgrid({axis, axis}, "ij");
    const auto pts = torch::stack({mesh[0].reshape(-1), mesh[1].reshape(-1)}, 1);
    const auto lp = flow->log_prob(pts, raw, /*create_graph=*/false);
    EXPECT_EQ(lp.nonpositive_dets, 0);
    const double mass = lp.log_p.detach().exp().sum().item<double>() * h * h;
    EXPECT_NEAR(mass, 1.0, 2e-3);
}

// log p carried forward as 2-jets against upstream's double backward: the same log p and the
// same gradient of the mean NLL for every trained tensor (lifter: its bodies and readouts too),
// at a start with trained-looking, non-trivial ActNorm scales. Through several blocks the
// gradient also reaches each block through the later blocks' inputs.
void expect_jet_pass_equals_autograd(PublishedCpFlow flow) {
    {
        torch::NoGradGuard no_grad;
        auto gen = at::make_generator<at::CPUGeneratorImpl>(9);
        for (auto& p : flow->parameters()) p.add_(0.3 * torch::randn(p.sizes(), gen, p.options()));
        if (flow->positivity() == liftlab::PositivityMap::Projected) flow->project();
    }
    const auto x = cloud(48, 8) * 2.0;
    const auto params = flow->trainable_parameters();
    const auto nll_grads = [&](bool jets) {
        const auto raw = flow->constrained(x);
        const auto lp =
            jets ? flow->log_prob(x, raw, true) : flow->log_prob_by_autograd(x, raw, true);
        return std::make_pair(lp.log_p.detach(), torch::autograd::grad({-lp.log_p.mean()}, params));
    };
    const auto [lp_jet, g_jet] = nll_grads(true);
    const auto [lp_ref, g_ref] = nll_grads(false);
    EXPECT_LT((lp_jet - lp_ref).abs().max().item<double>(), 1e-10);
    ASSERT_EQ(g_jet.size(), g_ref.size());
    for (size_t i = 0; i < g_jet.size(); ++i) {
        const double scale = g_ref[i].abs().max().item<double>() + 1e-12;
        // Float64 round-off through ~20 ops per layer: 1e-9 relative is far above it and far
        // below any missing term (a dropped σ″ or ActNorm factor moves gradients by O(1)).
        EXPECT_LT((g_jet[i] - g_ref[i]).abs().max().item<double>() / scale, 1e-9)
            << "parameter " << i;
    }
    // Evaluation (no graph) gives the same numbers.
    const auto eval = flow->log_prob(x, flow->constrained(x), false).log_p;
    EXPECT_FALSE(eval.requires_grad());
    EXPECT_LT((eval - lp_ref).abs().max().item<double>(), 1e-10);
}

class PublishedCpFlowStrategy : public ::testing::TestWithParam<std::string> {};

TEST_P(PublishedCpFlowStrategy, DensityIntegratesToOneOnATwoDGrid) {
    expect_density_integrates_to_one(small_flow(GetParam()), 351);
}

TEST_P(PublishedCpFlowStrategy, LogProbOfARowDoesNotDependOnTheRestOfTheBatch) {
    // The Hessian rows come from gradients of batch sums: any cross-row leak would show here.
    auto flow = small_flow(GetParam());
    const auto raw = flow->constrained(cloud(128, 2));
    const auto x = cloud(64, 4);
    const auto all = flow->log_prob(x, raw, false).log_p;
    const auto part = flow->log_prob(x.narrow(0, 10, 5), raw, false).log_p;
    EXPECT_LT((all.narrow(0, 10, 5) - part).abs().max().item<double>(), 1e-12);
}

TEST_P(PublishedCpFlowStrategy, JetPassEqualsAutogradsHessianAndItsParameterGradients) {
    expect_jet_pass_equals_autograd(small_flow(GetParam(), 7));
}

INSTANTIATE_TEST_SUITE_P(Strategies, PublishedCpFlowStrategy,
                         ::testing::Values("softplus", "pgd", "lifter"));

class StackedCpFlowStrategy : public ::testing::TestWithParam<std::string> {};

TEST_P(StackedCpFlowStrategy, DensityIntegratesToOneOnATwoDGrid) {
    // Three blocks: the log-dets of four ActNorms and three Hessians and the N(0, I) prior; 201
    // nodes (h = 0.07) are plenty for the trapezoid rule on this smooth density.
    expect_density_integrates_to_one(stacked_flow(GetParam()), 201);
}

TEST_P(StackedCpFlowStrategy, JetPassEqualsAutogradsHessianAndItsParameterGradients) {
    expect_jet_pass_equals_autograd(stacked_flow(GetParam(), 7));
}

TEST_P(StackedCpFlowStrategy, TrainingsSelfConditionedPassEqualsConditioningOnTheSameBatch) {
    // log_prob with no W̃ given (the training step's call) conditions every lifter block on the
    // scored batch as it enters that block: the same as constrained() of that batch.
    auto flow = stacked_flow(GetParam(), 4);
    const auto x = cloud(64, 13) * 1.5;
    const auto own = flow->log_prob(x, {}, false).log_p;
    const auto given = flow->log_prob(x, flow->constrained(x), false).log_p;
    EXPECT_LT((own - given).abs().max().item<double>(), 1e-12) << GetParam();
    if (GetParam() == "lifter") {
        // and not on some other batch's weights
        const auto other = flow->log_prob(x, flow->constrained(cloud(64, 14)), false).log_p;
        EXPECT_GT((own - other).abs().max().item<double>(), 1e-6);
    }
}

INSTANTIATE_TEST_SUITE_P(Strategies, StackedCpFlowStrategy,
                         ::testing::Values("softplus", "pgd", "lifter"));

TEST(PublishedCpFlow, RecipeBHasAnActNormAfterEveryBlockAFrozenW0AndAStandardPrior) {
    auto one = small_flow("softplus", 2);
    auto three = stacked_flow("softplus", 2);
    auto p1 = one->named_parameters();
    auto p3 = three->named_parameters();
    EXPECT_TRUE(p1["w0"].requires_grad());  // upstream: trainable_w0 with one block only
    EXPECT_FALSE(p1.contains("actnorm1_b"));
    for (const std::string name : {"w0", "blk1_w0", "blk2_w0"})
        EXPECT_FALSE(p3[name].requires_grad()) << name;
    for (const std::string name : {"actnorm1_b", "actnorm2_logs", "actnorm3_b"})
        EXPECT_TRUE(p3.contains(name) && p3[name].requires_grad()) << name;
    EXPECT_FALSE(p3.contains("actnorm4_b"));
    // The priming pass standardised every ActNorm's output on its batch: the inputs of blocks 2
    // and 3 and the last output (what the prior scores).
    const auto inputs = three->block_inputs(cloud(256, 1));
    ASSERT_EQ(inputs.size(), 4u);
    for (size_t k = 0; k < inputs.size(); ++k) {
        EXPECT_LT(inputs[k].mean(0).abs().max().item<double>(), 1e-10) << k;
        EXPECT_LT((inputs[k].pow(2).mean(0).sqrt() - 1).abs().max().item<double>(), 2e-3) << k;
    }
    // plogv: upstream's rule gives 0 (N(0, I)) with several blocks and 2 with one.
    const auto x = cloud(32, 3);
    const auto with_plogv = [&](int64_t blocks, double plogv) {
        PublishedCpFlow f(
            PublishedCpFlowOptions(2).hidden(8).depth(3).blocks(blocks).seed(2).prior_log_var(
                plogv));
        f->initialise(cloud(256, 1));
        return f->log_prob(x, {}, false).log_p;
    };
    EXPECT_TRUE(torch::equal(three->log_prob(x, {}, false).log_p, with_plogv(3, 0.0)));
    EXPECT_FALSE(torch::equal(three->log_prob(x, {}, false).log_p, with_plogv(3, 2.0)));
    EXPECT_TRUE(torch::equal(one->log_prob(x, {}, false).log_p, with_plogv(1, 2.0)));
}

TEST(PublishedCpFlow, EachLifterBlockIsConditionedOnItsOwnInput) {
    // Block 2's W̃ come from its own body applied to the conditioning batch as it enters block 2
    // (after block 1 and the ActNorm between them), not to the raw rows.
    auto flow = stacked_flow("lifter", 6);
    const auto x = cloud(40, 12);
    auto p = flow->named_parameters();
    auto h = flow->block_inputs(x)[1];
    for (int i = 0; i < 3; ++i) {
        const auto w = p["blk1_body_w" + std::to_string(i)];
        const auto b = p["blk1_body_b" + std::to_string(i)];
        h = torch::relu(h.matmul(w.t()) + b);
    }
    const auto pooled = liftlab::pool_norm(h.mean(0));
    const auto expected =
        (p["blk1_readout_w0"].matmul(pooled) + p["blk1_readout_b0"]).reshape({4, 8});
    const auto emitted = flow->constrained(x);
    ASSERT_EQ(emitted.size(), 9u);  // 3 blocks × (two hidden layers' W̃ + the output's)
    EXPECT_LT((emitted[3] - expected).abs().max().item<double>(), 1e-12);
}

TEST(PublishedCpFlow, SoftplusAndPgdStartFromTheSameNetwork) {
    auto a = small_flow("softplus", 11);
    auto b = small_flow("pgd", 11);
    const auto x = cloud(32, 5);
    const auto la = a->log_prob(x, a->constrained(x), false).log_p;
    const auto lb = b->log_prob(x, b->constrained(x), false).log_p;
    EXPECT_LT((la - lb).abs().max().item<double>(), 1e-10);
}

TEST(PublishedCpFlow, LifterEmitsThroughTheReferencesPoolNorm) {
    // W̃ = Θ h + b with h the body's mean-pooled output standardised as the reference's
    // pool_norm: (h − mean) / (std + 1e-5), torch's default (unbiased) std, ε outside the root.
    auto flow = small_flow("lifter", 5);
    const auto x = cloud(40, 12);
    auto p = flow->named_parameters();
    auto h = (x + p["actnorm_b"]) * (torch::exp(p["actnorm_logs"]) + 0.001);
    for (int i = 0; i < 3; ++i) {
        const auto w = p["body_w" + std::to_string(i)], b = p["body_b" + std::to_string(i)];
        h = torch::relu(h.matmul(w.t()) + b);
    }
    auto pooled = h.mean(0);
    const auto centred = pooled - pooled.mean();
    const double sd = std::sqrt((centred * centred).sum().item<double>() / (pooled.numel() - 1));
    pooled = centred / (sd + 1e-5);
    const auto expected = (p["readout_w0"].matmul(pooled) + p["readout_b0"]).reshape({4, 8});
    const auto emitted = flow->constrained(x)[0];
    EXPECT_LT((emitted - expected).abs().max().item<double>(), 1e-12);
    // The 1-D helper itself on a vector whose statistics are known: mean 2.5, sd √(5/3).
    const auto v = liftlab::pool_norm(torch::tensor({1.0, 2.0, 3.0, 4.0}, torch::kFloat64));
    EXPECT_NEAR(v[3].item<double>(), 1.5 / (std::sqrt(5.0 / 3.0) + 1e-5), 1e-14);
}

TEST(PublishedCpFlow, FaninReadoutDividesByTheCodeWidthAndStartsAtUnitGaussianWeights) {
    // The reference's readout_fanin_scale: W̃ = (Θ_E h)/d_h + b, Θ_E ~ N(0, 1), d_h = 96.
    auto flow = small_flow("lifter", 5, /*fanin=*/true);
    auto plain = small_flow("lifter", 5);
    const auto x = cloud(40, 12);
    auto p = flow->named_parameters();
    const auto theta = p["readout_w0"];  // 32 × 96: the sample sd is 1 ± 0.013
    EXPECT_NEAR(theta.std().item<double>(), 1.0, 0.06);
    EXPECT_NEAR(theta.mean().item<double>(), 0.0, 0.06);
    // Every parameter drawn before the readouts is the default lifter's, at the same seed.
    EXPECT_TRUE(torch::equal(p["body_w2"], plain->named_parameters()["body_w2"]));
    auto h = (x + p["actnorm_b"]) * (torch::exp(p["actnorm_logs"]) + 0.001);
    for (int i = 0; i < 3; ++i) {
        const auto w = p["body_w" + std::to_string(i)], b = p["body_b" + std::to_string(i)];
        h = torch::relu(h.matmul(w.t()) + b);
    }
    const auto pooled = liftlab::pool_norm(h.mean(0));
    const auto expected = (theta.matmul(pooled) / 96.0 + p["readout_b0"]).reshape({4, 8});
    EXPECT_LT((flow->constrained(x)[0] - expected).abs().max().item<double>(), 1e-12);
}

TEST(PublishedCpFlow, ActNormInitStandardisesTheFirstBatch) {
    PublishedCpFlow flow(PublishedCpFlowOptions(2).hidden(8).depth(3).seed(1));
    const auto x = cloud(512, 6) * 3.0 + 2.0;
    flow->initialise(x);
    const auto params = flow->named_parameters();
    const auto b = params["actnorm_b"];
    const auto s = torch::exp(params["actnorm_logs"]) + 0.001;
    const auto y = (x + b) * s;
    EXPECT_LT(y.mean(0).abs().max().item<double>(), 1e-10);
    // sd 1 up to the +0.001 of s and the 1e-6 of the init.
    EXPECT_LT((y.pow(2).mean(0).sqrt() - 1).abs().max().item<double>(), 2e-3);
}

// A few steps of the published schedule (lr halved every 20) on a small network of `blocks`
// blocks reduce every strategy's test NLL, keep every determinant positive and pgd non-negative.
void expect_schedule_reduces_the_nll(int blocks, int steps) {
    liftlab::ExperimentSpec spec;
    spec.task.kind = "cpflow-toy";
    spec.task.target = "8gaussians";
    spec.task.n_train = 2048;
    spec.task.n_test = 512;
    spec.icnn.architecture = "cpflow-published";
    spec.icnn.width = 8;
    spec.icnn.layers = 3;
    spec.icnn.blocks = blocks;
    spec.icnn.grad_clip = 0;
    spec.optimizer.lr = 5e-3;
    spec.optimizer.lr_step_every = 20;
    spec.batch_size = 128;
    const auto data = liftlab::make_dataset(spec.task);
    for (const std::string name : {"softplus", "pgd", "lifter"}) {
        liftlab::MethodSpec method;
        method.name = name;
        liftlab::PublishedCpFlowTrainer trainer(spec, method, data, /*seed=*/0);
        const double before = trainer.evaluate_test().at("test_loss");
        for (int i = 0; i < steps; ++i) trainer.step();
        const auto after = trainer.evaluate_test();
        EXPECT_LT(after.at("test_loss"), before - 0.05) << name << ", " << blocks << " block(s)";
        EXPECT_EQ(after.at("nonpositive_dets"), 0.0) << name;
        EXPECT_TRUE(trainer.parameters_finite()) << name;
        if (name == "pgd")
            for (const auto& r : trainer.flow()->constrained(data.x_train))
                EXPECT_GE(r.min().item<double>(), 0.0);
    }
}

TEST(PublishedCpFlow, PublishedScheduleReducesTheNllAndPgdStaysNonNegative) {
    expect_schedule_reduces_the_nll(/*blocks=*/1, /*steps=*/60);
}

TEST(PublishedCpFlow, StackedScheduleReducesTheNll) {
    expect_schedule_reduces_the_nll(/*blocks=*/2, /*steps=*/40);
}

TEST(PublishedCpFlow, BadOptionsAreNamed) {
    const auto expect_invalid = [](auto f, const std::string& needle) {
        liftlab::test::expect_invalid_argument(f, needle);
    };
    expect_invalid([] { PublishedCpFlow f(PublishedCpFlowOptions(3)); }, "dim must be 2");
    expect_invalid([] { PublishedCpFlow(PublishedCpFlowOptions(2).hidden(7)); }, "even");
    expect_invalid([] { PublishedCpFlow(PublishedCpFlowOptions(2).blocks(0)); }, "blocks");
    // W̃ for one block handed to a stack of three: named, not read out of range.
    expect_invalid(
        [] {
            auto three = stacked_flow("softplus");
            three->log_prob(cloud(4, 1), small_flow("softplus")->constrained(cloud(4, 1)), false);
        },
        "constrained tensors");
    expect_invalid([] { PublishedCpFlow(PublishedCpFlowOptions(2).strategy("lifter-nobody")); },
                   "lifter-nobody");
    expect_invalid(
        [] {
            PublishedCpFlow f(PublishedCpFlowOptions(2).hidden(4).depth(2));
            f->log_prob(torch::zeros({2, 2}), f->constrained(torch::zeros({2, 2})), false);
        },
        "initialise");
}

}  // namespace
