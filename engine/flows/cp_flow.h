// The convex potential flow of docs/methods.md §6.1, on the ICNN:
//   F(x) = softplus(w1)·ICNN(x) + softplus(w0)·||x||²/2,   f = ∇F,
//   log p(x) = log N(f(x); 0, I) + log det ∇²F(x).
// Without the scales (CpFlowOptions::scales false, the reference's 2-D sweep) F = ICNN(x).
// The ICNN is convex in x for every positivity strategy and carries (c/2)||x||², so ∇²F ⪰
// (softplus(w0) + c·softplus(w1))·I (c·I without the scales, which needs c > 0) is symmetric
// positive definite: f is a bijection of ℝ^d and the log-det comes from a Cholesky factor (in 2-D
// the same number as the reference's closed form log(h₀₀h₁₁ − h₀₁²), to rounding). The Hessian is
// exact (d reverse passes through f), so this is meant for small d (≲ 32).
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

#include "icnn/icnn.h"

namespace liftlab {

struct CpFlowOptions {
    explicit CpFlowOptions(int64_t input_dim) : input_dim_(input_dim) {}
    TORCH_ARG(int64_t, input_dim);
    TORCH_ARG(int64_t, width) = 64;  // ICNN width
    TORCH_ARG(int64_t, layers) = 3;  // ICNN hidden layers
    TORCH_ARG(std::string, strategy) = positivity_name(PositivityMap::Lifted);
    // The learned softplus(w1), softplus(w0) around the ICNN (icnn.flow_scales); false: F = ICNN.
    TORCH_ARG(bool, scales) = true;
    TORCH_ARG(double, quadratic) = 0.02;  // the ICNN's c (icnn.strong_convexity)
    TORCH_ARG(PositivityOptions, positivity) = PositivityOptions{};  // the lifter's body
};

// Every method takes x of shape n × input_dim, in the dtype of the module's parameters (float32
// by default; call module->to(torch::kFloat64) for float64), and throws std::invalid_argument
// naming `x` otherwise. `constrained` is the ICNN's weight list (Icnn::weights(batch)); for
// lifter-decoupled, set the independent batch on icnn()->strategy() first.
//
// Derivatives are taken by autograd with create_graph, so transport, hessian, log_det_hessian and
// log_prob are differentiable with respect to every parameter (and to x when x requires grad).
// When autograd is disabled by the caller (torch::NoGradGuard, e.g. for evaluation), they still
// work (grad mode is switched on internally), skip the second-order graph and return detached
// tensors.
class CpFlowImpl : public torch::nn::Module {
public:
    explicit CpFlowImpl(const CpFlowOptions& options);

    // F(x) for each row → (n).
    torch::Tensor potential(const torch::Tensor& x, const std::vector<torch::Tensor>& constrained);
    // f(x) = ∇F(x) → (n × d), θ emitted once for `conditioning_batch`.
    torch::Tensor transport(const torch::Tensor& x, const torch::Tensor& conditioning_batch);
    torch::Tensor transport_with_weights(const torch::Tensor& x,
                                         const std::vector<torch::Tensor>& constrained);
    // ∇²F(x) → (n × d × d), row j = ∇ f_j.
    torch::Tensor hessian(const torch::Tensor& x, const std::vector<torch::Tensor>& constrained);
    // log det ∇²F(x) → (n), by Cholesky. Throws std::runtime_error if a Hessian is not positive
    // definite in floating point (cannot happen in exact arithmetic).
    torch::Tensor log_det_hessian(const torch::Tensor& x,
                                  const std::vector<torch::Tensor>& constrained);
    // log p(x) → (n), with θ emitted once for `conditioning_batch` (the loss batch when
    // training; a fixed reference set for evaluation, docs/methods.md §3.3).
    torch::Tensor log_prob(const torch::Tensor& x, const torch::Tensor& conditioning_batch);
    torch::Tensor log_prob_with_weights(const torch::Tensor& x,
                                        const std::vector<torch::Tensor>& constrained);

    // The trainable parameters (without the lifter's frozen ICNN template).
    std::vector<torch::Tensor> parameters_for_optimizer() { return trainable_parameters(*this); }
    // Forwarded to the ICNN's strategy (pgd projects θ ← max(θ, 0)).
    void after_step() { icnn_->after_step(); }
    std::vector<torch::Tensor> weights(const torch::Tensor& batch) { return icnn_->weights(batch); }

    // softplus(w0) and softplus(w1), both 1 at init (w = log(e − 1)); 0 and 1 without the scales.
    torch::Tensor quadratic_scale() const;
    torch::Tensor icnn_scale() const;

    Icnn& icnn() { return icnn_; }
    const CpFlowOptions& options() const { return options_; }

private:
    struct Derivatives {
        torch::Tensor x;         // the input the derivatives are taken with respect to
        torch::Tensor gradient;  // f(x), n × d
        torch::Tensor hessian;   // n × d × d, undefined unless requested
        bool create_graph = true;
    };
    void check_input(const torch::Tensor& x) const;
    Derivatives derivatives(const torch::Tensor& x, const std::vector<torch::Tensor>& constrained,
                            bool with_hessian);

    CpFlowOptions options_;
    Icnn icnn_{nullptr};
    torch::Tensor w0_;  // scalar, softplus(w0) weighs ||x||²/2 (undefined without the scales)
    torch::Tensor w1_;  // scalar, softplus(w1) weighs the ICNN (undefined without the scales)
};
TORCH_MODULE(CpFlow);

}  // namespace liftlab
