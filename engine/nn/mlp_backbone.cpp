#include "nn/mlp_backbone.h"

#include "nn/fast_tanh.h"

namespace liftlab {

MlpBackboneImpl::MlpBackboneImpl(const MlpBackboneOptions& options) : options_(options) {
    int64_t in = options.input_dim();
    std::vector<int64_t> widths = options.hidden();
    widths.push_back(options.feature_dim());
    for (int64_t w : widths) {
        layers_->push_back(torch::nn::Linear(in, w));  // LibTorch's default (Kaiming-uniform) init
        in = w;
    }
    register_module("layers", layers_);
}

torch::Tensor MlpBackboneImpl::activate(const torch::Tensor& h) const {
    if (options_.activation() == "relu") return torch::relu(h);
    if (options_.activation() == "gelu") return torch::gelu(h);
    return fast_tanh(h);
}

torch::Tensor MlpBackboneImpl::forward(torch::Tensor x) {
    if (x.dim() > 2) x = x.flatten(1);  // images: every pixel is an input
    for (const auto& layer : *layers_) x = activate(layer->as<torch::nn::Linear>()->forward(x));
    return x;
}

}  // namespace liftlab
