#include "nn/conv_backbone.h"

#include <stdexcept>

namespace liftlab {

ConvBackboneImpl::ConvBackboneImpl(const ConvBackboneOptions& options) {
    int64_t in = options.in_channels(), size = options.image_size();
    for (int64_t c : options.channels()) {
        convs_->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, c, 5).padding(2)));
        in = c;
        size /= 2;
        if (size < 1)
            throw std::invalid_argument("ConvBackbone: too many blocks for the image size");
    }
    register_module("convs", convs_);
    dense_ = register_module("dense", torch::nn::Linear(in * size * size, options.feature_dim()));
}

torch::Tensor ConvBackboneImpl::forward(torch::Tensor x) {
    for (const auto& conv : *convs_)
        x = torch::max_pool2d(torch::relu(conv->as<torch::nn::Conv2d>()->forward(x)), 2);
    return torch::relu(dense_->forward(x.flatten(1)));
}

}  // namespace liftlab
