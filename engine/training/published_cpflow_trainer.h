// One positivity strategy on one seed of CP-Flow's published toy recipe
// (icnn.architecture = cpflow-published; engine/flows/published_cp_flow.h): the upstream priming
// pass on the first batch, then Adam on the mean negative log-likelihood with the spec's step
// decay (upstream: lr 5e-3 halved every 2000 steps, no gradient clipping unless icnn.grad_clip
// > 0), pgd projecting after every step and the lifter conditioning on each loss batch. For
// evaluation the lifter conditions on one fixed training batch (the reference's
// eval_condition_on = train_batch: batch_size rows drawn with seed 12345), so test weights are
// deterministic.
#pragma once
#include <torch/torch.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "data/batch_sampler.h"
#include "data/dataset.h"
#include "flows/published_cp_flow.h"
#include "spec/experiment_spec.h"
#include "training/trainer.h"

namespace liftlab {

class PublishedCpFlowTrainer : public Trainer {
public:
    PublishedCpFlowTrainer(const ExperimentSpec& spec, const MethodSpec& method,
                           const Dataset& data, std::uint64_t seed);

    double step() override;
    // test_loss (test NLL, nats per sample), nonpositive_dets (Hessian determinants ≤ 0 seen on
    // the test set: 0 for a convex potential), shoulder_occupancy (fraction of W̃ with
    // sigmoid(W̃) ≤ 0.05; for pgd the fraction at exactly 0).
    std::map<std::string, double> evaluate_test() override;
    double train_set_loss() override;
    bool parameters_finite() override;
    bool closed_form() const override { return false; }
    double step_seconds() const override { return step_seconds_; }
    double solve_seconds() const override { return 0.0; }

    PublishedCpFlow& flow() { return flow_; }

private:
    double mean_nll(const torch::Tensor& x, int64_t* nonpositive);

    ExperimentSpec spec_;
    const Dataset& data_;
    PublishedCpFlow flow_{nullptr};
    BatchSampler sampler_;
    torch::Tensor x_train_, x_test_, eval_cond_;
    std::unique_ptr<torch::optim::Optimizer> optimizer_;
    double lr_ = 0;
    int steps_ = 0;
    double step_seconds_ = 0;
};

}  // namespace liftlab
