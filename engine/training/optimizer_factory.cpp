#include "training/optimizer_factory.h"

#include <algorithm>

#include "spec/experiment_spec.h"
#include "training/fused_adam.h"

namespace liftlab {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const std::string& kind, double lr,
                                                        double momentum,
                                                        std::vector<torch::Tensor> params) {
    if (kind == "sgd")
        return std::make_unique<torch::optim::SGD>(std::move(params),
                                                   torch::optim::SGDOptions(lr).momentum(momentum));
    // Adam in one fused pass per tensor where FusedAdam takes the parameters (contiguous float
    // CPU tensors); LibTorch's Adam elsewhere (another device).
    const bool fusable = std::all_of(params.begin(), params.end(), [](const torch::Tensor& p) {
        return p.device().is_cpu() && p.is_contiguous() &&
               (p.scalar_type() == torch::kFloat32 || p.scalar_type() == torch::kFloat64);
    });
    if (fusable) return std::make_unique<FusedAdamOptimizer>(std::move(params), lr);
    return std::make_unique<torch::optim::Adam>(std::move(params), torch::optim::AdamOptions(lr));
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerSpec& spec, double lr,
                                                        std::vector<torch::Tensor> params) {
    return make_optimizer(spec.kind, lr, spec.momentum, std::move(params));
}

}  // namespace liftlab
