#include "lastlayer/closed_form_head.h"

#include <stdexcept>

#include "core/c_numbers.h"
#include "core/errors.h"
#include "run/state_archive.h"

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

void ClosedFormHead::save_state(StateArchive& a, const std::string& prefix) const {
    a.put(prefix + "w", w_);
}

void ClosedFormHead::load_state(const StateArchive& a, const std::string& prefix) {
    const auto w = a.tensor(prefix + "w");
    if (w.sizes() != w_.sizes() || w.scalar_type() != w_.scalar_type())
        throw DataError("state", 0, "closed-form head: W does not fit this run");
    set_weights(w.to(w_.device()));
}

void ClosedFormHead::load_weights(const torch::Tensor& w) {
    if (w.sizes() != w_.sizes())
        throw std::invalid_argument("the last layer's W does not fit this head");
    set_weights(w.detach().to(w_.device(), w_.scalar_type()).clone());
}

void RlsHead::save_state(StateArchive& a, const std::string& prefix) const {
    ClosedFormHead::save_state(a, prefix);
    a.put_int(prefix + "count", stats_.count);
    a.put_real(prefix + "prior", prior_);
    if (stats_.gram.defined()) {
        a.put(prefix + "gram", stats_.gram);
        a.put(prefix + "cross", stats_.cross);
    }
}

void RlsHead::load_state(const StateArchive& a, const std::string& prefix) {
    ClosedFormHead::load_state(a, prefix);
    stats_.count = a.integer(prefix + "count");
    prior_ = a.real(prefix + "prior");
    if (a.has(prefix + "gram")) {
        stats_.gram = a.tensor(prefix + "gram").to(w_.device());
        stats_.cross = a.tensor(prefix + "cross").to(w_.device());
    } else {
        stats_.gram = torch::Tensor();
        stats_.cross = torch::Tensor();
    }
}

namespace {
// The one setting of a closed form: `key` must be `own`, `value` in its range.
void check_head_setting(const std::string& key, const char* own, double value, bool valid,
                        const char* rule) {
    if (key != own)
        throw std::invalid_argument(std::string("this closed form's live setting is '") + own +
                                    "', not '" + key + "'");
    if (!valid) throw std::invalid_argument(key + " " + rule + ", got " + c_shortest(value));
}
}  // namespace

void RidgeHead::set_setting(const std::string& key, double value) {
    check_head_setting(key, "beta", value, value >= 0, "must be non-negative");
    beta_ = value;
}

void ProximalHead::set_setting(const std::string& key, double value) {
    check_head_setting(key, "lambda", value, value >= 0, "must be non-negative");
    lambda_ = value;
}

void RlsHead::set_setting(const std::string& key, double value) {
    check_head_setting(key, "rho", value, value > 0 && value <= 1, "must lie in (0, 1]");
    rho_ = value;
}

void FullDataHead::set_setting(const std::string& key, double value) {
    check_head_setting(key, "beta", value, value >= 0, "must be non-negative");
    beta_ = value;
}

}  // namespace liftlab
