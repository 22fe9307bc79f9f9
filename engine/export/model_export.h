// The trained model as a TorchScript file (docs/your-model.md): what a PyTorch user
// loads with torch.jit.load and calls, written to the run folder's models/ for every method and
// seed that has one. Backbone + last layer: forward(x) → predictions (n × k, or n × s × k);
// ICNN energy models: forward(x) → E(x) (n), with the weights the run evaluates (the lifter's
// emitted at the reference set) baked in, and the attribute log_z (the last evaluation's) so that
// E(x).mean() + log_z is the logged test NLL.
#pragma once
#include <torch/script.h>

#include <optional>
#include <string>
#include <vector>

namespace liftlab {

class FeatureBackbone;
class IcnnImpl;
struct Dataset;

// backbone(x) followed by the last layer of (d+1) × k weights (the bias last), as float32.
// Nothing for a backbone without an export (the built-in cnn and fno1d).
std::optional<torch::jit::Module> backbone_head_module(FeatureBackbone& backbone,
                                                       const torch::Tensor& head_weights);

// The ICNN with `weights` (constrained, then free: IcnnImpl::energy_with_weights' list) baked in.
torch::jit::Module icnn_module(IcnnImpl& icnn, const std::vector<torch::Tensor>& weights);

// Adds a float attribute (log_z, quadrature bounds) to an exported module.
void add_float_attribute(torch::jit::Module& module, const std::string& name, double value);

// The test split as a TorchScript module with the buffers x, y (and labels for classification),
// so that a PyTorch user reproduces a logged test metric: torch.jit.load(path).x.
torch::jit::Module test_data_module(const Dataset& data);

// module.save(path) through a temporary file and a rename; WriteError on failure.
void save_module(torch::jit::Module& module, const std::string& path);

}  // namespace liftlab
