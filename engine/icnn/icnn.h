// The input-convex neural network of docs/methods.md §3.1:
//   z_1 = softplus(W_0 x + b_0),  z_{i+1} = softplus(Wz_i z_i + Wx_i x + b_i),
//   E(x) = w_outᵀ z_L + w_xᵀ x + (c/2)||x||²,  c = 0.02 by default (IcnnOptions::quadratic).
// Convex in x because Wz_i ≥ 0 and w_out ≥ 0; those come from a PositivityStrategy. The
// unconstrained tensors (W_0, b_0, Wx_i, b_i, w_x) are this module's own parameters — the
// *template*, with the reference's init (Xavier weights, zero biases) — unless the strategy emits
// them too (the lifter family), in which case the template is frozen and never used.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "icnn/positivity.h"
#include "icnn/script_icnn.h"
#include "methods/method_registry.h"

namespace liftlab {

// The parameters of `module` that require a gradient, in registration order.
std::vector<torch::Tensor> trainable_parameters(const torch::nn::Module& module);

struct IcnnOptions {
    explicit IcnnOptions(int64_t input_dim) : input_dim_(input_dim) {}
    TORCH_ARG(int64_t, input_dim);
    TORCH_ARG(int64_t, width) = 128;
    TORCH_ARG(int64_t, layers) = 3;  // number of hidden z layers L
    TORCH_ARG(std::string, strategy) = positivity_name(PositivityMap::Lifted);
    // c in the built-in formula's (c/2)||x||² (icnn.strong_convexity); kQuadratic by default.
    TORCH_ARG(double, quadratic) = 0.02;
    // The lifter family's body and pool_norm (icnn.lifter_body, icnn.lifter_pool_norm).
    TORCH_ARG(PositivityOptions, positivity) = PositivityOptions{};
    // A user's TorchScript ICNN in place of the built-in formula (width and layers unused): its
    // constrained and free parameters become the weight list; `start_from_file`: pgd and softplus
    // start from its constrained values and its free tensors are trained from their values
    // (false: re-initialised like the built-in template, from LibTorch's global generator).
    TORCH_ARG(std::shared_ptr<TorchScriptIcnn>, script) = nullptr;
    TORCH_ARG(bool, start_from_file) = true;
};

class IcnnImpl : public torch::nn::Module {
public:
    explicit IcnnImpl(const IcnnOptions& options);

    // E for each row of x (n × d) → (n), with θ emitted once for `conditioning_batch`.
    // For lifter-decoupled, set the independent batch on strategy() first.
    torch::Tensor energy(const torch::Tensor& x, const torch::Tensor& conditioning_batch);
    // E with caller-supplied weights: the constrained θ (the order of constrained_shapes()),
    // optionally followed by the free tensors (the order of free_shapes()); without them the
    // template's own free parameters are used.
    torch::Tensor energy_with_weights(const torch::Tensor& x,
                                      const std::vector<torch::Tensor>& weights);

    // The trainable parameters (without the frozen template of the lifter family).
    std::vector<torch::Tensor> parameters_for_optimizer() { return trainable_parameters(*this); }
    void after_step() { strategy_->after_step(); }
    // The strategy's weight list for `batch` (constrained θ, then the emitted free tensors for
    // the lifter family): what energy_with_weights takes.
    std::vector<torch::Tensor> weights(const torch::Tensor& batch) {
        return strategy_->weights(batch);
    }
    // Only the constrained θ (non-negative) and their pre-readout values θ̃.
    std::vector<torch::Tensor> constrained_weights(const torch::Tensor& batch) {
        auto w = strategy_->weights(batch);
        w.resize(shapes_.size());
        return w;
    }
    std::vector<torch::Tensor> constrained_pre_readout(const torch::Tensor& batch) {
        auto w = strategy_->pre_readout(batch);
        w.resize(shapes_.size());
        return w;
    }

    // Wz_1 … Wz_{L−1} (width × width), then w_out (1 × width).
    const std::vector<std::vector<int64_t>>& constrained_shapes() const { return shapes_; }
    // W_0 (width × d), b_0 (width), then Wx_i (width × d), b_i (width) for i = 1 … L−1, then
    // w_x (1 × d): the template's free parameters, in this order (a TorchScript ICNN: its
    // unconstrained parameters, in the module's order).
    const std::vector<std::vector<int64_t>>& free_shapes() const { return free_shapes_; }
    std::vector<torch::Tensor> free_parameters() const;
    // The weight list the template alone gives (strategies that do not emit the free tensors):
    // `constrained` followed by the template's free parameters.
    std::vector<torch::Tensor> with_template_free(std::vector<torch::Tensor> constrained) const;
    PositivityStrategy& strategy() { return *strategy_; }
    const IcnnOptions& options() const { return options_; }

    static constexpr double kQuadratic = 0.02;  // the default c in (c/2)||x||²
    // c of this ICNN: its strong convexity floor, ∇²E ⪰ c·I.
    double quadratic() const { return options_.quadratic(); }

private:
    void build_from_script();
    IcnnOptions options_;
    std::vector<std::vector<int64_t>> shapes_;
    std::vector<std::vector<int64_t>> free_shapes_;
    torch::nn::Linear input_layer_{nullptr};      // W_0, b_0
    std::vector<torch::nn::Linear> skip_layers_;  // Wx_i, b_i for i = 1 … L−1
    torch::Tensor w_x_;                           // 1 × d
    std::vector<torch::Tensor> script_free_;      // a TorchScript ICNN's free tensors
    std::shared_ptr<PositivityStrategy> strategy_;
};
TORCH_MODULE(Icnn);

}  // namespace liftlab
