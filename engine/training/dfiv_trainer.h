// Deep Feature Instrumental Variables (Xu et al. 2021) with closed-form last layers, on the demand
// design (docs/methods.md §1.9). Three feature nets:
// treatment ψ_θ(P), instrument φ_ξ(Z) with Z = (C, t, s), covariate ν_η(t, s). Two linear stages:
//
//   stage 1   V = argmin ||ψ(P1) − [φ(Z1), 1] V||² + λ1 ||V||²      predicted ψ̂(Z) = [φ(Z), 1] V
//   stage 2   u = argmin ||Y2 − ([ψ̂(Z2), 1] ⊗ [ν(t2, s2), 1]) u||² + λ2 ||u||²
//
// and the structural estimate f̂(p, t, s) = ([ψ(p), 1] ⊗ [ν(t, s), 1]) u. Methods:
//   dfiv          per-batch ridge V and u (λ = lambda_scale · batch rows), and on the last step a
//                 re-estimation of V and u on the full stage-1 / stage-2 halves (λ = lambda_scale ·
//                 half rows) with the final features: the costly step the seed paper removes;
//   dfiv-norefit  the same without the re-estimation (the ablation);
//   dfiv-prox     proximal closed forms V_t = argmin batch loss + λ ||V − V_{t−1}||² (same for u),
//                 λ = `lambda` on batch sums, no ridge term and no re-estimation.
#pragma once
#include <torch/torch.h>

#include <map>
#include <memory>
#include <string>

#include "data/batch_sampler.h"
#include "data/dataset.h"
#include "nn/mlp_backbone.h"
#include "spec/experiment_spec.h"
#include "training/trainer.h"

namespace liftlab {

// Row-wise [a, 1] ⊗ [b, 1], flattened row-major: column i · (d_b + 1) + j holds a_i · b_j with
// a_{d_a} = b_{d_b} = 1, so the last column is the constant that carries the intercept.
// a: n × d_a, b: n × d_b; result n × (d_a + 1)(d_b + 1), differentiable, in a's dtype.
torch::Tensor dfiv_outer_features(const torch::Tensor& a, const torch::Tensor& b);

class DfivTrainer : public Trainer, public FeatureProbe {
public:
    // Data rows are [P, t, s, C] (Dataset of the dfiv-demand task). Rows [0, n/2) of x_train are
    // the stage-1 half, the rest the stage-2 half (the generator draws i.i.d. rows, so a fixed
    // split is a random one). Throws std::invalid_argument for other layouts or a method that
    // is not dfiv*.
    DfivTrainer(const ExperimentSpec& spec, const MethodSpec& method, const Dataset& data,
                std::uint64_t seed);

    // (a) instrument-net step on a stage-1 batch, (b) treatment/covariate step on a stage-2
    // batch; dfiv re-estimates on the full halves at step == spec.steps. Returns the stage-2
    // batch loss in original Y units (mean squared error).
    double step() override;
    // test_loss: MSE of f̂ against the noise-free structural f on the test rows (the grid).
    std::map<std::string, double> evaluate_test() override;
    // The stage-2 loss (MSE, original Y units) on the whole stage-2 half at the current V, u.
    double train_set_loss() override;
    bool parameters_finite() override;
    bool closed_form() const override { return true; }
    double step_seconds() const override { return step_seconds_; }
    double solve_seconds() const override { return solve_seconds_; }

    // --- For tests and diagnostics. x: data rows [P, t, s, C] in original units; no grad.
    torch::Tensor treatment_features(const torch::Tensor& x);   // ψ_θ(P): n × d1
    torch::Tensor instrument_features(const torch::Tensor& x);  // φ_ξ(C, t, s): n × d2
    torch::Tensor covariate_features(const torch::Tensor& x);   // ν_η(t, s): n × d3
    torch::Tensor predict(const torch::Tensor& x);  // f̂(P, t, s) in original Y units: n × 1
    // Spectra of the instrument features φ(Z) and the treatment features ψ(P) on the first
    // min(x.size(0), n/2) stage-1 training rows: the probe x (the test grid) has no instrument
    // column, so DFIV probes fixed training rows instead; x only sets the count.
    std::vector<NamedFeatures> probe_features(const torch::Tensor& x) override;

    struct StageWeights {
        torch::Tensor v;  // (d2 + 1) × d1, float64
        torch::Tensor u;  // (d1 + 1)(d3 + 1) × 1, float64
    };
    // V on stage-1 rows x1, then u on stage-2 rows (x2, y2) with ψ̂ from that V — the method's
    // rule at the current features (ridge, or proximal toward the current V, u). y2 in
    // original units. Leaves the trainer unchanged.
    StageWeights solve_stages(const torch::Tensor& x1, const torch::Tensor& x2,
                              const torch::Tensor& y2);
    // The current V and u (undefined before the first step).
    const torch::Tensor& stage1_weights() const { return v_; }
    const torch::Tensor& stage2_weights() const { return u_; }
    int64_t stage1_rows() const { return n1_; }
    // Y is standardised for training: Y_std = (Y − mean) / scale.
    double outcome_mean() const { return y_mean_; }
    double outcome_scale() const { return y_scale_; }
    // The stage ridge strength of a solve on n rows (lambda_scale · n); 0 for dfiv-prox.
    double ridge_lambda(int64_t n) const { return proximal_ ? 0.0 : lambda_scale_ * n; }

private:
    torch::Tensor standardize(const torch::Tensor& x) const;
    // Column blocks of standardised rows.
    static torch::Tensor treatment_of(const torch::Tensor& xs);
    static torch::Tensor instrument_of(const torch::Tensor& xs);
    static torch::Tensor covariate_of(const torch::Tensor& xs);
    double stage_lambda(int64_t n) const { return proximal_ ? lambda_ : lambda_scale_ * n; }
    // The stage-1 solve as a linear map of its targets: V = A ψ + c with A = (Φ̃ᵀΦ̃ + λI)⁻¹Φ̃ᵀ
    // and c = λ (Φ̃ᵀΦ̃ + λI)⁻¹ V_{t−1} (c undefined for ridge). phi_tilde: [φ(Z1), 1].
    std::pair<torch::Tensor, torch::Tensor> stage1_smoother(const torch::Tensor& phi_tilde);
    torch::Tensor solve_stage(const torch::Tensor& features, const torch::Tensor& targets,
                              const torch::Tensor& previous);
    void refit_full_data();

    bool proximal_, refit_;
    double lambda_, lambda_scale_;
    int total_steps_;
    int64_t n1_, n2_;
    torch::Tensor x_mean_, x_scale_;  // 1 × 4, training-set statistics
    double y_mean_ = 0, y_scale_ = 1;
    // Standardised training halves: treatment P1 / instruments Z1 (stage 1); instruments Z2,
    // covariates W2 = (t2, s2) and outcome Y2 (stage 2, float64).
    torch::Tensor p1_, z1_, z2_, w2_, y2_;
    torch::Tensor x_test_, y_test_;
    MlpBackbone treatment_net_{nullptr}, instrument_net_{nullptr}, covariate_net_{nullptr};
    std::unique_ptr<torch::optim::Optimizer> instrument_optimizer_, outcome_optimizer_;
    torch::Device device_{torch::kCPU};  // the data's: the nets and every tensor live there
    BatchSampler sampler1_, sampler2_;
    torch::Tensor v_, u_;
    int steps_ = 0;
    double step_seconds_ = 0, solve_seconds_ = 0;
};

}  // namespace liftlab
