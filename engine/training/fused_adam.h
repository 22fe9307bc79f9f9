#pragma once
// Adam in one pass over each parameter (issue 12): the same update as torch::optim::Adam
// (no weight decay, no AMSGrad), with an optional global gradient-norm clip folded into the same
// pass. LibTorch's Adam walks every tensor seven to nine times per step (two moments, sqrt,
// divide, add, addcdiv) and clip_grad_norm_ twice more; for the lifter's ≈ 3.2 M readout
// parameters those passes were most of the step. Here: one read of the gradient for the norm,
// then one read-modify-write of (p, m, v) per element.
//
//   m ← β₁m + (1−β₁)·c·g,   v ← β₂v + (1−β₂)·(c·g)²,
//   p ← p − (lr / (1−β₁ᵗ)) · m / (√v / √(1−β₂ᵗ) + ε),
// with c = min(1, max_norm / (‖g‖ + 1e-6)) (c = 1 without clipping), the same rule and ε as
// torch::nn::utils::clip_grad_norm_. A parameter without a gradient is left alone, as torch's
// Adam does.
#include <torch/torch.h>

#include <vector>

namespace liftlab {

class FusedAdam {
public:
    FusedAdam(std::vector<torch::Tensor> params, double lr, double beta1 = 0.9,
              double beta2 = 0.999, double eps = 1e-8);

    // Drops every gradient (backward then writes fresh ones without a zeroing pass).
    void zero_grad();
    // One Adam step; max_norm > 0 clips the global gradient norm first. Returns that norm.
    double step(double max_norm = 0.0);
    int64_t steps() const { return t_; }

private:
    std::vector<torch::Tensor> params_, m_, v_;
    double lr_, beta1_, beta2_, eps_;
    int64_t t_ = 0;
};

}  // namespace liftlab
