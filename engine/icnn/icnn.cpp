#include "icnn/icnn.h"

#include <stdexcept>

namespace liftlab {

std::vector<torch::Tensor> trainable_parameters(const torch::nn::Module& module) {
    std::vector<torch::Tensor> out;
    for (const auto& p : module.parameters())
        if (p.requires_grad()) out.push_back(p);
    return out;
}

namespace {
torch::nn::Linear xavier_linear(int64_t in, int64_t out) {
    torch::nn::Linear layer(in, out);
    torch::NoGradGuard no_grad;
    torch::nn::init::xavier_uniform_(layer->weight);
    layer->bias.zero_();
    return layer;
}
}  // namespace

IcnnImpl::IcnnImpl(const IcnnOptions& options) : options_(options) {
    if (options_.script()) {
        build_from_script();
        return;
    }
    if (options_.input_dim() < 1 || options_.width() < 1 || options_.layers() < 1)
        throw std::invalid_argument("icnn: input_dim, width and layers must be positive");
    if (!(options_.quadratic() >= 0))
        throw std::invalid_argument("icnn: the strong convexity c must be non-negative");
    const int64_t d = options_.input_dim();
    const int64_t w = options_.width();
    input_layer_ = register_module("input_layer", xavier_linear(d, w));
    for (int64_t i = 1; i < options_.layers(); ++i) {
        skip_layers_.push_back(register_module("skip_" + std::to_string(i), xavier_linear(d, w)));
        shapes_.push_back({w, w});
    }
    shapes_.push_back({1, w});
    auto w_x = torch::empty({1, d});
    torch::nn::init::xavier_uniform_(w_x);
    w_x_ = register_parameter("w_x", w_x);
    for (const auto& p : free_parameters()) free_shapes_.push_back(p.sizes().vec());
    strategy_ =
        make_positivity(options_.strategy(), shapes_, free_shapes_, d, options_.positivity());
    register_module("positivity", strategy_);
    // Every tensor is emitted: the template is frozen (it receives no gradient and is unused).
    if (strategy_->emits_free())
        for (auto& p : free_parameters()) p.requires_grad_(false);
}

void IcnnImpl::build_from_script() {
    auto& script = *options_.script();
    if (script.input_dim() != options_.input_dim())
        throw std::invalid_argument("icnn: the TorchScript ICNN was checked for " +
                                    std::to_string(script.input_dim()) + "-D inputs, not " +
                                    std::to_string(options_.input_dim()));
    shapes_ = script.constrained_shapes();
    free_shapes_ = script.free_shapes();
    const auto& own = script.own_free();
    for (size_t i = 0; i < own.size(); ++i) {
        // A copy: the trainer's own tensors, whatever the module's slots hold between calls.
        auto t = own[i].detach().clone();
        if (!options_.start_from_file()) {
            // The built-in template's init: Xavier weights, zero biases.
            torch::NoGradGuard no_grad;
            if (t.dim() >= 2)
                torch::nn::init::xavier_uniform_(t);
            else
                t.zero_();
        }
        script_free_.push_back(register_parameter("script_free_" + std::to_string(i), t));
    }
    strategy_ = make_positivity(options_.strategy(), shapes_, free_shapes_, options_.input_dim(),
                                options_.positivity());
    register_module("positivity", strategy_);
    if (options_.start_from_file()) strategy_->start_from(script.own_constrained());
    if (strategy_->emits_free())
        for (auto& p : script_free_) p.requires_grad_(false);
}

std::vector<torch::Tensor> IcnnImpl::free_parameters() const {
    if (options_.script()) return script_free_;
    std::vector<torch::Tensor> out = {input_layer_->weight, input_layer_->bias};
    for (const auto& layer : skip_layers_) {
        out.push_back(layer->weight);
        out.push_back(layer->bias);
    }
    out.push_back(w_x_);
    return out;
}

std::vector<torch::Tensor> IcnnImpl::with_template_free(
    std::vector<torch::Tensor> constrained) const {
    for (const auto& p : free_parameters()) constrained.push_back(p);
    return constrained;
}

torch::Tensor IcnnImpl::energy_with_weights(const torch::Tensor& x,
                                            const std::vector<torch::Tensor>& weights) {
    namespace F = torch::nn::functional;
    if (x.dim() != 2 || x.size(1) != options_.input_dim())
        throw std::invalid_argument("icnn: x must be n × " + std::to_string(options_.input_dim()));
    const size_t nc = shapes_.size(), nf = free_shapes_.size();
    if (weights.size() != nc && weights.size() != nc + nf)
        throw std::invalid_argument("icnn: expected " + std::to_string(nc) +
                                    " constrained tensors, optionally followed by " +
                                    std::to_string(nf) + " free ones; got " +
                                    std::to_string(weights.size()));
    // The free tensors: emitted ones when given, else the template's.
    const std::vector<torch::Tensor> own =
        weights.size() == nc ? free_parameters() : std::vector<torch::Tensor>{};
    auto free = [&](size_t j) -> const torch::Tensor& {
        return weights.size() == nc ? own[j] : weights[nc + j];
    };
    if (options_.script()) {
        std::vector<torch::Tensor> constrained(weights.begin(), weights.begin() + nc), frees;
        for (size_t j = 0; j < nf; ++j) frees.push_back(free(j));
        try {
            return options_.script()->energy(x, constrained, frees);
        } catch (const std::runtime_error& e) {
            throw std::runtime_error(options_.script()->path() + ": " + e.what());
        }
    }
    auto z = torch::softplus(F::linear(x, free(0), free(1)));
    for (size_t i = 0; i < skip_layers_.size(); ++i)
        z = torch::softplus(F::linear(z, weights[i]) +
                            F::linear(x, free(2 + 2 * i), free(3 + 2 * i)));
    const auto out = F::linear(z, weights[nc - 1]).squeeze(1);
    const auto linear = F::linear(x, free(nf - 1)).squeeze(1);
    return out + linear + 0.5 * options_.quadratic() * x.pow(2).sum(/*dim=*/1);
}

torch::Tensor IcnnImpl::energy(const torch::Tensor& x, const torch::Tensor& conditioning_batch) {
    return energy_with_weights(x, strategy_->weights(conditioning_batch));
}

}  // namespace liftlab
