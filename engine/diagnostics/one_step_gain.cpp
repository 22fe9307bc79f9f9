#include "diagnostics/one_step_gain.h"

#include <stdexcept>

#include "diagnostics/feature_spectrum.h"
#include "lastlayer/proximal_solve.h"

namespace liftlab {

OneStepGain one_step_gain(const torch::Tensor& phi_in, const torch::Tensor& y_in,
                          const torch::Tensor& w0_in, double lambda) {
    torch::NoGradGuard no_grad;
    const auto phi = phi_in.to(torch::kFloat64), y = y_in.to(torch::kFloat64);
    const auto w0 = w0_in.to(torch::kFloat64);
    auto objective = [&](const torch::Tensor& w) {
        return 0.5 * (y - phi.matmul(w)).pow(2).sum().item<double>() +
               0.5 * lambda * (w - w0).pow(2).sum().item<double>();
    };
    const auto spectrum = feature_spectrum(phi);
    const double smax = spectrum.singular_values.front();
    // σ_min of the Hessian ΦᵀΦ: zero when N < d.
    const double smin_all = phi.size(0) < phi.size(1) ? 0.0 : spectrum.singular_values.back();
    if (lambda <= 0 && smin_all <= 0)
        throw std::invalid_argument("one_step_gain: singular problem; use lambda > 0");

    const double lipschitz = smax * smax + lambda;
    const auto grad = -phi.t().matmul(y - phi.matmul(w0));  // ∇f(W₀): the prox term vanishes there
    const auto w_gd = w0 - grad / lipschitz;
    const auto w_cf = solve_proximal(phi, y, lambda, w0).w;

    OneStepGain g;
    const double f0 = objective(w0);
    g.decrease_closed_form = f0 - objective(w_cf);
    g.decrease_gradient = f0 - objective(w_gd);
    g.gain = g.decrease_gradient > 0 ? g.decrease_closed_form / g.decrease_gradient : 1.0;
    g.kappa = spectrum.kappa;
    g.kappa_hessian = lipschitz / (smin_all * smin_all + lambda);
    return g;
}

}  // namespace liftlab
