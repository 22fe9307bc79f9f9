// FusedAdam (training/fused_adam.h) against LibTorch's Adam + clip_grad_norm_: the same update.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "training/adam_kernel.h"
#include "training/fused_adam.h"
#include "training/optimizer_factory.h"

namespace {

// A least-squares loss on two parameter tensors, scaled so the global-norm clip engages.
torch::Tensor loss_of(const std::vector<torch::Tensor>& p, const torch::Tensor& a,
                      const torch::Tensor& y, double scale) {
    return scale * (torch::matmul(a, p[0]).squeeze(1) + p[1].sum() - y).pow(2).mean();
}

std::vector<torch::Tensor> fresh_parameters(torch::Dtype dtype) {
    torch::manual_seed(3);
    return {torch::randn({16, 1}, dtype).requires_grad_(),
            torch::randn({5}, dtype).requires_grad_()};
}

// k steps of both optimizers from the same start; the largest |difference| of the parameters.
double max_difference(torch::Dtype dtype, double max_norm, double scale, int k) {
    torch::manual_seed(1);
    const auto a = torch::randn({64, 16}, dtype), y = torch::randn({64}, dtype);
    auto ours = fresh_parameters(dtype), theirs = fresh_parameters(dtype);
    liftlab::FusedAdam fused(ours, 1e-2);
    torch::optim::Adam adam(theirs, torch::optim::AdamOptions(1e-2));
    for (int i = 0; i < k; ++i) {
        fused.zero_grad();
        loss_of(ours, a, y, scale).backward();
        fused.step(max_norm);
        adam.zero_grad();
        loss_of(theirs, a, y, scale).backward();
        if (max_norm > 0) torch::nn::utils::clip_grad_norm_(theirs, max_norm);
        adam.step();
    }
    EXPECT_EQ(fused.steps(), k);
    double d = 0;
    for (size_t i = 0; i < ours.size(); ++i)
        d = std::max(d, (ours[i] - theirs[i]).abs().max().item<double>());
    return d;
}

}  // namespace

// float64: the same arithmetic up to rounding order (tolerance 1e-12 after 50 steps of lr 1e-2).
TEST(FusedAdam, MatchesTorchAdamInDoublePrecision) {
    EXPECT_LT(max_difference(torch::kFloat64, 0.0, 1.0, 50), 1e-12);
}

// With the clip engaged (gradient norms ≫ 1 at scale 100): still torch's Adam after
// clip_grad_norm_(1.0), to 1e-12 in float64 and 1e-5 in float32 over 50 steps.
TEST(FusedAdam, FoldsTheGlobalNormClipIntoTheStep) {
    EXPECT_LT(max_difference(torch::kFloat64, 1.0, 100.0, 50), 1e-12);
    EXPECT_LT(max_difference(torch::kFloat32, 1.0, 100.0, 50), 1e-5);
}

// step(max_norm > 0) returns the global gradient norm before the clip: ‖(100, 100, 100)‖ = 100√3.
TEST(FusedAdam, ReturnsTheGlobalGradientNorm) {
    auto p = std::vector<torch::Tensor>{torch::ones({3}, torch::kFloat64).requires_grad_()};
    liftlab::FusedAdam adam(p, 0.1);
    (100.0 * p[0]).sum().backward();
    EXPECT_NEAR(adam.step(1.0), 100.0 * std::sqrt(3.0), 1e-9);
    // Adam's first step moves every coordinate by lr, whatever the gradient's size.
    EXPECT_NEAR(p[0][0].item<double>(), 1.0 - 0.1, 1e-6);
    // Without clipping the norm is not computed.
    adam.zero_grad();
    (100.0 * p[0]).sum().backward();
    EXPECT_EQ(adam.step(0.0), 0.0);
}

TEST(FusedAdam, RefusesBadSettingsAndParameters) {
    auto p = std::vector<torch::Tensor>{torch::ones({2}).requires_grad_()};
    EXPECT_THROW(liftlab::FusedAdam(p, 0.0), std::invalid_argument);
    EXPECT_THROW(liftlab::FusedAdam(p, 1e-3, 1.0), std::invalid_argument);
    auto ints = std::vector<torch::Tensor>{torch::ones({2}, torch::kInt64)};
    EXPECT_THROW(liftlab::FusedAdam(ints, 1e-3), std::invalid_argument);
}

// ---- factored (outer-product) gradients -------------------------------------------------------

// ‖Σ g_k h_kᵀ‖_F² from the factors equals the dense matrix's.
TEST(FactoredGradient, NormFromTheFactorsEqualsTheDenseNorm) {
    torch::manual_seed(4);
    liftlab::OuterProductGradient grad;
    for (int k = 0; k < 3; ++k)
        grad.terms.emplace_back(torch::randn({7}, torch::kFloat64),
                                torch::randn({5}, torch::kFloat64));
    const double dense = grad.dense().pow(2).sum().item<double>();
    EXPECT_NEAR(grad.squared_norm(), dense, 1e-12 * dense);
}

// One term, no clip: the factored update is the dense update bit for bit (each gradient entry
// is the same single product g_i h_j); with the clip engaged and with two terms, within float
// rounding of the norm and the sum. float32, as the lifter trains.
TEST(FactoredGradient, AdamStepEqualsTheDenseStep) {
    for (const double max_norm : {0.0, 1e-3}) {
        for (const int terms : {1, 2}) {
            torch::manual_seed(5);
            const auto w0 = torch::randn({33, 12});
            auto dense_w = w0.clone().requires_grad_(), fact_w = w0.clone().requires_grad_();
            liftlab::FusedAdam dense({dense_w}, 1e-2), fact({fact_w}, 1e-2);
            auto slot = std::make_shared<liftlab::OuterProductGradient>();
            fact.factored({{fact_w, slot}});
            for (int step = 0; step < 20; ++step) {
                dense.zero_grad();
                fact.zero_grad();
                torch::Tensor g_dense;
                for (int k = 0; k < terms; ++k) {
                    const auto g = torch::randn({33}), h = torch::randn({12});
                    slot->terms.emplace_back(g, h);
                    const auto outer = torch::outer(g, h);
                    g_dense = g_dense.defined() ? g_dense + outer : outer;
                }
                dense_w.mutable_grad() = g_dense;
                const double n_dense = dense.step(max_norm), n_fact = fact.step(max_norm);
                EXPECT_NEAR(n_fact, n_dense, 1e-5 * n_dense);
            }
            const auto diff = (dense_w - fact_w).abs().max().item<double>();
            if (max_norm == 0 && terms == 1)
                EXPECT_TRUE(torch::equal(dense_w, fact_w)) << "max |Δ| " << diff;
            else
                EXPECT_LT(diff, 1e-5) << "clip " << max_norm << ", terms " << terms;
        }
    }
}

TEST(FactoredGradient, RefusesAParameterItDoesNotTrain) {
    auto w = torch::zeros({3, 2}).requires_grad_(), other = torch::zeros({3, 2});
    liftlab::FusedAdam adam({w}, 1e-2);
    EXPECT_THROW(adam.factored({{other, std::make_shared<liftlab::OuterProductGradient>()}}),
                 std::invalid_argument);
}

// make_optimizer's adam on CPU parameters is FusedAdam behind torch's Optimizer interface: the
// same trajectory as torch::optim::Adam (float64, 1e-12), zero_grad and param_groups included.
TEST(FusedAdam, OptimizerFaceMatchesTorchAdam) {
    torch::manual_seed(1);
    const auto a = torch::randn({64, 16}, torch::kFloat64), y = torch::randn({64}, torch::kFloat64);
    auto ours = fresh_parameters(torch::kFloat64), theirs = fresh_parameters(torch::kFloat64);
    auto fused = liftlab::make_optimizer("adam", 1e-2, 0.0, ours);
    ASSERT_NE(dynamic_cast<liftlab::FusedAdamOptimizer*>(fused.get()), nullptr);
    EXPECT_EQ(fused->param_groups().front().params().size(), ours.size());
    torch::optim::Adam adam(theirs, torch::optim::AdamOptions(1e-2));
    const auto set_lr = [](torch::optim::Optimizer& o, double lr) {
        for (auto& group : o.param_groups())
            static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
    };
    for (int i = 0; i < 30; ++i) {
        if (i == 15) {  // a schedule writes the lr into the param groups, as for torch's Adam
            set_lr(*fused, 2.5e-3);
            set_lr(adam, 2.5e-3);
        }
        fused->zero_grad();
        loss_of(ours, a, y, 1.0).backward();
        fused->step();
        adam.zero_grad();
        loss_of(theirs, a, y, 1.0).backward();
        adam.step();
    }
    for (size_t i = 0; i < ours.size(); ++i)
        EXPECT_LT((ours[i] - theirs[i]).abs().max().item<double>(), 1e-12);
    // Parameters FusedAdam cannot take (not contiguous) get LibTorch's Adam.
    auto strided = torch::randn({4, 4}, torch::kFloat64).t().requires_grad_();
    auto fallback = liftlab::make_optimizer("adam", 1e-2, 0.0, {strided});
    EXPECT_NE(dynamic_cast<torch::optim::Adam*>(fallback.get()), nullptr);
}

// The Adam kernel runs whichever instruction-set clone the processor allows (AVX-512, AVX2 or
// the portable one). Each is compiled without contraction, so each must give exactly the bits
// of the plain scalar update below (no fused multiply–add: this file's baseline target has
// none): bit-for-bit, float32, with a tail that no vector width divides.
TEST(AdamKernel, EveryInstructionSetCloneGivesThePortableBits) {
    torch::manual_seed(5);
    liftlab::AdamCoefficients k;
    k.clip = 0.7;
    k.step_size = 1e-3 / (1 - 0.9 * 0.9);
    k.inv_sqrt_bc2 = 1 / std::sqrt(1 - 0.999 * 0.999);
    const float c = static_cast<float>(k.clip), b1 = 0.9f, b2 = 0.999f,
                step = static_cast<float>(k.step_size), inv = static_cast<float>(k.inv_sqrt_bc2),
                eps = 1e-8f, a1 = 1.0f - b1, a2 = 1.0f - b2;
    const auto reference = [&](float& p, float& m, float& v, float g) {
        const float gc = g * c;
        const float mi = m * b1 + a1 * gc;
        const float vi = v * b2 + a2 * gc * gc;
        m = mi;
        v = vi;
        p -= step * (mi / (std::sqrt(vi) * inv + eps));
    };
    const int64_t rows = 37, cols = 99, n = rows * cols;
    const auto p0 = torch::randn({n}), m0 = 0.1 * torch::randn({n}), v0 = torch::rand({n});
    const auto g = torch::randn({n}), gr = torch::randn({2 * rows}), hc = torch::randn({2 * cols});
    // Dense gradient.
    auto p = p0.clone(), m = m0.clone(), v = v0.clone();
    liftlab::adam_update(p.data_ptr<float>(), m.data_ptr<float>(), v.data_ptr<float>(),
                         g.data_ptr<float>(), n, k);
    auto pr = p0.clone(), mr = m0.clone(), vr = v0.clone();
    for (int64_t i = 0; i < n; ++i)
        reference(pr.data_ptr<float>()[i], mr.data_ptr<float>()[i], vr.data_ptr<float>()[i],
                  g.data_ptr<float>()[i]);
    EXPECT_TRUE(torch::equal(p, pr) && torch::equal(m, mr) && torch::equal(v, vr));
    // Outer-product gradients, one term (the lifter's case) and two.
    for (const int64_t terms : {1, 2}) {
        auto po = p0.clone(), mo = m0.clone(), vo = v0.clone();
        liftlab::adam_update_outer(po.data_ptr<float>(), mo.data_ptr<float>(), vo.data_ptr<float>(),
                                   rows, cols, gr.data_ptr<float>(), hc.data_ptr<float>(), terms,
                                   k);
        auto pq = p0.clone(), mq = m0.clone(), vq = v0.clone();
        const float* gv = gr.data_ptr<float>();
        const float* hv = hc.data_ptr<float>();
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j) {
                float gij = gv[i] * hv[j];
                if (terms == 2) gij += gv[rows + i] * hv[cols + j];
                const int64_t e = i * cols + j;
                reference(pq.data_ptr<float>()[e], mq.data_ptr<float>()[e], vq.data_ptr<float>()[e],
                          gij);
            }
        EXPECT_TRUE(torch::equal(po, pq) && torch::equal(mo, mq) && torch::equal(vo, vq))
            << terms << " term(s)";
    }
}
