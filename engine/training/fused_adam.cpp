#include "training/fused_adam.h"

#include "run/state_archive.h"

#include <cmath>
#include <stdexcept>

#include "training/adam_kernel.h"

namespace liftlab {

namespace {

constexpr double kClipEps = 1e-6;  // torch::nn::utils::clip_grad_norm_'s

}  // namespace

FusedAdam::FusedAdam(std::vector<torch::Tensor> params, double lr, double beta1, double beta2,
                     double eps)
    : params_(std::move(params)), lr_(lr), beta1_(beta1), beta2_(beta2), eps_(eps) {
    if (!(lr > 0) || !(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1) || !(eps > 0))
        throw std::invalid_argument("FusedAdam: need lr > 0, 0 ≤ β < 1, ε > 0");
    for (const auto& p : params_) {
        if (!p.is_contiguous() || p.device().type() != torch::kCPU ||
            (p.scalar_type() != torch::kFloat32 && p.scalar_type() != torch::kFloat64))
            throw std::invalid_argument(
                "FusedAdam: parameters must be contiguous float32/float64 CPU tensors");
        m_.push_back(torch::zeros_like(p));
        v_.push_back(torch::zeros_like(p));
    }
    factored_.resize(params_.size());
}

void FusedAdam::factored(const std::vector<FactoredWeight>& weights) {
    for (const auto& w : weights) {
        size_t i = 0;
        while (i < params_.size() &&
               params_[i].unsafeGetTensorImpl() != w.weight.unsafeGetTensorImpl())
            ++i;
        if (i == params_.size() || w.weight.dim() != 2)
            throw std::invalid_argument(
                "FusedAdam::factored: not a 2-D parameter of this optimizer");
        factored_[i] = w.gradient;
    }
}

void FusedAdam::save_state(StateArchive& a, const std::string& prefix) const {
    a.put_tensors(prefix + "m", m_);
    a.put_tensors(prefix + "v", v_);
    a.put_int(prefix + "t", t_);
    a.put_real(prefix + "lr", lr_);
}

void FusedAdam::load_state(const StateArchive& a, const std::string& prefix) {
    a.copy_into(prefix + "m", m_);
    a.copy_into(prefix + "v", v_);
    t_ = a.integer(prefix + "t");
    lr_ = a.real(prefix + "lr");
}

void FusedAdam::set_lr(double lr) {
    if (!(lr > 0)) throw std::invalid_argument("FusedAdam: need lr > 0");
    lr_ = lr;
}

void FusedAdam::zero_grad() {
    for (auto& p : params_) p.mutable_grad() = torch::Tensor();
    for (auto& f : factored_)
        if (f) f->clear();
}

double FusedAdam::step(double max_norm) {
    torch::NoGradGuard no_grad;
    double sq = 0;
    for (size_t i = 0; max_norm > 0 && i < params_.size(); ++i) {
        if (factored_[i] && !factored_[i]->empty()) {
            sq += factored_[i]->squared_norm();
            continue;
        }
        const auto& g = params_[i].grad();
        if (!g.defined()) continue;
        const double n = g.norm().item<double>();
        sq += n * n;
    }
    const double norm = std::sqrt(sq);
    const double c = max_norm > 0 ? std::min(1.0, max_norm / (norm + kClipEps)) : 1.0;
    ++t_;
    const double bc1 = 1.0 - std::pow(beta1_, static_cast<double>(t_));
    const double bc2 = 1.0 - std::pow(beta2_, static_cast<double>(t_));
    AdamCoefficients k;
    k.clip = c;
    k.beta1 = beta1_;
    k.beta2 = beta2_;
    k.step_size = lr_ / bc1;
    k.inv_sqrt_bc2 = 1.0 / std::sqrt(bc2);
    k.eps = eps_;
    for (size_t i = 0; i < params_.size(); ++i) {
        auto& p = params_[i];
        if (factored_[i] && !factored_[i]->empty()) {
            update_factored(i, k);
            continue;
        }
        if (!p.grad().defined()) continue;  // as torch's Adam: no gradient, no update
        const auto g = p.grad().to(p.scalar_type()).contiguous();
        if (p.scalar_type() == torch::kFloat32)
            adam_update(p.data_ptr<float>(), m_[i].data_ptr<float>(), v_[i].data_ptr<float>(),
                        g.data_ptr<float>(), p.numel(), k);
        else
            adam_update(p.data_ptr<double>(), m_[i].data_ptr<double>(), v_[i].data_ptr<double>(),
                        g.data_ptr<double>(), p.numel(), k);
    }
    return norm;
}

FusedAdamOptimizer::FusedAdamOptimizer(std::vector<torch::Tensor> params, double lr)
    : torch::optim::Optimizer(params, std::make_unique<torch::optim::AdamOptions>(lr)),
      fused_(std::move(params), lr) {}

torch::Tensor FusedAdamOptimizer::step(LossClosure closure) {
    torch::Tensor loss;
    if (closure) {
        torch::AutoGradMode enable(true);
        loss = closure();
    }
    fused_.set_lr(static_cast<torch::optim::AdamOptions&>(param_groups().front().options()).lr());
    fused_.step(/*max_norm=*/0.0);
    return loss;
}

void FusedAdam::update_factored(size_t i, const AdamCoefficients& k) {
    auto& p = params_[i];
    const int64_t rows = p.size(0), cols = p.size(1);
    const auto& terms = factored_[i]->terms;
    // Factors stacked: g as K × rows, h as K × cols, in the parameter's dtype.
    std::vector<torch::Tensor> gs, hs;
    for (const auto& [g, h] : terms) {
        if (g.numel() != rows || h.numel() != cols)
            throw std::logic_error("FusedAdam: a factored gradient does not match its parameter");
        gs.push_back(g.reshape({rows}).to(p.scalar_type()));
        hs.push_back(h.reshape({cols}).to(p.scalar_type()));
    }
    const auto g = torch::stack(gs).contiguous(), h = torch::stack(hs).contiguous();
    const auto K = static_cast<int64_t>(terms.size());
    if (p.scalar_type() == torch::kFloat32)
        adam_update_outer(p.data_ptr<float>(), m_[i].data_ptr<float>(), v_[i].data_ptr<float>(),
                          rows, cols, g.data_ptr<float>(), h.data_ptr<float>(), K, k);
    else
        adam_update_outer(p.data_ptr<double>(), m_[i].data_ptr<double>(), v_[i].data_ptr<double>(),
                          rows, cols, g.data_ptr<double>(), h.data_ptr<double>(), K, k);
}

}  // namespace liftlab
