// One-step analysis (docs/methods.md §2.2). From the same last layer W₀ on a batch,
// compare the decrease of f(W) = ½||Y − ΦW||² + ½λ||W − W₀||² achieved by
//   the closed-form step  W_cf = argmin f                        (the exact minimiser), and
//   one gradient step     W_gd = W₀ − ∇f(W₀) / L,  L = σ_max²(Φ) + λ (the best fixed step).
// gain = decrease_cf / decrease_gd ≥ 1. On a quadratic the gradient step contracts the gap by at
// most (1 − 1/κ_H) with κ_H = (σ_max² + λ)/(σ_min² + λ) — for λ = 0 that is (1 − 1/κ²), κ the
// condition number of Φ — so gain ≤ κ_H: the gain grows with the spread of singular values.
#pragma once
#include <torch/torch.h>

namespace liftlab {

struct OneStepGain {
    double gain = 0;
    double decrease_closed_form = 0;
    double decrease_gradient = 0;
    double kappa = 0;          // σ_max / σ_min of Φ (non-zero singular values)
    double kappa_hessian = 0;  // (σ_max² + λ)/(σ_min² + λ), σ_min over all min(N, d) values
};

// phi: N × d (bias column included by the caller if wanted), y: N × k, w0: d × k.
OneStepGain one_step_gain(const torch::Tensor& phi, const torch::Tensor& y, const torch::Tensor& w0,
                          double lambda);

}  // namespace liftlab
