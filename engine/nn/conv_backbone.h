// A small CNN for image classification: blocks of 5×5 conv (padding 2), ReLU, 2×2 max-pool, then a
// dense ReLU layer of width feature_dim. The features feed the last layer.
#pragma once
#include <torch/torch.h>

#include <vector>

namespace liftlab {

struct ConvBackboneOptions {
    ConvBackboneOptions(int64_t in_channels, int64_t image_size, int64_t feature_dim)
        : in_channels_(in_channels), image_size_(image_size), feature_dim_(feature_dim) {}
    TORCH_ARG(int64_t, in_channels);
    TORCH_ARG(int64_t, image_size);  // square images
    TORCH_ARG(int64_t, feature_dim);
    TORCH_ARG(std::vector<int64_t>, channels) = {16, 32};
};

class ConvBackboneImpl : public torch::nn::Module {
public:
    explicit ConvBackboneImpl(const ConvBackboneOptions& options);
    torch::Tensor forward(torch::Tensor x);

private:
    torch::nn::ModuleList convs_;
    torch::nn::Linear dense_{nullptr};
};
TORCH_MODULE(ConvBackbone);

}  // namespace liftlab
