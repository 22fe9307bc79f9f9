#include "icnn/icnn.h"

#include <stdexcept>

namespace liftlab {

namespace {
torch::nn::Linear xavier_linear(int64_t in, int64_t out) {
    torch::nn::Linear layer(in, out);
    torch::NoGradGuard no_grad;
    torch::nn::init::xavier_uniform_(layer->weight);
    layer->bias.zero_();
    return layer;
}
}  // namespace

IcnnImpl::IcnnImpl(const IcnnOptions& options) : options_(options) {
    if (options_.input_dim() < 1 || options_.width() < 1 || options_.layers() < 1)
        throw std::invalid_argument("icnn: input_dim, width and layers must be positive");
    const int64_t d = options_.input_dim();
    const int64_t w = options_.width();
    input_layer_ = register_module("input_layer", xavier_linear(d, w));
    for (int64_t i = 1; i < options_.layers(); ++i) {
        skip_layers_.push_back(register_module("skip_" + std::to_string(i), xavier_linear(d, w)));
        shapes_.push_back({w, w});
    }
    shapes_.push_back({1, w});
    auto w_x = torch::empty({1, d});
    torch::nn::init::xavier_uniform_(w_x);
    w_x_ = register_parameter("w_x", w_x);
    strategy_ = make_positivity(options_.strategy(), shapes_, d);
    register_module("positivity", strategy_);
}

torch::Tensor IcnnImpl::energy_with_weights(const torch::Tensor& x,
                                            const std::vector<torch::Tensor>& constrained) {
    if (x.dim() != 2 || x.size(1) != options_.input_dim())
        throw std::invalid_argument("icnn: x must be n × " + std::to_string(options_.input_dim()));
    if (constrained.size() != shapes_.size())
        throw std::invalid_argument("icnn: expected " + std::to_string(shapes_.size()) +
                                    " constrained tensors");
    auto z = torch::softplus(input_layer_->forward(x));
    for (size_t i = 0; i < skip_layers_.size(); ++i)
        z = torch::softplus(torch::nn::functional::linear(z, constrained[i]) +
                            skip_layers_[i]->forward(x));
    const auto out = torch::nn::functional::linear(z, constrained.back()).squeeze(1);
    const auto linear = torch::nn::functional::linear(x, w_x_).squeeze(1);
    return out + linear + 0.5 * kQuadratic * x.pow(2).sum(/*dim=*/1);
}

torch::Tensor IcnnImpl::energy(const torch::Tensor& x, const torch::Tensor& conditioning_batch) {
    return energy_with_weights(x, strategy_->weights(conditioning_batch));
}

}  // namespace liftlab
