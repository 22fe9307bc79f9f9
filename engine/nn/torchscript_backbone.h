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
    // row_dims: the leading dimensions of a row (1; 2 on a grid); forward's output is flattened
    // past them.
    TorchScriptBackbone(torch::jit::Module module, std::string path, std::string sha256,
                        int64_t feature_dim, int64_t row_dims);
    torch::Tensor features(const torch::Tensor& x) override;
    std::vector<torch::Tensor> parameters() override;
    std::vector<std::pair<std::string, torch::Tensor>> named_parameters() override;
    int64_t feature_dim() const override { return feature_dim_; }
    void to(torch::Dtype dtype) override { module_.to(dtype); }
    void to(const torch::Device& device) override { module_.to(device); }
    void set_training(bool on) override { module_.train(on); }
    torch::jit::Module& module() { return module_; }
    const std::string& sha256() const { return sha256_; }  // of the file as loaded
    // TorchScript code that turns `value` (forward's value) into the n × d features, as
    // features() does: the tuple element or dict entry, then the flattening.
    std::string features_expression(const std::string& value) const;
    void set_output_selector(std::string selector) { selector_ = std::move(selector); }

private:
    torch::jit::Module module_;
    std::string path_, sha256_;
    int64_t feature_dim_;
    int64_t row_dims_;
    std::string selector_;  // "", "[0]" or "[\"features\"]" (torchscript_forward)
};

// Loads spec.script (re-initialised from LibTorch's global generator when spec.init is "reset")
// and checks it against the data: one forward pass, in eval mode and without gradients, on the
// first training rows must give finite floating-point features (float64 or half converted to
// float32) whose leading sizes are the targets'
// (n × d, or n × s × d against n × s × k targets; any further dimensions, n × c × h × w say,
// are flattened into d; of a tuple the first element, of a dict the entry "features": see
// torchscript_forward). Throws SpecError("backbone.script", "<path>: what is wrong").
std::shared_ptr<TorchScriptBackbone> load_torchscript_backbone(const BackboneSpec& spec,
                                                               const Dataset& data);

}  // namespace liftlab
