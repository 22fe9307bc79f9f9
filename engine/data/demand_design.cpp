#include "data/demand_design.h"
#include "core/c_numbers.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace liftlab {

namespace {

constexpr int64_t kStoreTypes = 7;   // s ∈ 1..7
constexpr double kTimeMax = 10.0;    // t ∈ [0, 10]
constexpr double kBasePrice = 25.0;  // P = 25 + (C + 3) ψ(t) + V
constexpr double kCostOffset = 3.0;
constexpr int64_t kGridPrices = 20;  // p ∈ linspace(10, 25, 20)
constexpr double kGridPriceMin = 10.0;
constexpr double kGridPriceMax = 25.0;
constexpr int64_t kGridTimes = 20;  // t ∈ linspace(0, 10, 20)

}  // namespace

double demand_psi(double t) {
    const double u = t - 5.0;
    return 2.0 * (std::pow(u, 4) / 600.0 + std::exp(-4.0 * u * u) + t / 10.0 - 2.0);
}

double demand_structural(double p, double t, double s) {
    return 100.0 + (10.0 + p) * s * demand_psi(t) - 2.0 * p;
}

torch::Tensor demand_psi(const torch::Tensor& t) {
    const auto u = t - 5.0;
    return 2.0 * (u.pow(4) / 600.0 + torch::exp(-4.0 * u * u) + t / 10.0 - 2.0);
}

torch::Tensor demand_structural(const torch::Tensor& p, const torch::Tensor& t,
                                const torch::Tensor& s) {
    return 100.0 + (10.0 + p) * s * demand_psi(t) - 2.0 * p;
}

DemandData make_demand_design(int64_t n, double rho, std::uint64_t seed) {
    if (n <= 0)
        throw std::invalid_argument("make_demand_design: n must be positive, got " +
                                    std::to_string(n));
    if (!(rho >= -1.0 && rho <= 1.0))
        throw std::invalid_argument("make_demand_design: rho must be in [-1, 1], got " +
                                    c_shortest(rho));
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    const auto opts = torch::TensorOptions().dtype(torch::kFloat64);

    const auto s = torch::randint(/*low=*/1, /*high=*/kStoreTypes + 1, {n, 1}, gen, opts);
    const auto t = kTimeMax * torch::rand({n, 1}, gen, opts);
    const auto c = torch::randn({n, 1}, gen, opts);
    const auto v = torch::randn({n, 1}, gen, opts);
    // Variance 1 − ρ² for the independent part, so e ~ N(0, 1) whatever ρ.
    const auto e = rho * v + std::sqrt(1.0 - rho * rho) * torch::randn({n, 1}, gen, opts);
    const auto p = kBasePrice + (c + kCostOffset) * demand_psi(t) + v;

    DemandData d;
    d.treatment = p;
    d.covariates = torch::cat({t, s}, /*dim=*/1);
    d.instruments = torch::cat({c, t, s}, /*dim=*/1);
    d.structural = demand_structural(p, t, s);
    d.outcome = d.structural + e;
    return d;
}

DemandGrid demand_test_grid() {
    const auto opts = torch::TensorOptions().dtype(torch::kFloat64);
    const auto prices = torch::linspace(kGridPriceMin, kGridPriceMax, kGridPrices, opts);
    const auto times = torch::linspace(0.0, kTimeMax, kGridTimes, opts);
    const auto stores = torch::arange(1, kStoreTypes + 1, opts);
    // indexing "ij": the first factor varies slowest.
    const auto mesh = torch::meshgrid({prices, times, stores}, "ij");
    const auto p = mesh[0].reshape({-1, 1});
    const auto t = mesh[1].reshape({-1, 1});
    const auto s = mesh[2].reshape({-1, 1});
    DemandGrid g;
    g.treatment = p;
    g.covariates = torch::cat({t, s}, /*dim=*/1);
    g.structural = demand_structural(p, t, s);
    return g;
}

}  // namespace liftlab
