#include "training/optimizer_factory.h"

#include <algorithm>

#include "run/state_archive.h"
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

namespace {
std::vector<torch::Tensor> optimizer_parameters(torch::optim::Optimizer& o) {
    std::vector<torch::Tensor> out;
    for (auto& group : o.param_groups())
        for (auto& p : group.params()) out.push_back(p);
    return out;
}
std::string state_key(const torch::Tensor& p) {
    return c10::guts::to_string(p.unsafeGetTensorImpl());
}
}  // namespace

void save_optimizer_state(torch::optim::Optimizer& optimizer, StateArchive& a,
                          const std::string& prefix) {
    if (auto* fused = dynamic_cast<FusedAdamOptimizer*>(&optimizer)) {
        fused->fused().save_state(a, prefix + "adam.");
        return;
    }
    if (dynamic_cast<torch::optim::SGD*>(&optimizer)) {
        // Momentum buffers, where a step has made one (none without momentum).
        std::vector<torch::Tensor> buffers;
        std::vector<int64_t> present;
        for (const auto& p : optimizer_parameters(optimizer)) {
            const auto it = optimizer.state().find(state_key(p));
            const bool has =
                it != optimizer.state().end() &&
                static_cast<torch::optim::SGDParamState&>(*it->second).momentum_buffer().defined();
            present.push_back(has ? 1 : 0);
            buffers.push_back(
                has ? static_cast<torch::optim::SGDParamState&>(*it->second).momentum_buffer()
                    : torch::zeros_like(p));
        }
        a.put(prefix + "sgd.present", torch::tensor(present, torch::kLong));
        a.put_tensors(prefix + "sgd.momentum", buffers);
        return;
    }
    throw std::runtime_error("the optimizer's state cannot be saved (LibTorch's Adam off the CPU)");
}

void load_optimizer_state(torch::optim::Optimizer& optimizer, const StateArchive& a,
                          const std::string& prefix) {
    if (auto* fused = dynamic_cast<FusedAdamOptimizer*>(&optimizer)) {
        fused->fused().load_state(a, prefix + "adam.");
        return;
    }
    if (dynamic_cast<torch::optim::SGD*>(&optimizer)) {
        const auto params = optimizer_parameters(optimizer);
        const auto present = a.tensor(prefix + "sgd.present");
        std::vector<torch::Tensor> buffers;
        for (const auto& p : params) buffers.push_back(torch::zeros_like(p));
        a.copy_into(prefix + "sgd.momentum", buffers);
        if (present.numel() != static_cast<int64_t>(params.size()))
            throw std::runtime_error("optimizer state: " + std::to_string(present.numel()) +
                                     " parameters saved, the run has " +
                                     std::to_string(params.size()));
        for (size_t i = 0; i < params.size(); ++i) {
            if (present[static_cast<int64_t>(i)].item<int64_t>() == 0) continue;
            auto state = std::make_unique<torch::optim::SGDParamState>();
            state->momentum_buffer(buffers[i]);
            optimizer.state()[state_key(params[i])] = std::move(state);
        }
        return;
    }
    throw std::runtime_error(
        "the optimizer's state cannot be restored (LibTorch's Adam off the CPU)");
}

}  // namespace liftlab
