#include "lastlayer/closed_form_head.h"

namespace liftlab {

ClosedFormHead::ClosedFormHead(int64_t feature_dim, int64_t outputs) {
    set_weights(torch::zeros({feature_dim + 1, outputs}, torch::kFloat64));
}

void ClosedFormHead::set_weights(torch::Tensor w) {
    w_ = std::move(w);
    w_f32_ = w_.to(torch::kFloat32);
}

torch::Tensor ClosedFormHead::predict(const torch::Tensor& features) const {
    const int64_t d = features.size(1);
    return torch::addmm(w_f32_[d], features, w_f32_.narrow(0, 0, d));
}

void RidgeHead::observe_batch(const torch::Tensor& features, const torch::Tensor& targets) {
    set_weights(solve_proximal(bias_column_f64(features), targets, beta_).w);
}

void RidgeHead::observe_statistics(const GramStatistics& batch) {
    set_weights(solve_statistics(batch, beta_));
}

void ProximalHead::observe_batch(const torch::Tensor& features, const torch::Tensor& targets) {
    set_weights(solve_proximal(bias_column_f64(features), targets, lambda_, w_).w);
}

void ProximalHead::observe_statistics(const GramStatistics& batch) {
    set_weights(solve_statistics(batch, lambda_, w_));
}

RlsHead::RlsHead(int64_t d, int64_t k, double rho, double lambda)
    : ClosedFormHead(d, k), rho_(rho), lambda_(lambda), prior_(lambda) {}

void RlsHead::observe_batch(const torch::Tensor& features, const torch::Tensor& targets) {
    stats_.scale(rho_);
    prior_ *= rho_;
    stats_.add(bias_column_f64(features), targets);
    set_weights(solve_statistics(stats_, prior_));
}

void RlsHead::observe_statistics(const GramStatistics& batch) {
    stats_.scale(rho_);
    prior_ *= rho_;
    stats_.add(batch);
    set_weights(solve_statistics(stats_, prior_));
}

void FullDataHead::solve_full(const GramStatistics& stats) {
    set_weights(solve_statistics(stats, beta_));
}

}  // namespace liftlab
