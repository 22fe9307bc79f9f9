// The backbone φ_θ seen by the trainers: anything that maps inputs to features (…, d). Wraps a
// LibTorch module so MLP, FNO-1d and CNN backbones share one training loop and one last layer.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <vector>

namespace liftlab {

class FeatureBackbone {
public:
    virtual ~FeatureBackbone() = default;
    // Features with the feature dimension last: n × d, or n × s × d for operator learning.
    virtual torch::Tensor features(const torch::Tensor& x) = 0;
    virtual std::vector<torch::Tensor> parameters() = 0;
    virtual int64_t feature_dim() const = 0;
    virtual void to(torch::Dtype dtype) = 0;
    virtual void to(const torch::Device& device) = 0;
    // Training or evaluation mode (dropout, batch norm); the built-in backbones have neither.
    virtual void set_training(bool on) {}
};

// Adapts a TORCH_MODULE holder whose forward() returns features.
template <typename Holder>
class ModuleBackbone : public FeatureBackbone {
public:
    ModuleBackbone(Holder module, int64_t feature_dim)
        : module_(std::move(module)), feature_dim_(feature_dim) {}
    torch::Tensor features(const torch::Tensor& x) override { return module_->forward(x); }
    std::vector<torch::Tensor> parameters() override { return module_->parameters(); }
    int64_t feature_dim() const override { return feature_dim_; }
    void to(torch::Dtype dtype) override { module_->to(dtype); }
    void to(const torch::Device& device) override { module_->to(device); }
    Holder& module() { return module_; }

private:
    Holder module_;
    int64_t feature_dim_;
};

struct BackboneSpec;
struct Dataset;
// Builds the backbone a spec names for the shapes of a data set (seeded by the caller).
std::shared_ptr<FeatureBackbone> make_backbone(const BackboneSpec& spec, const Dataset& data);

}  // namespace liftlab
