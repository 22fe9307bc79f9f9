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

}  // namespace liftlab
