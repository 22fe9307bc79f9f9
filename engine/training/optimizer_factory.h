// The one optimizer builder of every trainer: `kind` is an optimizer kind of the spec
// (optimizer.kind, or a gradient method's own: methods/method_registry.h optimizer_kinds()).
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

namespace liftlab {

struct OptimizerSpec;

// SGD with `momentum`, or Adam (momentum unused), on `params` with step size `lr`.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const std::string& kind, double lr,
                                                        double momentum,
                                                        std::vector<torch::Tensor> params);
// The spec's optimizer (kind, momentum) with step size `lr`.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerSpec& spec, double lr,
                                                        std::vector<torch::Tensor> params);

class StateArchive;
// The state of an optimizer make_optimizer built (run --resume): FusedAdam's moments, SGD's
// momentum buffers. Throws std::runtime_error for one it cannot save (LibTorch's Adam, used off
// the CPU).
void save_optimizer_state(torch::optim::Optimizer& optimizer, StateArchive& a,
                          const std::string& prefix);
void load_optimizer_state(torch::optim::Optimizer& optimizer, const StateArchive& a,
                          const std::string& prefix);

}  // namespace liftlab
