#include "flows/cp_flow.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace liftlab {

namespace {

constexpr double kLogTwoPi = 1.8378770664093454836;  // log(2π)

// log det of a batch of SPD matrices from their Cholesky factors: 2 Σ log L_ii.
torch::Tensor spd_log_det(const torch::Tensor& h) {
    // Autograd's rows are symmetric only up to rounding; Cholesky reads one triangle.
    const auto sym = 0.5 * (h + h.transpose(-2, -1));
    const auto [factor, info] = torch::linalg_cholesky_ex(sym);
    const auto bad = info.ne(0).nonzero();
    if (bad.numel() > 0)
        throw std::runtime_error("cp_flow: the Hessian of row " +
                                 std::to_string(bad[0][0].item<int64_t>()) +
                                 " is not positive definite in floating point");
    return 2.0 * factor.diagonal(/*offset=*/0, /*dim1=*/-2, /*dim2=*/-1).log().sum(-1);
}

}  // namespace

CpFlowImpl::CpFlowImpl(const CpFlowOptions& options) : options_(options) {
    if (options_.input_dim() < 1)
        throw std::invalid_argument("cp_flow: input_dim must be positive, got " +
                                    std::to_string(options_.input_dim()));
    if (!options_.scales() && !(options_.quadratic() > 0))
        throw std::invalid_argument(
            "cp_flow: without the scales the ICNN's strong convexity c must be positive (the "
            "Hessian's only floor)");
    icnn_ = register_module("icnn", Icnn(IcnnOptions(options_.input_dim())
                                             .width(options_.width())
                                             .layers(options_.layers())
                                             .strategy(options_.strategy())
                                             .quadratic(options_.quadratic())
                                             .positivity(options_.positivity())));
    if (!options_.scales()) return;
    // softplus(log(e − 1)) = 1: at init F = ICNN(x) + ||x||²/2.
    const double unit = std::log(std::exp(1.0) - 1.0);
    w0_ = register_parameter("w0", torch::full({}, unit));
    w1_ = register_parameter("w1", torch::full({}, unit));
}

torch::Tensor CpFlowImpl::quadratic_scale() const {
    return options_.scales() ? torch::softplus(w0_) : torch::zeros({});
}

torch::Tensor CpFlowImpl::icnn_scale() const {
    return options_.scales() ? torch::softplus(w1_) : torch::ones({});
}

void CpFlowImpl::check_input(const torch::Tensor& x) const {
    const std::string want = "n × " + std::to_string(options_.input_dim());
    if (!x.defined() || x.dim() != 2 || x.size(1) != options_.input_dim())
        throw std::invalid_argument(
            "cp_flow: x must be " + want + ", got " +
            (x.defined() ? c10::str(x.sizes()) : std::string("an undefined tensor")));
    const auto dtype = icnn_->free_parameters().front().scalar_type();
    if (x.scalar_type() != dtype)
        throw std::invalid_argument(std::string("cp_flow: x has dtype ") +
                                    c10::toString(x.scalar_type()) + " but the module is " +
                                    c10::toString(dtype) +
                                    " (convert x or call module->to(dtype))");
}

torch::Tensor CpFlowImpl::potential(const torch::Tensor& x,
                                    const std::vector<torch::Tensor>& constrained) {
    check_input(x);
    const auto energy = icnn_->energy_with_weights(x, constrained);
    if (!options_.scales()) return energy;
    return torch::softplus(w1_) * energy + torch::softplus(w0_) * 0.5 * x.pow(2).sum(/*dim=*/1);
}

CpFlowImpl::Derivatives CpFlowImpl::derivatives(const torch::Tensor& x,
                                                const std::vector<torch::Tensor>& constrained,
                                                bool with_hessian) {
    check_input(x);
    Derivatives out;
    out.create_graph = torch::GradMode::is_enabled();
    torch::AutoGradMode enable_grad(true);
    out.x = x.requires_grad() ? x : x.detach().requires_grad_(true);
    const auto total = potential(out.x, constrained).sum();
    // f needs its own graph when the Hessian is taken from it, or when the caller trains on it.
    const bool graph_of_f = with_hessian || out.create_graph;
    out.gradient = torch::autograd::grad({total}, {out.x}, {}, /*retain_graph=*/graph_of_f,
                                         /*create_graph=*/graph_of_f)[0];
    if (with_hessian) {
        // Row j of every sample's Hessian at once: F is a sum over independent rows, so
        // ∂(Σ_n f_j(x_n))/∂x_n = ∇f_j(x_n).
        const int64_t d = options_.input_dim();
        std::vector<torch::Tensor> rows;
        rows.reserve(d);
        for (int64_t j = 0; j < d; ++j) {
            const bool keep = out.create_graph || j + 1 < d;
            rows.push_back(torch::autograd::grad({out.gradient.select(1, j).sum()}, {out.x}, {},
                                                 /*retain_graph=*/keep,
                                                 /*create_graph=*/out.create_graph)[0]);
        }
        out.hessian = torch::stack(rows, /*dim=*/1);
    }
    return out;
}

torch::Tensor CpFlowImpl::transport(const torch::Tensor& x,
                                    const torch::Tensor& conditioning_batch) {
    return transport_with_weights(x, icnn_->weights(conditioning_batch));
}

torch::Tensor CpFlowImpl::transport_with_weights(const torch::Tensor& x,
                                                 const std::vector<torch::Tensor>& constrained) {
    const auto d = derivatives(x, constrained, /*with_hessian=*/false);
    return d.create_graph ? d.gradient : d.gradient.detach();
}

torch::Tensor CpFlowImpl::hessian(const torch::Tensor& x,
                                  const std::vector<torch::Tensor>& constrained) {
    const auto d = derivatives(x, constrained, /*with_hessian=*/true);
    return d.create_graph ? d.hessian : d.hessian.detach();
}

torch::Tensor CpFlowImpl::log_det_hessian(const torch::Tensor& x,
                                          const std::vector<torch::Tensor>& constrained) {
    const auto d = derivatives(x, constrained, /*with_hessian=*/true);
    torch::AutoGradMode grad_mode(d.create_graph);
    return spd_log_det(d.create_graph ? d.hessian : d.hessian.detach());
}

torch::Tensor CpFlowImpl::log_prob(const torch::Tensor& x,
                                   const torch::Tensor& conditioning_batch) {
    return log_prob_with_weights(x, icnn_->weights(conditioning_batch));
}

torch::Tensor CpFlowImpl::log_prob_with_weights(const torch::Tensor& x,
                                                const std::vector<torch::Tensor>& constrained) {
    const auto d = derivatives(x, constrained, /*with_hessian=*/true);
    torch::AutoGradMode grad_mode(d.create_graph);
    const auto f = d.create_graph ? d.gradient : d.gradient.detach();
    const auto h = d.create_graph ? d.hessian : d.hessian.detach();
    const double dim = static_cast<double>(options_.input_dim());
    const auto log_normal = -0.5 * f.pow(2).sum(/*dim=*/1) - 0.5 * dim * kLogTwoPi;
    return log_normal + spd_log_det(h);
}

}  // namespace liftlab
