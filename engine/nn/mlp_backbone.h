// The feature extractor φ_θ: an MLP whose last hidden layer (width feature_dim, activated) is
// the feature vector fed to the final linear layer.
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

namespace liftlab {

struct MlpBackboneOptions {
    MlpBackboneOptions(int64_t input_dim, int64_t feature_dim)
        : input_dim_(input_dim), feature_dim_(feature_dim) {}
    TORCH_ARG(int64_t, input_dim);
    TORCH_ARG(int64_t, feature_dim);
    TORCH_ARG(std::vector<int64_t>, hidden) = {128, 128};
    TORCH_ARG(std::string, activation) = "tanh";  // tanh | relu | gelu
};

class MlpBackboneImpl : public torch::nn::Module {
public:
    explicit MlpBackboneImpl(const MlpBackboneOptions& options);
    torch::Tensor forward(torch::Tensor x);
    int64_t feature_dim() const { return options_.feature_dim(); }
    const MlpBackboneOptions& options() const { return options_; }
    const torch::nn::ModuleList& layers() const { return layers_; }

private:
    torch::Tensor activate(const torch::Tensor& h) const;
    MlpBackboneOptions options_;
    torch::nn::ModuleList layers_;
};
TORCH_MODULE(MlpBackbone);

}  // namespace liftlab
