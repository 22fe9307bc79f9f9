// 1-D quadrature for log-concave EBMs (docs/methods.md §5.1):
// log Z = log ∫ exp(−E(x)) dx and TV = ½∫|p − q| dx by the trapezoid rule on a uniform grid.
#pragma once
#include <torch/torch.h>

#include <cstdint>

namespace liftlab {

// docs/methods.md §5.1: 8000 points over the target's range.
constexpr int64_t kQuadraturePoints = 8000;

// A closed interval [lo, hi] that holds (almost) all of a density's mass.
struct QuadratureRange {
    double lo = 0.0;
    double hi = 1.0;
};

// `points` equally spaced float64 nodes from lo to hi inclusive. Throws std::invalid_argument
// when hi <= lo or points < 2.
torch::Tensor quadrature_grid(const QuadratureRange& range, int64_t points = kQuadraturePoints);

// log ∫ exp(−E(x)) dx by the trapezoid rule, evaluated as
// log h + logsumexp(−E_i + log w_i) with w = ½ at both ends and 1 inside, so large |E| never
// overflows. Computed in float64; returns a 0-dim float64 tensor that carries autograd from
// `energy_values` (the NLL loss E(x) + log Z needs its gradient). Entries of +inf energy
// (outside a support) contribute zero. Throws std::invalid_argument when the grid is not 1-D,
// has fewer than 2 points, is not uniform, or does not match `energy_values` in size.
torch::Tensor log_partition(const torch::Tensor& energy_values, const torch::Tensor& grid);

// ½∫|p − q| dx by the trapezoid rule. Both densities are RENORMALISED on the grid first
// (p_i = exp(log_p_i − log Z_p) with log Z_p from `log_partition(−log_p, grid)`), so the value
// compares shapes within the range and lies in [0, 1] up to quadrature error; an unnormalised
// model log-density (−E) can be passed directly. Float64, no autograd. Throws like
// `log_partition`, and when either density has no mass on the grid.
double total_variation(const torch::Tensor& log_p_values, const torch::Tensor& log_q_values,
                       const torch::Tensor& grid);

// A quadrature rule on [lo, hi]: nodes and the logs of their weights, so that
// ∫ f ≈ Σ w_i f(x_i) and log ∫ exp(−E) = logsumexp(−E_i + log w_i).
struct QuadratureRule {
    torch::Tensor nodes;        // float64, increasing
    torch::Tensor log_weights;  // float64, same length
};

// Composite Gauss–Legendre: [lo, hi] cut into points / panel_nodes equal panels, each with the
// panel_nodes-point Gauss–Legendre rule (nodes from Newton's method on the Legendre polynomial,
// to machine precision). Exact for polynomials of degree 2·panel_nodes − 1 on every panel, so on
// a smooth integrand it reaches the 8000-point trapezoid's accuracy with far fewer nodes — the
// training-time log Z of icnn-ebm-1d (the reported log Z and TV keep the trapezoid grid). Throws
// std::invalid_argument when hi <= lo, panel_nodes < 1 or points is not a positive multiple of it.
QuadratureRule gauss_legendre_rule(const QuadratureRange& range, int64_t points,
                                   int64_t panel_nodes = 8);

// The trapezoid rule on quadrature_grid(range, points), in the same form.
QuadratureRule trapezoid_rule(const QuadratureRange& range, int64_t points = kQuadraturePoints);

// log Σ w_i exp(−E_i): float64, carries autograd from `energy_values`. Throws
// std::invalid_argument when the sizes differ.
torch::Tensor log_partition(const torch::Tensor& energy_values, const QuadratureRule& rule);

}  // namespace liftlab
