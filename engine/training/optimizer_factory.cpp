#include "training/optimizer_factory.h"

#include "spec/experiment_spec.h"

namespace liftlab {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const std::string& kind, double lr,
                                                        double momentum,
                                                        std::vector<torch::Tensor> params) {
    if (kind == "sgd")
        return std::make_unique<torch::optim::SGD>(std::move(params),
                                                   torch::optim::SGDOptions(lr).momentum(momentum));
    return std::make_unique<torch::optim::Adam>(std::move(params), torch::optim::AdamOptions(lr));
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerSpec& spec, double lr,
                                                        std::vector<torch::Tensor> params) {
    return make_optimizer(spec.kind, lr, spec.momentum, std::move(params));
}

}  // namespace liftlab
