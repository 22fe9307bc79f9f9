// The final linear layer of every method (docs/methods.md §1.2): trained by the optimizer
// (sgd, adam, ce) or solved in closed form (cf-ridge, cf-prox, cf-full, cf-rls). Features come in
// flattened to N × d; the bias is an appended constant-1 feature, so weights() is (d+1) × k.
#pragma once
#include <torch/torch.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "lastlayer/proximal_solve.h"

namespace liftlab {

class StateArchive;

class LastLayer {
public:
    virtual ~LastLayer() = default;
    virtual torch::Tensor predict(const torch::Tensor& features) const = 0;  // N × d → N × k
    // Trained by the optimizer together with θ (empty for closed forms).
    virtual std::vector<torch::Tensor> parameters() { return {}; }
    virtual bool closed_form() const { return false; }
    // Closed forms: the batch (features detached, N × d; targets N × k) has been seen.
    virtual void observe_batch(const torch::Tensor& features, const torch::Tensor& targets) {}
    // Closed forms, data-parallel: the same update from the batch's statistics ΦᵀΦ, ΦᵀY (with the
    // bias column), summed over every rank's share of the batch.
    virtual void observe_statistics(const GramStatistics& batch) {}
    // cf-full: whether W must be re-solved on the whole training set before this step.
    virtual bool wants_full_data(int step) const { return false; }
    virtual void solve_full(const GramStatistics& stats) {}
    // Keeps (d+1) × (d+1) statistics of the features whatever the batch (cf-full, cf-rls); the
    // others solve a batch × batch system when the batch is smaller than d (Woodbury).
    virtual bool accumulates_gram() const { return false; }
    virtual torch::Tensor weights() const = 0;  // (d+1) × k, float64
    // Moves its weights (and any state) to `device`; the trainer calls it before building the
    // optimizer.
    virtual void to(const torch::Device& device) = 0;
    // The ridge/proximal strength the closed form uses (0 for gradient heads).
    virtual double regulariser() const { return 0.0; }
    // The closed form's settings a run may change between steps (β, λ or ρ by their keys; none
    // for gradient heads) and their setter (Trainer's LiveSettings).
    virtual std::map<std::string, double> settings() const { return {}; }
    virtual void set_setting(const std::string& key, double value) {
        throw std::invalid_argument("this last layer has no live setting '" + key + "'");
    }
    // Starts from another head's W ((d+1) × k, the layout of weights()): a fork to another
    // method of the family (training/trainer.h ForkStart). Throws std::invalid_argument when W
    // does not fit.
    virtual void load_weights(const torch::Tensor& w) = 0;
    // What the closed form carries from step to step (W, RLS statistics), for run --resume;
    // a gradient head's weights are parameters(), saved with the backbone's.
    virtual void save_state(StateArchive& a, const std::string& prefix) const {}
    virtual void load_state(const StateArchive& a, const std::string& prefix) {}
};

// The head of a method is built by its registry entry (methods/method_registry.h, make_head).

}  // namespace liftlab
