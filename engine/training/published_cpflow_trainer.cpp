#include "training/published_cpflow_trainer.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>

#include "core/stopwatch.h"
#include "training/optimizer_factory.h"

namespace liftlab {

namespace {

constexpr uint64_t kEvalCondSeed = 12345;  // the reference's eval_cond_seed
constexpr int64_t kHessianChunk = 1000;    // test rows per Hessian pass
constexpr double kShoulder = 0.05;         // sigmoid(W̃) ≤ 0.05: update attenuated ≥ 20×

}  // namespace

PublishedCpFlowTrainer::PublishedCpFlowTrainer(const ExperimentSpec& spec, const MethodSpec& method,
                                               const Dataset& data, std::uint64_t seed)
    : spec_(spec), data_(data), sampler_(data.n_train(), spec.batch_size, seed) {
    flow_ = PublishedCpFlow(PublishedCpFlowOptions(data.input_dim())
                                .hidden(spec.icnn.width)
                                .depth(spec.icnn.layers)
                                .blocks(spec.icnn.blocks)
                                .strategy(method.name)
                                .readout_fanin_scale(spec.icnn.readout_fanin_scale)
                                .seed(seed));
    x_train_ = data.x_train.to(torch::kFloat64);
    x_test_ = data.x_test.to(torch::kFloat64);
    auto gen = at::make_generator<at::CPUGeneratorImpl>(kEvalCondSeed);
    const int64_t n_cond = std::min<int64_t>(spec.batch_size, data.n_train());
    eval_cond_ = x_train_.index_select(
        0, torch::randperm(data.n_train(), gen, torch::kLong).narrow(0, 0, n_cond));
    {
        // Upstream's priming pass runs on the first training batch: the one step() draws first.
        BatchSampler first = sampler_;
        flow_->initialise(x_train_.index_select(0, first.next()));
    }
    lr_ = method.lr > 0 ? method.lr : spec.optimizer.lr;
    // Adam as upstream (torch's update; one fused pass per tensor, training/fused_adam.h).
    optimizer_ = make_optimizer("adam", lr_, 0.0, flow_->trainable_parameters());
}

double PublishedCpFlowTrainer::step() {
    const auto t0 = Clock::now();
    const auto xb = x_train_.index_select(0, sampler_.next());
    ++steps_;
    if (spec_.optimizer.lr_step_every > 0) {
        // StepLR: the lr of step t (1-based) is lr · γ^⌊(t − 1) / every⌋.
        const double lr = lr_ * std::pow(spec_.optimizer.lr_step_gamma,
                                         (steps_ - 1) / spec_.optimizer.lr_step_every);
        for (auto& group : optimizer_->param_groups())
            static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
    }
    // Each block's weights from the loss batch itself (the lifter: as it enters the block).
    const auto loss = -flow_->log_prob(xb, {}, /*create_graph=*/true).log_p.mean();
    optimizer_->zero_grad();
    loss.backward();
    if (spec_.icnn.grad_clip > 0)
        torch::nn::utils::clip_grad_norm_(flow_->trainable_parameters(), spec_.icnn.grad_clip);
    optimizer_->step();
    flow_->project();
    step_seconds_ += seconds_since(t0);
    return loss.item<double>();
}

double PublishedCpFlowTrainer::mean_nll(const torch::Tensor& x, int64_t* nonpositive) {
    std::vector<torch::Tensor> raw;
    {
        torch::NoGradGuard no_grad;
        for (const auto& r : flow_->constrained(eval_cond_)) raw.push_back(r.detach());
    }
    double sum = 0;
    for (int64_t i = 0; i < x.size(0); i += kHessianChunk) {
        const auto lp =
            flow_->log_prob(x.narrow(0, i, std::min(kHessianChunk, x.size(0) - i)), raw, false);
        sum -= lp.log_p.detach().sum().item<double>();
        if (nonpositive) *nonpositive += lp.nonpositive_dets;
    }
    return sum / static_cast<double>(x.size(0));
}

std::map<std::string, double> PublishedCpFlowTrainer::evaluate_test() {
    int64_t nonpositive = 0;
    const double nll = mean_nll(x_test_, &nonpositive);
    double low = 0, total = 0;
    {
        torch::NoGradGuard no_grad;
        for (const auto& r : flow_->constrained(eval_cond_)) {
            const auto in_shoulder = flow_->positivity() == PositivityMap::Projected
                                         ? (r <= 0)
                                         : (torch::sigmoid(r) <= kShoulder);
            low += in_shoulder.sum().item<double>();
            total += static_cast<double>(r.numel());
        }
    }
    return {{"test_loss", nll},
            {"nonpositive_dets", static_cast<double>(nonpositive)},
            {"shoulder_occupancy", total > 0 ? low / total : 0.0}};
}

double PublishedCpFlowTrainer::train_set_loss() {
    return mean_nll(x_train_, nullptr);
}

bool PublishedCpFlowTrainer::parameters_finite() {
    torch::NoGradGuard no_grad;
    for (const auto& p : flow_->parameters())
        if (!torch::isfinite(p).all().item<bool>()) return false;
    return true;
}

}  // namespace liftlab
