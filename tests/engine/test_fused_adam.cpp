// FusedAdam (training/fused_adam.h) against LibTorch's Adam + clip_grad_norm_: the same update.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "training/fused_adam.h"

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

// step() returns the global gradient norm before the clip: ‖(100, 100, 100)‖ = 100√3.
TEST(FusedAdam, ReturnsTheGlobalGradientNorm) {
    auto p = std::vector<torch::Tensor>{torch::ones({3}, torch::kFloat64).requires_grad_()};
    liftlab::FusedAdam adam(p, 0.1);
    (100.0 * p[0]).sum().backward();
    EXPECT_NEAR(adam.step(1.0), 100.0 * std::sqrt(3.0), 1e-9);
    // Adam's first step moves every coordinate by lr, whatever the gradient's size.
    EXPECT_NEAR(p[0][0].item<double>(), 1.0 - 0.1, 1e-6);
}

TEST(FusedAdam, RefusesBadSettingsAndParameters) {
    auto p = std::vector<torch::Tensor>{torch::ones({2}).requires_grad_()};
    EXPECT_THROW(liftlab::FusedAdam(p, 0.0), std::invalid_argument);
    EXPECT_THROW(liftlab::FusedAdam(p, 1e-3, 1.0), std::invalid_argument);
    auto ints = std::vector<torch::Tensor>{torch::ones({2}, torch::kInt64)};
    EXPECT_THROW(liftlab::FusedAdam(ints, 1e-3), std::invalid_argument);
}
