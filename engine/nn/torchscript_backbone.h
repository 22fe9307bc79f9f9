// A user's TorchScript module as the backbone φ_θ of the closed-form family (spec backbone.kind
// "torchscript", docs/your-model.md): forward(x) maps a batch of the task's inputs to
// features n × d (n × s × d for operator learning); d is read from a probe forward pass.
#pragma once
#include <torch/script.h>

#include <string>
#include <vector>

#include "nn/feature_backbone.h"

namespace liftlab {

struct BackboneSpec;
struct Dataset;

class TorchScriptBackbone : public FeatureBackbone {
public:
    TorchScriptBackbone(torch::jit::Module module, std::string path, std::string sha256,
                        int64_t feature_dim);
    torch::Tensor features(const torch::Tensor& x) override;
    std::vector<torch::Tensor> parameters() override;
    int64_t feature_dim() const override { return feature_dim_; }
    void to(torch::Dtype dtype) override { module_.to(dtype); }
    void to(const torch::Device& device) override { module_.to(device); }
    void set_training(bool on) override { module_.train(on); }
    torch::jit::Module& module() { return module_; }
    const std::string& sha256() const { return sha256_; }  // of the file as loaded

private:
    torch::jit::Module module_;
    std::string path_, sha256_;
    int64_t feature_dim_;
};

// Loads spec.script (re-initialised from LibTorch's global generator when spec.init is "reset")
// and checks it against the data: one forward pass, in eval mode and without gradients, on the
// first training rows must give finite float32 features whose leading sizes are the targets'
// (n × d, or n × s × d against n × s × k targets). Throws SpecError("backbone.script",
// "<path>: what is wrong").
std::shared_ptr<TorchScriptBackbone> load_torchscript_backbone(const BackboneSpec& spec,
                                                               const Dataset& data);

}  // namespace liftlab
