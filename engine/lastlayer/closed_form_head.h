// The closed-form last layers. All keep W in float64 (solves) and a float32 copy (forward pass),
// and start from W₀ = 0.
//   cf-ridge (β)   W_t = argmin ||Y_B − ΦW||² + β||W||²                 (the batch alone)
//   cf-prox  (λ)   W_t = argmin ||Y_B − ΦW||² + λ||W − W_{t−1}||²       (approximate Kalman)
//   cf-rls (ρ, λ)  A_t = ρA_{t−1} + ΦᵀΦ, B_t = ρB_{t−1} + ΦᵀY, A_0 = λI: W_t = A_t⁻¹B_t
//                  (precision carried with forgetting factor ρ; ρ = 1 is ridge on all data seen)
//   cf-full (β)    W*(θ) on the whole training set, every `refresh_every` steps
#pragma once
#include "lastlayer/last_layer.h"

namespace liftlab {

class ClosedFormHead : public LastLayer {
public:
    ClosedFormHead(int64_t feature_dim, int64_t outputs);
    torch::Tensor predict(const torch::Tensor& features) const override;
    bool closed_form() const override { return true; }
    torch::Tensor weights() const override { return w_; }
    // The statistics of RlsHead start empty and follow the features' device.
    void to(const torch::Device& device) override { set_weights(w_.to(device)); }
    void load_weights(const torch::Tensor& w) override;
    void save_state(StateArchive& a, const std::string& prefix) const override;
    void load_state(const StateArchive& a, const std::string& prefix) override;

protected:
    void set_weights(torch::Tensor w);
    torch::Tensor w_, w_f32_;
};

class RidgeHead : public ClosedFormHead {
public:
    RidgeHead(int64_t d, int64_t k, double beta) : ClosedFormHead(d, k), beta_(beta) {}
    void observe_batch(const torch::Tensor& features, const torch::Tensor& targets) override;
    void observe_statistics(const GramStatistics& batch) override;
    double regulariser() const override { return beta_; }
    std::map<std::string, double> settings() const override { return {{"beta", beta_}}; }
    void set_setting(const std::string& key, double value) override;

private:
    double beta_;
};

class ProximalHead : public ClosedFormHead {
public:
    ProximalHead(int64_t d, int64_t k, double lambda) : ClosedFormHead(d, k), lambda_(lambda) {}
    void observe_batch(const torch::Tensor& features, const torch::Tensor& targets) override;
    void observe_statistics(const GramStatistics& batch) override;
    double regulariser() const override { return lambda_; }
    std::map<std::string, double> settings() const override { return {{"lambda", lambda_}}; }
    void set_setting(const std::string& key, double value) override;

private:
    double lambda_;
};

class RlsHead : public ClosedFormHead {
public:
    RlsHead(int64_t d, int64_t k, double rho, double lambda);
    void observe_batch(const torch::Tensor& features, const torch::Tensor& targets) override;
    void observe_statistics(const GramStatistics& batch) override;
    double regulariser() const override { return lambda_; }
    // ρ only: λ is the initial precision A₀ = λI, spent at the start.
    std::map<std::string, double> settings() const override { return {{"rho", rho_}}; }
    void set_setting(const std::string& key, double value) override;
    bool accumulates_gram() const override { return true; }
    void save_state(StateArchive& a, const std::string& prefix) const override;
    void load_state(const StateArchive& a, const std::string& prefix) override;

private:
    double rho_, lambda_;
    GramStatistics stats_;  // A_t − (decayed prior) and B_t
    double prior_ = 0;      // ρ^t λ: the decayed prior precision
};

class FullDataHead : public ClosedFormHead {
public:
    FullDataHead(int64_t d, int64_t k, double beta, int refresh_every)
        : ClosedFormHead(d, k), beta_(beta), refresh_every_(refresh_every) {}
    bool wants_full_data(int step) const override { return (step - 1) % refresh_every_ == 0; }
    void solve_full(const GramStatistics& stats) override;
    bool accumulates_gram() const override { return true; }
    double regulariser() const override { return beta_; }
    std::map<std::string, double> settings() const override { return {{"beta", beta_}}; }
    void set_setting(const std::string& key, double value) override;

private:
    double beta_;
    int refresh_every_;
};

}  // namespace liftlab
