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

#include <string>
#include <vector>

#include "nn/outer_product_gradient.h"

namespace liftlab {

class StateArchive;

class FusedAdam {
public:
    FusedAdam(std::vector<torch::Tensor> params, double lr, double beta1 = 0.9,
              double beta2 = 0.999, double eps = 1e-8);

    // Parameters (already given to the constructor) whose gradients arrive factored, Σ g_k h_kᵀ
    // (nn/outer_product_gradient.h): their update forms each g_i h_j in the same pass over
    // (p, m, v), and the norm comes from the factors. Bit for bit the dense update with one term.
    void factored(const std::vector<FactoredWeight>& weights);
    // Drops every gradient, dense and factored (backward then writes fresh ones without a
    // zeroing pass).
    void zero_grad();
    // One Adam step; max_norm > 0 clips the global gradient norm first and returns that norm.
    // Without clipping the norm is not computed (one read of every gradient saved): returns 0.
    double step(double max_norm = 0.0);
    int64_t steps() const { return t_; }
    // A new step size for the following steps (a schedule); throws unless lr > 0.
    void set_lr(double lr);
    double lr() const { return lr_; }
    // Moments, step count and step size (run --resume).
    void save_state(StateArchive& a, const std::string& prefix) const;
    void load_state(const StateArchive& a, const std::string& prefix);

private:
    void update_factored(size_t i, const struct AdamCoefficients& k);

    std::vector<torch::Tensor> params_, m_, v_;
    std::vector<std::shared_ptr<OuterProductGradient>> factored_;  // per parameter, or null
    double lr_, beta1_, beta2_, eps_;
    int64_t t_ = 0;
};

// FusedAdam behind torch::optim::Optimizer, for the trainers that hold a torch optimizer
// (make_optimizer's "adam" on CPU parameters): zero_grad and param_groups are torch's, step() is
// the one fused pass without clipping. The learning rate is read from the first param group's
// AdamOptions at every step, so a schedule that sets it there (as for torch's Adam) applies.
class FusedAdamOptimizer : public torch::optim::Optimizer {
public:
    FusedAdamOptimizer(std::vector<torch::Tensor> params, double lr);
    torch::Tensor step(LossClosure closure = nullptr) override;
    FusedAdam& fused() { return fused_; }

private:
    FusedAdam fused_;
};

}  // namespace liftlab
