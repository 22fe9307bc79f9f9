// The loss around an ICNN for each task of the ICNN family (docs/methods.md §5, §6): the
// negative log-likelihood of a log-concave energy model (log Z by quadrature in 1-D, by
// self-normalised importance sampling in n-D) or of a convex potential flow.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "icnn/icnn.h"
#include "spec/experiment_spec.h"

namespace liftlab {

class StateArchive;

class DensityModel {
public:
    virtual ~DensityModel() = default;
    // The ICNN whose constrained weights the positivity strategy emits.
    virtual Icnn icnn() = 0;
    // Every trainable parameter (the ICNN's strategy, the ICNN's own free tensors unless the
    // strategy emits them, plus any of the model's own), in a fixed order.
    std::vector<torch::Tensor> parameters();
    // The model's own parameters outside the ICNN (CP-Flow's w0, w1; none for the energy
    // models), in a fixed order: θ-space coordinates after the ICNN's weights.
    virtual std::vector<torch::Tensor> extra_parameters() { return {}; }
    // A fresh batch of n samples (n × d, float32) from the target, for task.fresh_samples; the
    // same seed gives the same batch. Undefined where the target cannot be sampled.
    virtual torch::Tensor fresh_batch(int64_t n, std::uint64_t seed) { return {}; }
    // Mean negative log-likelihood of the rows of x (a 0-dim tensor with autograd) with the given
    // ICNN weight list (constrained θ, optionally followed by the free tensors; see
    // IcnnImpl::energy_with_weights); `step` seeds any Monte-Carlo part (importance samples).
    virtual torch::Tensor nll(const torch::Tensor& x, const std::vector<torch::Tensor>& constrained,
                              int step) = 0;
    // The part of nll() that depends on the batch x, up to a term that depends only on θ (log Z
    // for the energy models). σ²_Jac at a fixed iterate centres the gradients over batches, so
    // that θ-only term cancels; skipping it saves the quadrature / importance-sampling pass.
    virtual torch::Tensor batch_term(const torch::Tensor& x,
                                     const std::vector<torch::Tensor>& constrained, int step) {
        return nll(x, constrained, step);
    }
    // Why a run of this model cannot be resumed ("" when it can): state of its own that changes
    // during training and that save_state does not keep (a refined proposal's Adam moments).
    virtual std::string resume_blocker() const { return ""; }
    // The model's own state beyond its parameters, for run --resume (the adapted importance
    // proposal of icnn-ebm-nd); nothing for the others.
    virtual void save_state(StateArchive& /*a*/, const std::string& /*prefix*/) const {}
    virtual void load_state(const StateArchive& /*a*/, const std::string& /*prefix*/) {}
    // Metrics on x (no autograd): test_loss (mean NLL), and log_z / tv where they exist.
    virtual std::map<std::string, double> evaluate(
        const torch::Tensor& x, const std::vector<torch::Tensor>& constrained) = 0;

protected:
    // Every parameter of the model's modules (trainable or frozen); parameters() keeps the
    // trainable ones.
    virtual std::vector<torch::Tensor> all_parameters() = 0;
};

// The lifter's settings of the spec (icnn.lifter_body, icnn.lifter_pool_norm).
PositivityOptions positivity_options(const IcnnSpec& icnn);

// The model of spec.task.kind with an ICNN of `width` and positivity strategy `strategy`.
std::unique_ptr<DensityModel> make_density_model(const ExperimentSpec& spec, const Dataset& data,
                                                 const std::string& strategy, int64_t width);

}  // namespace liftlab
