// One method on one seed: backbone, last layer and optimizer, stepped by the runner.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>

#include "data/batch_sampler.h"
#include "data/dataset.h"
#include "nn/mlp_backbone.h"
#include "spec/experiment_spec.h"

namespace liftlab {

class MethodTrainer {
public:
    MethodTrainer(const ExperimentSpec& spec, const MethodSpec& method, const Dataset& data,
                  std::uint64_t seed);

    // One optimisation step on the next mini-batch; returns that batch's mean squared error.
    double step();
    // Mean squared error over a whole split, in chunks, without gradients.
    double evaluate(const torch::Tensor& x, const torch::Tensor& y);
    bool parameters_finite();

    const MethodSpec& method() const { return method_; }
    bool closed_form() const { return closed_form_; }
    double step_seconds() const { return step_seconds_; }
    double solve_seconds() const { return solve_seconds_; }

    // For tests and diagnostics: the current last layer as (d+1) × k, bias in the last row.
    torch::Tensor last_layer() const;
    MlpBackbone backbone() const { return backbone_; }

private:
    torch::Tensor predict(const torch::Tensor& features) const;
    double gradient_step(const torch::Tensor& xb, const torch::Tensor& yb);
    double closed_form_step(const torch::Tensor& xb, const torch::Tensor& yb);
    void solve_last_layer(const torch::Tensor& features, const torch::Tensor& yb);

    MethodSpec method_;
    const Dataset& data_;
    bool closed_form_;
    bool backbone_first_;
    MlpBackbone backbone_{nullptr};
    torch::nn::Linear head_{nullptr};  // sgd/adam: trained last layer
    torch::Tensor w_;                  // cf-*: (d+1) × k float64 closed-form last layer
    torch::Tensor w_f32_;              // its float32 copy used in the forward pass
    std::unique_ptr<torch::optim::Optimizer> optimizer_;
    BatchSampler sampler_;
    double step_seconds_ = 0, solve_seconds_ = 0;
};

}  // namespace liftlab
