// One method on one seed: backbone, last layer and optimizer, stepped by the runner.
#pragma once
#include <torch/torch.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "data/batch_sampler.h"
#include "data/dataset.h"
#include "lastlayer/last_layer.h"
#include "nn/feature_backbone.h"
#include "spec/experiment_spec.h"
#include "training/trainer.h"

namespace liftlab {

// A linear probe's fixed features of the whole training and test splits, as the backbone gives
// them (n × d, or n × s × d): computed once per unit and shared by its methods, whose backbones
// are the same file or the same seeded initialisation.
struct FixedFeatures {
    torch::Tensor train, test;
};

class MethodTrainer : public Trainer,
                      public FeatureProbe,
                      public LastLayerAccess,
                      public ModelExport,
                      public Resumable,
                      public LiveSettings,
                      public ForkStart,
                      public DataParallel {
public:
    MethodTrainer(const ExperimentSpec& spec, const MethodSpec& method, const Dataset& data,
                  std::uint64_t seed);

    // One optimisation step on the next mini-batch; returns that batch's training loss.
    double step() override;
    // Test metrics: test_loss (the method's own loss: MSE, or cross-entropy for ce), plus
    // test_accuracy (classification) or test_rel_l2 (operator learning).
    std::map<std::string, double> evaluate(const torch::Tensor& x, const torch::Tensor& y,
                                           const torch::Tensor& labels);
    std::map<std::string, double> evaluate_test() override {
        return evaluate(data_.x_test, data_.y_test, data_.labels_test);
    }
    double train_set_loss() override {
        return evaluate(data_.x_train, data_.y_train, data_.labels_train).at("test_loss");
    }
    bool parameters_finite() override;
    // Broadcasts the initial parameters from rank 0; later steps split batches and all-reduce
    // gradients (averaged) and closed-form statistics (distributed/statistics_all_reduce.h).
    bool attach_communicator(std::shared_ptr<Communicator> comm) override;
    // backbone + head (mlp and TorchScript backbones; the cnn and fno1d have no export).
    bool export_model(const std::string& path) override;
    std::string resume_blocker() const override;
    void save_state(StateArchive& a, const std::string& prefix) override;
    void load_state(const StateArchive& a, const std::string& prefix) override;
    // "lr" (the optimizer's step size, every param group) and the closed form's setting.
    std::map<std::string, double> live_settings() const override;
    void set_live_setting(const std::string& key, double value) override;
    // From another gradient or closed-form method of the seed (ForkStart): its backbone, its W
    // when both heads fit the same loss (squared or cross-entropy), its sampler position and step
    // count, and its optimizer moments when both train the same parameters (both heads closed
    // forms, or both trained) with the same optimizer kind; otherwise the optimizer starts fresh.
    void start_from_method(Trainer& source) override;

    bool closed_form() const override { return head_->closed_form(); }
    double step_seconds() const override { return step_seconds_; }
    double solve_seconds() const override { return solve_seconds_; }
    double regulariser() const override { return head_->regulariser(); }

    // Features flattened to N × d (no grad), for diagnostics.
    torch::Tensor flat_features(const torch::Tensor& x) override;
    torch::Tensor last_layer() const override { return head_->weights(); }  // (d+1) × k, float64
    // The last layer's input, unnamed.
    std::vector<NamedFeatures> probe_features(const torch::Tensor& x) override {
        return {{"", flat_features(x)}};
    }
    bool fixed_features() const override { return linear_probe_; }
    bool linear_probe() const { return linear_probe_; }
    // Linear probe: the fixed features of both splits, or null when they would take more than
    // kMaxFixedFeatureBytes (each step then runs the backbone on its batch) or `stop` was set.
    std::shared_ptr<const FixedFeatures> compute_fixed_features(const std::atomic<bool>* stop);
    // Steps, evaluations and cf-full's solve read these instead of running the backbone.
    void use_fixed_features(std::shared_ptr<const FixedFeatures> f) { fixed_ = std::move(f); }
    FeatureBackbone& backbone() { return *backbone_; }

private:
    // Backbone then head parameters (the optimizer's, in its order).
    std::vector<torch::Tensor> all_parameters();
    torch::Tensor loss_of(const torch::Tensor& features, const torch::Tensor& targets,
                          const torch::Tensor& labels) const;
    // `share`: this rank's fraction of the global batch (1 in one process).
    double theta_step(const torch::Tensor& xb, const torch::Tensor& yb, const torch::Tensor& lb,
                      double share);
    double backward_and_step(const torch::Tensor& loss, double share);
    // A step on a fully frozen backbone (linear_probe_): the head alone, on fixed features.
    double probe_step(const torch::Tensor& idx, const torch::Tensor& xb, const torch::Tensor& yb,
                      const torch::Tensor& lb, double share);
    // Backbone features of rows [start, start + len) of `x`: from fixed_ when x is a split it
    // holds, else by a forward pass.
    torch::Tensor chunk_features(const torch::Tensor& x, int64_t start, int64_t len);
    void observe(const torch::Tensor& features, const torch::Tensor& yb);
    void refresh_full_data();
    // Sums the gradients (of losses already weighted by this rank's share) and `loss` over ranks.
    double all_reduce_gradients(double loss);

    const Dataset& data_;
    torch::Device device_;  // the data's: every model and tensor of this trainer lives there
    bool cross_entropy_;
    std::string optimizer_kind_;  // sgd, adam: the method's own, else the spec's
    bool backbone_first_;
    // Every backbone parameter frozen: a linear probe on fixed features. The closed forms solve
    // on them without a θ step (cf-full once), the gradient methods train their head alone, and
    // the backbone stays in evaluation mode.
    bool linear_probe_ = false;
    std::shared_ptr<const FixedFeatures> fixed_;  // null: run the backbone
    std::shared_ptr<FeatureBackbone> backbone_;
    std::unique_ptr<LastLayer> head_;
    std::unique_ptr<torch::optim::Optimizer> optimizer_;
    BatchSampler sampler_;
    std::shared_ptr<Communicator> comm_;  // null: one process
    int steps_ = 0;
    double step_seconds_ = 0, solve_seconds_ = 0;
};

// Flattens (…, k) to (N, k): every leading index (sample, grid point) is a row of the last layer.
torch::Tensor flatten_rows(const torch::Tensor& t);

}  // namespace liftlab
