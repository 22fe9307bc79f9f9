#include "ebm/quadrature.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace liftlab {

namespace {

// Relative tolerance on the grid spacing: float64 linspace is uniform to ~1e-15 relative.
constexpr double kUniformSpacingTol = 1e-9;

// Validates the grid against `values` and returns its spacing h.
double checked_spacing(const torch::Tensor& values, const torch::Tensor& grid, const char* who) {
    const std::string prefix = std::string(who) + ": ";
    if (grid.dim() != 1 || grid.size(0) < 2)
        throw std::invalid_argument(prefix + "grid must be 1-D with at least 2 points");
    if (values.dim() != 1 || values.size(0) != grid.size(0))
        throw std::invalid_argument(prefix + "values must be 1-D with one entry per grid point (" +
                                    std::to_string(grid.size(0)) + ")");
    const auto g = grid.detach().to(torch::kFloat64);
    const auto diffs = g.slice(0, 1) - g.slice(0, 0, -1);
    const double h = (g[-1].item<double>() - g[0].item<double>()) / (g.size(0) - 1);
    if (!(h > 0.0)) throw std::invalid_argument(prefix + "grid must be increasing");
    const double max_dev = (diffs - h).abs().max().item<double>();
    if (max_dev > kUniformSpacingTol * h)
        throw std::invalid_argument(prefix + "grid must be uniformly spaced");
    return h;
}

// log of the trapezoid weights w = h · (½, 1, …, 1, ½).
torch::Tensor log_trapezoid_weights(int64_t points, double h) {
    auto w = torch::full({points}, std::log(h), torch::TensorOptions().dtype(torch::kFloat64));
    w[0] += std::log(0.5);
    w[points - 1] += std::log(0.5);
    return w;
}

}  // namespace

torch::Tensor quadrature_grid(const QuadratureRange& range, int64_t points) {
    if (!(range.hi > range.lo))
        throw std::invalid_argument("quadrature_grid: need hi > lo, got [" +
                                    std::to_string(range.lo) + ", " + std::to_string(range.hi) +
                                    "]");
    if (points < 2) throw std::invalid_argument("quadrature_grid: need at least 2 points");
    return torch::linspace(range.lo, range.hi, points,
                           torch::TensorOptions().dtype(torch::kFloat64));
}

torch::Tensor log_partition(const torch::Tensor& energy_values, const torch::Tensor& grid) {
    const double h = checked_spacing(energy_values, grid, "log_partition");
    const auto log_w = log_trapezoid_weights(grid.size(0), h);
    return torch::logsumexp(-energy_values.to(torch::kFloat64) + log_w, /*dim=*/0);
}

double total_variation(const torch::Tensor& log_p_values, const torch::Tensor& log_q_values,
                       const torch::Tensor& grid) {
    torch::NoGradGuard no_grad;
    const double h = checked_spacing(log_p_values, grid, "total_variation");
    checked_spacing(log_q_values, grid, "total_variation");
    const auto lp = log_p_values.detach().to(torch::kFloat64);
    const auto lq = log_q_values.detach().to(torch::kFloat64);
    const auto log_zp = log_partition(-lp, grid);
    const auto log_zq = log_partition(-lq, grid);
    if (!std::isfinite(log_zp.item<double>()) || !std::isfinite(log_zq.item<double>()))
        throw std::invalid_argument("total_variation: a density has no finite mass on the grid");
    const auto diff = (torch::exp(lp - log_zp) - torch::exp(lq - log_zq)).abs();
    const auto w = torch::exp(log_trapezoid_weights(grid.size(0), h));
    return 0.5 * (diff * w).sum().item<double>();
}

}  // namespace liftlab
