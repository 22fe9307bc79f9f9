// The backbone φ_θ seen by the trainers: anything that maps inputs to features (…, d). Wraps a
// LibTorch module so MLP, FNO-1d and CNN backbones share one training loop and one last layer.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace liftlab {

class FeatureBackbone {
public:
    virtual ~FeatureBackbone() = default;
    // Features with the feature dimension last: n × d, or n × s × d for operator learning.
    virtual torch::Tensor features(const torch::Tensor& x) = 0;
    virtual std::vector<torch::Tensor> parameters() = 0;
    // The same parameters with their dotted names ("layers.0.weight"), in the same order.
    virtual std::vector<std::pair<std::string, torch::Tensor>> named_parameters() = 0;
    // Those that require gradients: what an optimizer trains (backbone.freeze and a TorchScript
    // file's own requires_grad=False leave the others fixed).
    std::vector<torch::Tensor> trainable_parameters() {
        std::vector<torch::Tensor> out;
        for (auto& p : parameters())
            if (p.requires_grad()) out.push_back(p);
        return out;
    }
    // No parameter is trained: the features are a fixed function of the inputs (a linear probe).
    bool fully_frozen() { return trainable_parameters().empty(); }
    virtual int64_t feature_dim() const = 0;
    virtual void to(torch::Dtype dtype) = 0;
    virtual void to(const torch::Device& device) = 0;
    // Training or evaluation mode (dropout, batch norm); the built-in backbones have neither.
    // A fully frozen backbone stays in evaluation mode (training/method_trainer.h).
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
    std::vector<std::pair<std::string, torch::Tensor>> named_parameters() override {
        std::vector<std::pair<std::string, torch::Tensor>> out;
        for (const auto& p : module_->named_parameters()) out.emplace_back(p.key(), p.value());
        return out;
    }
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
struct FreezeResolution;
// Builds the backbone a spec names for the shapes of a data set (seeded by the caller), with
// backbone.freeze applied (nn/backbone_freeze.h).
// `freeze`, when given, receives what is fixed.
std::shared_ptr<FeatureBackbone> make_backbone(const BackboneSpec& spec, const Dataset& data,
                                               FreezeResolution* freeze = nullptr);

}  // namespace liftlab
