#include "lastlayer/gradient_head.h"

namespace liftlab {

GradientHead::GradientHead(int64_t feature_dim, int64_t outputs) : linear_(feature_dim, outputs) {}

torch::Tensor GradientHead::predict(const torch::Tensor& features) const {
    return torch::nn::functional::linear(features, linear_->weight, linear_->bias);
}

std::vector<torch::Tensor> GradientHead::parameters() {
    return linear_->parameters();
}

torch::Tensor GradientHead::weights() const {
    torch::NoGradGuard no_grad;
    return torch::cat({linear_->weight.t(), linear_->bias.unsqueeze(0)}, 0).to(torch::kFloat64);
}

void GradientHead::load_weights(const torch::Tensor& w) {
    const int64_t d = linear_->weight.size(1), k = linear_->weight.size(0);
    if (w.dim() != 2 || w.size(0) != d + 1 || w.size(1) != k)
        throw std::invalid_argument("the last layer's W does not fit this head");
    torch::NoGradGuard no_grad;
    const auto v = w.detach().to(linear_->weight.device(), linear_->weight.scalar_type());
    linear_->weight.copy_(v.narrow(0, 0, d).t());
    linear_->bias.copy_(v[d]);
}

}  // namespace liftlab
