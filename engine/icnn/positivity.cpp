#include "icnn/positivity.h"

#include "core/numeric.h"

#include <cmath>
#include <stdexcept>
#include <utility>

#include "nn/readout_kernel.h"

namespace liftlab {

namespace {
constexpr double kSlackInit = -2.0;     // slack b of a constrained readout → softplus ≈ 0.127
constexpr double kConstantInit = -2.0;  // softplus-const's θ̃
constexpr double kFoldedNormalFloor = 1e-6;  // softplus⁻¹ of the folded-normal draw, floored
constexpr double kStandardiseEps = 1e-5;     // keeps the standardisation finite for a flat h

// θ̃ with softplus(θ̃) = θ for a fork from pgd's θ ≥ 0: log(expm1(max(θ, 10⁻⁶))), the floor the
// folded-normal init uses (θ = 0, pgd's shoulder, has no finite preimage).
torch::Tensor fork_softplus_inverse(const torch::Tensor& theta) {
    return torch::log(torch::expm1(theta.to(torch::kFloat32).clamp_min(kFoldedNormalFloor)));
}

// The constrained θ̃ a forked softplus or lifter takes from the source's pre-readout values.
torch::Tensor fork_theta_tilde(const torch::Tensor& pre, bool source_projected) {
    return source_projected ? fork_softplus_inverse(pre) : pre.to(torch::kFloat32);
}

void check_fork_sizes(const TensorShapes& shapes, const std::vector<torch::Tensor>& pre) {
    if (pre.size() != shapes.size())
        throw std::invalid_argument("fork: the source has " + std::to_string(pre.size()) +
                                    " constrained tensors, this ICNN " +
                                    std::to_string(shapes.size()));
    for (size_t i = 0; i < pre.size(); ++i)
        if (pre[i].sizes().vec() != shapes[i])
            throw std::invalid_argument("fork: constrained tensor " + std::to_string(i) +
                                        " has another shape in the source");
}

int64_t numel_of(const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
}

// |N(0, π/(2 n_in))| with n_in the last dimension (docs/methods.md §3.2: the positive init); 1 for
// a scalar (a user's ICNN may constrain one, e.g. the coefficient of its own quadratic term).
torch::Tensor folded_normal(const std::vector<int64_t>& shape) {
    const double n_in = shape.empty() ? 1.0 : static_cast<double>(shape.back());
    return (torch::randn(shape) * std::sqrt(kPi / (2.0 * n_in))).abs();
}

// One N(0, sd²) draw per element of each shape, in order, as flat vectors: the same values for
// every strategy given the same generator state (PositivityStrategy::perturb_init).
std::vector<torch::Tensor> init_noise_draws(const TensorShapes& shapes, double sd,
                                            at::Generator& gen) {
    std::vector<torch::Tensor> out;
    for (const auto& shape : shapes)
        out.push_back(torch::randn({numel_of(shape)}, gen, torch::kFloat32) * sd);
    return out;
}

void check_shapes(const TensorShapes& shapes) {
    for (const auto& shape : shapes)
        if (numel_of(shape) <= 0)  // a scalar ({}) holds one element
            throw std::invalid_argument("positivity: every tensor shape must be non-empty");
}
}  // namespace

PositivityStrategy::PositivityStrategy(TensorShapes shapes, TensorShapes free_shapes)
    : shapes_(std::move(shapes)), free_shapes_(std::move(free_shapes)) {
    check_shapes(shapes_);
    check_shapes(free_shapes_);
}

std::vector<torch::Tensor> PositivityStrategy::readout(
    const std::vector<torch::Tensor>& pre) const {
    std::vector<torch::Tensor> out;
    out.reserve(pre.size());
    for (size_t i = 0; i < pre.size(); ++i)
        out.push_back(i < shapes_.size() && !projected() ? torch::softplus(pre[i]) : pre[i]);
    return out;
}

void PositivityStrategy::fork_from(const std::vector<torch::Tensor>&, bool,
                                   const std::vector<torch::Tensor>&) {
    throw std::invalid_argument("this positivity strategy cannot start from another's iterate");
}

void PositivityStrategy::perturb_init(double /*sd*/, at::Generator& /*gen*/) {
    throw std::invalid_argument(
        "positivity: this strategy has no pre-positivity parameter to perturb (init_noise)");
}

// ---- pgd -------------------------------------------------------------------------------------

PgdPositivity::PgdPositivity(TensorShapes shapes) : PositivityStrategy(std::move(shapes), {}) {
    for (size_t i = 0; i < shapes_.size(); ++i)
        theta_.push_back(
            register_parameter("theta_" + std::to_string(i), folded_normal(shapes_[i])));
}

std::vector<torch::Tensor> PgdPositivity::pre_readout(const torch::Tensor& /*batch*/) {
    return theta_;
}

void PgdPositivity::start_from(const std::vector<torch::Tensor>& theta) {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < theta_.size(); ++i) theta_[i].copy_(theta.at(i).clamp_min(0.0));
}

void PgdPositivity::fork_from(const std::vector<torch::Tensor>& pre, bool source_projected,
                              const std::vector<torch::Tensor>&) {
    check_fork_sizes(shapes_, pre);
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < theta_.size(); ++i)
        theta_[i].copy_(source_projected ? pre[i] : torch::softplus(pre[i]));
}

void PgdPositivity::perturb_init(double sd, at::Generator& gen) {
    const auto noise = init_noise_draws(shapes_, sd, gen);
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < theta_.size(); ++i) theta_[i].add_(noise[i].view_as(theta_[i]));
    after_step();  // the projection the reference applies right after its perturbation
}

void PgdPositivity::after_step() {
    torch::NoGradGuard no_grad;
    for (auto& t : theta_) t.clamp_min_(0.0);
}

// ---- softplus --------------------------------------------------------------------------------

SoftplusPositivity::SoftplusPositivity(TensorShapes shapes, Init init)
    : PositivityStrategy(std::move(shapes), {}), init_(init) {
    for (size_t i = 0; i < shapes_.size(); ++i) {
        torch::Tensor t;
        if (init == Init::Constant) {
            t = torch::full(shapes_[i], kConstantInit);
        } else {
            // softplus⁻¹(y) = log(expm1(y)), on the floored folded-normal draw.
            t = torch::log(torch::expm1(folded_normal(shapes_[i]).clamp_min(kFoldedNormalFloor)));
        }
        theta_tilde_.push_back(register_parameter("theta_tilde_" + std::to_string(i), t));
    }
}

void SoftplusPositivity::start_from(const std::vector<torch::Tensor>& theta) {
    if (init_ == Init::Constant) return;
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < theta_tilde_.size(); ++i)
        theta_tilde_[i].copy_(torch::log(
            torch::expm1(theta.at(i).to(torch::kFloat32).clamp_min(kFoldedNormalFloor))));
}

void SoftplusPositivity::fork_from(const std::vector<torch::Tensor>& pre, bool source_projected,
                                   const std::vector<torch::Tensor>&) {
    check_fork_sizes(shapes_, pre);
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < theta_tilde_.size(); ++i)
        theta_tilde_[i].copy_(fork_theta_tilde(pre[i], source_projected));
}

void SoftplusPositivity::perturb_init(double sd, at::Generator& gen) {
    if (init_ == Init::Constant)
        throw std::invalid_argument(
            "softplus-const: its constant θ̃ is the point of the variant (no init_noise)");
    const auto noise = init_noise_draws(shapes_, sd, gen);
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < theta_tilde_.size(); ++i)
        theta_tilde_[i].add_(noise[i].view_as(theta_tilde_[i]));
}

std::vector<torch::Tensor> SoftplusPositivity::pre_readout(const torch::Tensor& /*batch*/) {
    return theta_tilde_;
}

// ---- lifter ----------------------------------------------------------------------------------

namespace {

// y = b + Θ h with Θ held fixed (its gradient g hᵀ is collected by a hook on y, factored):
// the products on one read of Θ each (nn/readout_kernel.h); ∂ℓ/∂h = Θᵀ g and ∂ℓ/∂b = g.
struct FactoredReadout : public torch::autograd::Function<FactoredReadout> {
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& h,
                                 const torch::Tensor& weight, const torch::Tensor& bias) {
        ctx->save_for_backward({weight});
        const bool has_bias = bias.numel() > 0;
        ctx->saved_data["bias"] = has_bias;
        const auto w = weight.contiguous();
        if (w.scalar_type() != torch::kFloat32 || h.scalar_type() != torch::kFloat32)
            return has_bias ? torch::addmv(bias, w, h) : torch::mv(w, h);
        const auto code = h.contiguous();
        auto y = torch::empty({w.size(0)}, w.options());
        const auto b = bias.contiguous();
        readout_forward(w.data_ptr<float>(), code.data_ptr<float>(),
                        has_bias ? b.data_ptr<float>() : nullptr, y.data_ptr<float>(), w.size(0),
                        w.size(1));
        return y;
    }
    static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::tensor_list grads) {
        const auto w = ctx->get_saved_variables()[0].contiguous();
        const auto g = grads[0].contiguous();
        torch::Tensor gh;
        if (w.scalar_type() == torch::kFloat32 && g.scalar_type() == torch::kFloat32) {
            gh = torch::empty({w.size(1)}, w.options());
            readout_backward_code(w.data_ptr<float>(), g.data_ptr<float>(), gh.data_ptr<float>(),
                                  w.size(0), w.size(1));
        } else {
            gh = torch::mv(w.t(), g);
        }
        const bool bias = ctx->saved_data["bias"].toBool();
        return {gh, torch::Tensor(), bias ? grads[0] : torch::Tensor()};
    }
};

}  // namespace

LifterPositivity::LifterPositivity(TensorShapes shapes, TensorShapes free_shapes,
                                   const LifterPositivityOptions& options)
    : PositivityStrategy(std::move(shapes), std::move(free_shapes)), options_(options) {
    const auto& widths = options_.body_widths();
    if (widths.empty())
        throw std::invalid_argument("lifter: the body needs at least one layer width");
    for (auto w : widths)
        if (w < 1) throw std::invalid_argument("lifter: every body width must be positive");
    const int64_t features = widths.back();
    if (options_.body()) {
        // The layers are initialised last first: the order in which GCC evaluated the arguments
        // of the variadic Sequential(Linear, ReLU, …) this replaced, so that a seed still draws
        // the same lifter.
        std::vector<torch::nn::Linear> layers(widths.size(), nullptr);
        for (size_t i = widths.size(); i-- > 0;)
            layers[i] = torch::nn::Linear(i == 0 ? options_.input_dim() : widths[i - 1], widths[i]);
        body_ = torch::nn::Sequential();
        for (auto& layer : layers) {
            body_->push_back(layer);
            body_->push_back(torch::nn::ReLU());
        }
        register_module("body", body_);
    } else {
        constant_h_ = register_parameter("constant_h", torch::randn({features}));
    }
    const size_t n_constrained = shapes_.size();
    for (size_t i = 0; i < n_constrained + free_shapes_.size(); ++i) {
        const bool constrained = i < n_constrained;
        const auto& shape = constrained ? shapes_[i] : free_shapes_[i - n_constrained];
        // Default Linear init (U(±1/√d_h) for weight and bias); the slack starts at −2.
        torch::nn::Linear readout(torch::nn::LinearOptions(features, numel_of(shape))
                                      .bias(!constrained || options_.slack()));
        if (constrained && options_.slack()) {
            torch::NoGradGuard no_grad;
            readout->bias.fill_(kSlackInit);
        }
        const std::string name = constrained ? "readout_" + std::to_string(i)
                                             : "free_readout_" + std::to_string(i - n_constrained);
        readouts_.push_back(register_module(name, readout));
    }
}

void LifterPositivity::fork_from(const std::vector<torch::Tensor>& pre, bool source_projected,
                                 const std::vector<torch::Tensor>& free) {
    if (!options_.slack())
        throw std::invalid_argument(
            "lifter-noslack: without the slack b it cannot hold another strategy's θ");
    check_fork_sizes(shapes_, pre);
    if (free.size() != free_shapes_.size())
        throw std::invalid_argument("fork: the source has " + std::to_string(free.size()) +
                                    " free tensors, this ICNN " +
                                    std::to_string(free_shapes_.size()));
    torch::NoGradGuard no_grad;
    // Θ_E = 0: y = b + 0·h = b exactly, whatever the batch (the body keeps its own init and
    // learns once Θ_E moves off zero: ∂ℓ/∂Θ_E = g hᵀ ≠ 0 from the first step).
    for (size_t i = 0; i < readouts_.size(); ++i) {
        const bool constrained = i < shapes_.size();
        const auto& value =
            constrained ? fork_theta_tilde(pre[i], source_projected) : free[i - shapes_.size()];
        if (value.numel() != readouts_[i]->bias.numel())
            throw std::invalid_argument("fork: free tensor " + std::to_string(i - shapes_.size()) +
                                        " has another shape in the source");
        readouts_[i]->weight.zero_();
        readouts_[i]->bias.copy_(value.reshape({-1}));
    }
}

void LifterPositivity::perturb_init(double sd, at::Generator& gen) {
    if (!options_.slack())
        throw std::invalid_argument("lifter-noslack: there is no slack bias to draw (init_noise)");
    const auto noise = init_noise_draws(shapes_, sd, gen);
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < shapes_.size(); ++i) readouts_[i]->bias.copy_(noise[i]);
}

void LifterPositivity::push(const std::vector<torch::Tensor>& masks, double depth) {
    if (!options_.slack())
        throw std::invalid_argument("lifter-noslack: there is no slack bias to push");
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < shapes_.size() && i < masks.size(); ++i) {
        const auto m = masks[i].reshape({-1}).to(torch::kBool);
        readouts_[i]->bias.masked_fill_(m, depth);
        readouts_[i]->weight.masked_fill_(m.unsqueeze(1), 0.0);
    }
}

void LifterPositivity::set_independent_batch(const torch::Tensor& independent_batch) {
    independent_batch_ = independent_batch.detach();
}

torch::Tensor LifterPositivity::body_features(const torch::Tensor& batch) {
    torch::Tensor h;
    if (!options_.body()) {
        h = constant_h_;
    } else {
        torch::Tensor x = batch;
        if (options_.decoupled()) {
            if (!independent_batch_.defined())
                throw std::logic_error(
                    "lifter-decoupled: call set_independent_batch(X′) before pre_readout()");
            x = independent_batch_;
        }
        if (x.dim() != 2 || x.size(1) != options_.input_dim())
            throw std::invalid_argument("lifter: conditioning batch must be n × " +
                                        std::to_string(options_.input_dim()));
        h = body_->forward(x.detach()).mean(/*dim=*/0);  // DeepSets: mean-pool over samples
    }
    return options_.pool_norm() ? pool_norm(h) : h;
}

torch::Tensor pool_norm(const torch::Tensor& h) {
    // Unbiased std, ε added to the std (not to the variance), as the reference.
    return (h - h.mean()) / (h.std(/*unbiased=*/true) + kStandardiseEps);
}

std::vector<FactoredWeight> LifterPositivity::factor_gradients() {
    if (factored_.empty())
        for (size_t i = 0; i < readouts_.size(); ++i)
            factored_.push_back(std::make_shared<OuterProductGradient>());
    std::vector<FactoredWeight> out;
    for (size_t i = 0; i < readouts_.size(); ++i)
        out.push_back({readouts_[i]->weight, factored_[i]});
    return out;
}

std::vector<torch::Tensor> LifterPositivity::pre_readout(const torch::Tensor& batch) {
    const auto h = body_features(batch);
    const size_t n_constrained = shapes_.size();
    std::vector<torch::Tensor> out;
    out.reserve(readouts_.size());
    for (size_t i = 0; i < readouts_.size(); ++i) {
        const auto& shape = i < n_constrained ? shapes_[i] : free_shapes_[i - n_constrained];
        // Linear on the one pooled code as a matrix–vector product: its backward is an outer
        // product and a gemv, where Linear's (a 1-row gemm) packs and zeroes the whole weight.
        const auto& r = readouts_[i];
        // Factored: Θ enters detached, its gradient g hᵀ is kept as (g, h) by a hook on the
        // output (∂ℓ/∂h = Θᵀg and ∂ℓ/∂b = g still flow through autograd).
        const bool factored = !factored_.empty() && torch::GradMode::is_enabled();
        // (No slack: an empty bias, as autograd::Function takes defined tensors only.)
        auto y = factored ? FactoredReadout::apply(
                                h, r->weight.detach(),
                                r->bias.defined() ? r->bias : torch::empty({0}, h.options()))
                 : r->bias.defined() ? torch::addmv(r->bias, r->weight, h)
                                     : torch::mv(r->weight, h);
        if (factored && !y.requires_grad())
            throw std::logic_error("lifter: a factored readout's output needs a gradient");
        if (factored) {
            std::shared_ptr<OuterProductGradient> slot = factored_[i];
            const auto code = h.detach().contiguous();
            y.register_hook([slot, code](const torch::Tensor& g) {
                slot->terms.emplace_back(g.detach().contiguous(), code);
            });
        }
        out.push_back(y.view(shape));
    }
    return out;
}

void PositivityStrategy::push(const std::vector<torch::Tensor>&, double) {
    throw std::invalid_argument("this positivity strategy cannot be pushed into the shoulder");
}

void PgdPositivity::push(const std::vector<torch::Tensor>& masks, double) {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < theta_.size() && i < masks.size(); ++i)
        theta_[i].masked_fill_(masks[i].to(torch::kBool), 0.0);  // pgd's shoulder: θ = 0
}

void SoftplusPositivity::push(const std::vector<torch::Tensor>& masks, double depth) {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < theta_tilde_.size() && i < masks.size(); ++i)
        theta_tilde_[i].masked_fill_(masks[i].to(torch::kBool), depth);
}

}  // namespace liftlab
