// sgd / adam / ce: an ordinary linear layer trained by the optimizer.
#pragma once
#include "lastlayer/last_layer.h"

namespace liftlab {

class GradientHead : public LastLayer {
public:
    GradientHead(int64_t feature_dim, int64_t outputs);
    torch::Tensor predict(const torch::Tensor& features) const override;
    std::vector<torch::Tensor> parameters() override;
    torch::Tensor weights() const override;
    void to(const torch::Device& device) override { linear_->to(device); }
    void load_weights(const torch::Tensor& w) override;

private:
    torch::nn::Linear linear_;
};

}  // namespace liftlab
