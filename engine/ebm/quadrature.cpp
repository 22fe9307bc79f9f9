#include "ebm/quadrature.h"

#include "core/c_numbers.h"
#include "core/numeric.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

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
        throw std::invalid_argument("quadrature_grid: need hi > lo, got [" + c_shortest(range.lo) +
                                    ", " + c_shortest(range.hi) + "]");
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

namespace {

// Nodes and weights of the n-point Gauss–Legendre rule on [−1, 1]: the roots of P_n, by Newton's
// method from Chebyshev-like starting points, with w = 2 / ((1 − x²) P_n′(x)²).
void gauss_legendre_unit(int64_t n, std::vector<double>& x, std::vector<double>& w) {
    x.assign(static_cast<size_t>(n), 0.0);
    w.assign(static_cast<size_t>(n), 0.0);
    for (int64_t i = 0; i < (n + 1) / 2; ++i) {
        double z = std::cos(kPi * (static_cast<double>(i) + 0.75) / (static_cast<double>(n) + 0.5));
        double dp = 1.0;
        for (int iter = 0; iter < 100; ++iter) {
            double p0 = 1.0, p1 = z;  // P_0, P_1
            for (int64_t k = 2; k <= n; ++k) {
                const double p2 = ((2.0 * k - 1.0) * z * p1 - (k - 1.0) * p0) / k;
                p0 = p1;
                p1 = p2;
            }
            const double pn = n == 0 ? 1.0 : (n == 1 ? z : p1);
            const double pn1 = n == 1 ? 1.0 : p0;  // P_{n−1}
            dp = n * (z * pn - pn1) / (z * z - 1.0);
            const double dz = pn / dp;
            z -= dz;
            if (std::abs(dz) < 1e-16) break;
        }
        // Recompute P_n′ at the converged root.
        double p0 = 1.0, p1 = z;
        for (int64_t k = 2; k <= n; ++k) {
            const double p2 = ((2.0 * k - 1.0) * z * p1 - (k - 1.0) * p0) / k;
            p0 = p1;
            p1 = p2;
        }
        dp = n == 1 ? 1.0 : n * (z * p1 - p0) / (z * z - 1.0);
        const double weight = 2.0 / ((1.0 - z * z) * dp * dp);
        x[static_cast<size_t>(i)] = -z;
        x[static_cast<size_t>(n - 1 - i)] = z;
        w[static_cast<size_t>(i)] = weight;
        w[static_cast<size_t>(n - 1 - i)] = weight;
    }
}

}  // namespace

QuadratureRule gauss_legendre_rule(const QuadratureRange& range, int64_t points,
                                   int64_t panel_nodes) {
    if (!(range.hi > range.lo)) throw std::invalid_argument("gauss_legendre_rule: need hi > lo");
    if (panel_nodes < 1 || points < panel_nodes || points % panel_nodes != 0)
        throw std::invalid_argument("gauss_legendre_rule: points (" + std::to_string(points) +
                                    ") must be a positive multiple of panel_nodes (" +
                                    std::to_string(panel_nodes) + ")");
    std::vector<double> ux, uw;
    gauss_legendre_unit(panel_nodes, ux, uw);
    const int64_t panels = points / panel_nodes;
    const double width = (range.hi - range.lo) / static_cast<double>(panels);
    auto nodes = torch::empty({points}, torch::kFloat64);
    auto log_w = torch::empty({points}, torch::kFloat64);
    double* np = nodes.data_ptr<double>();
    double* wp = log_w.data_ptr<double>();
    for (int64_t p = 0; p < panels; ++p) {
        const double mid = range.lo + (static_cast<double>(p) + 0.5) * width;
        for (int64_t k = 0; k < panel_nodes; ++k) {
            np[p * panel_nodes + k] = mid + 0.5 * width * ux[static_cast<size_t>(k)];
            wp[p * panel_nodes + k] = std::log(0.5 * width * uw[static_cast<size_t>(k)]);
        }
    }
    return {nodes, log_w};
}

QuadratureRule trapezoid_rule(const QuadratureRange& range, int64_t points) {
    const auto grid = quadrature_grid(range, points);
    const double h = (range.hi - range.lo) / static_cast<double>(points - 1);
    return {grid, log_trapezoid_weights(points, h)};
}

torch::Tensor log_partition(const torch::Tensor& energy_values, const QuadratureRule& rule) {
    if (energy_values.dim() != 1 || energy_values.size(0) != rule.nodes.size(0))
        throw std::invalid_argument("log_partition: one energy value per node (" +
                                    std::to_string(rule.nodes.size(0)) + ") expected");
    return torch::logsumexp(-energy_values.to(torch::kFloat64) + rule.log_weights, /*dim=*/0);
}

}  // namespace liftlab
