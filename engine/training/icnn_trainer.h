// One positivity strategy on one seed for the ICNN family (docs/methods.md §3.5): a log-concave
// energy model E(x) (icnn-ebm-1d: log Z by quadrature; icnn-ebm-nd: by importance sampling) or a
// convex potential flow (cpflow-toy, cpflow-tabular: exact Hessian log-det), trained by
// negative log-likelihood with the spec's optimizer and gradient clipping. It records the
// readout-shoulder statistics, θ̃ coordinate traces, σ²_Jac with its permutation p-value and the
// trajectory checkpoints the landscapes need.
#pragma once
#include <torch/torch.h>

#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "data/batch_sampler.h"
#include "data/dataset.h"
#include "diagnostics/shoulder.h"
#include "icnn/icnn.h"
#include "spec/experiment_spec.h"
#include "training/trainer.h"

namespace liftlab {

class DensityModel;  // the task's loss around the ICNN (icnn_trainer.cpp)
class FusedAdam;     // training/fused_adam.h

class IcnnTrainer : public Trainer,
                    public DensityDiagnostics,
                    public ModelExport,
                    public Resumable,
                    public LiveSettings,
                    public ForkStart,
                    public ShoulderPush {
public:
    IcnnTrainer(const ExperimentSpec& spec, const MethodSpec& method, const Dataset& data,
                std::uint64_t seed);
    ~IcnnTrainer() override;

    double step() override;
    // test_loss (test NLL, nats per sample), log_z, tv where the target density is known, and
    // the shoulder statistics so far.
    std::map<std::string, double> evaluate_test() override;
    double train_set_loss() override;
    bool parameters_finite() override;
    bool closed_form() const override { return false; }
    double step_seconds() const override { return step_seconds_; }
    double solve_seconds() const override { return 0.0; }

    // chord_convexity_gap, chord_convexity_violations (the trained energy on random chords),
    // slack (1/0), sigma2_jac, p_value, sigma2_jac_null_sd (slack-contracted at each probe
    // batch's own emitted iterate, docs/methods.md §4.1; a structural 0 without p when there is no
    // slack), sigma2_jac_theta, p_value_theta (the θ̃-gradient at a fixed iterate), median_dwell,
    // exit_rate, exits.
    std::map<std::string, double> final_diagnostics() override;
    std::vector<TraceSample> drain_traces() override;
    std::vector<int64_t> dwell_times() const override;
    // "theta": theta_weights() followed by extra_parameters(); "lifted": every trainable
    // parameter.
    std::map<std::string, torch::Tensor> checkpoint() override;
    // The energy models' ICNN with the weights of the last evaluation baked in and the attribute
    // log_z (1-D: also quadrature_lo, quadrature_hi, quadrature_points of the reported log Z);
    // false for the convex potential flows.
    bool export_model(const std::string& path) override;
    std::string resume_blocker() const override;
    void save_state(StateArchive& a, const std::string& prefix) override;
    void load_state(const StateArchive& a, const std::string& prefix) override;
    // "lr": the step size of the strategy's optimizer (lifter, softplus, pgd, …).
    std::map<std::string, double> live_settings() const override;
    void set_live_setting(const std::string& key, double value) override;
    // From another strategy of the seed on an ICNN of the same shapes (ForkStart): θ as the
    // source's evaluation reads it — at the reference set (docs/methods.md §4.5) — and the free
    // tensors, the model's extra parameters, the samplers, the step count and the push mask.
    // The optimizer starts fresh (its parameters are others), the shoulder statistics and traces
    // start at the fork.
    void start_from_method(Trainer& source) override;
    // From then on evaluate_test() also gives push_escaped: the fraction of every coordinate
    // pushed so far that is out of the shoulder at the reference iterate.
    std::pair<double, double> push_into_shoulder(const std::string& layers, double fraction,
                                                 double depth, std::uint64_t seed) override;

    Icnn& icnn() { return icnn_; }
    // Every trainable parameter (lifted space, the order of checkpoint()["lifted"]).
    std::vector<torch::Tensor> lifted_parameters();
    // The effective ICNN weights at the reference set — constrained θ, then the free tensors
    // (emitted by the lifter family, the ICNN's own otherwise): the same layout for every
    // strategy of an ICNN size, so θ-space trajectories share one plane.
    std::vector<torch::Tensor> theta_weights();
    // The model's parameters outside the ICNN (CP-Flow's w0, w1), after theta_weights() in θ-space.
    std::vector<torch::Tensor> extra_parameters();
    const Dataset& data() const { return data_; }
    int64_t icnn_width() const { return width_; }
    // The reference set the lifter's body reads at evaluation (first reference_size samples).
    const torch::Tensor& reference() const { return reference_; }
    // Loss (NLL) on x with a given ICNN weight list (see IcnnImpl::energy_with_weights) and the
    // model's own other parameters.
    torch::Tensor nll_with_weights(const torch::Tensor& x,
                                   const std::vector<torch::Tensor>& constrained);
    // The positivity strategy conditioned for evaluation (reference set; decoupled reads it too).
    std::vector<torch::Tensor> reference_pre_readout();
    // The weight list a split is scored with: emitted at the reference set, or (icnn.
    // eval_conditioning "scored") at the scored split itself.
    std::vector<torch::Tensor> scoring_weights(const torch::Tensor& scored);
    // The test samples this seed is scored on: its own draw (task.test_per_seed) or the split.
    const torch::Tensor& test_set() const;
    const ExperimentSpec& spec() const { return spec_; }

    // The ICNN width of softplus-wide: the smallest width whose direct-softplus ICNN has at least
    // as many trainable parameters as the lifter ICNN of `spec` (docs/methods.md §3.2).
    static int64_t matched_wide_width(const ExperimentSpec& spec, int64_t input_dim);

private:
    void observe_shoulder(const std::vector<torch::Tensor>& pre);
    // chord_convexity_gap (largest relative gap, ≤ 0 when convex on the chords) and
    // chord_convexity_violations (fraction of 2048 chords above 1e-4): final metrics.
    void add_chord_convexity(std::map<std::string, double>& out);
    // The next training batch: fresh from the target (task.fresh_samples) or from `sampler`.
    torch::Tensor next_batch(BatchSampler& sampler);
    torch::Tensor flat(const std::vector<torch::Tensor>& parts) const;

    ExperimentSpec spec_;
    const Dataset& data_;
    std::uint64_t seed_;
    int64_t width_;
    Icnn icnn_{nullptr};
    std::unique_ptr<DensityModel> model_;
    std::unique_ptr<torch::optim::Optimizer> optimizer_;  // sgd
    std::unique_ptr<FusedAdam> adam_;                     // adam (one pass per tensor)
    BatchSampler sampler_;
    BatchSampler independent_sampler_;  // lifter-decoupled: X′ independent of the loss batch
    std::mt19937_64 fresh_seeds_;       // task.fresh_samples: one sample seed per batch
    torch::Tensor reference_;
    torch::Tensor test_;  // task.test_per_seed: this seed's test samples (undefined otherwise)
    std::optional<ShoulderTracker> shoulder_;
    std::vector<int64_t> trace_coordinates_;
    std::vector<TraceSample> traces_;
    int steps_ = 0;
    double step_seconds_ = 0;
    std::map<std::string, double> last_evaluation_;  // evaluate_test()'s metrics
    torch::Tensor push_mask_;  // bool over the flat constrained coordinates pushed (or undefined)
    // The shoulder mask of the flat constrained coordinates at the reference iterate.
    torch::Tensor reference_shoulder();
};

}  // namespace liftlab
