#include "training/fused_adam.h"

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
}

void FusedAdam::zero_grad() {
    for (auto& p : params_) p.mutable_grad() = torch::Tensor();
}

double FusedAdam::step(double max_norm) {
    torch::NoGradGuard no_grad;
    double sq = 0;
    for (const auto& p : params_) {
        const auto& g = p.grad();
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

}  // namespace liftlab
