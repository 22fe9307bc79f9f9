#include "data/tabular21.h"

#include "core/c_numbers.h"
#include "core/numeric.h"

#include <ATen/CPUGeneratorImpl.h>

#include <fstream>
#include <locale>
#include <sstream>
#include <stdexcept>

#include "core/errors.h"

namespace liftlab {

namespace {

constexpr double kIdentityFloor = 0.3;  // Σ_k = 0.3·I + 0.7·A Aᵀ / 21
constexpr double kWishartShare = 0.7;

Tabular21Recipe build_recipe() {
    const int64_t d = kTabular21Dim;
    const int64_t k = kTabular21Components;
    auto gen = at::make_generator<at::CPUGeneratorImpl>(kTabular21RecipeSeed);
    Tabular21Recipe r;
    r.weights = torch::tensor({0.5, 0.3, 0.2}, f64());
    r.means = torch::randn({k, d}, gen, f64());
    const auto a = torch::randn({k, d, d}, gen, f64());
    r.covariances = kIdentityFloor * torch::eye(d, f64()).expand({k, d, d}) +
                    kWishartShare * torch::matmul(a, a.transpose(1, 2)) / static_cast<double>(d);

    // Per component and column: E[u] and E[u²] (exp columns: Gaussian MGF at a and 2a).
    const auto mu = r.means;                                             // K × d
    const auto var = r.covariances.diagonal(0, /*dim1=*/1, /*dim2=*/2);  // K × d
    const double rate = kTabular21ExpRate;
    const auto first = torch::exp(rate * mu + 0.5 * rate * rate * var);
    const auto second = torch::exp(2.0 * rate * mu + 2.0 * rate * rate * var);
    auto m1 = mu.clone();
    auto m2 = var + mu * mu;
    const auto e = torch::indexing::Slice(0, kTabular21ExpColumns);
    m1.index_put_({torch::indexing::Slice(), e}, first.index({torch::indexing::Slice(), e}));
    m2.index_put_({torch::indexing::Slice(), e}, second.index({torch::indexing::Slice(), e}));
    const auto w = r.weights.unsqueeze(1);
    r.shift = (w * m1).sum(0);
    r.scale = torch::sqrt((w * m2).sum(0) - r.shift * r.shift);
    return r;
}

}  // namespace

const Tabular21Recipe& tabular21_recipe() {
    static const Tabular21Recipe recipe = build_recipe();
    return recipe;
}

torch::Tensor make_tabular21(int64_t n, uint64_t seed) {
    if (n < 0)
        throw std::invalid_argument("make_tabular21: n must be >= 0, got " + std::to_string(n));
    const auto& r = tabular21_recipe();
    const int64_t d = kTabular21Dim;
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    const auto pick = torch::rand({n}, gen, f64());
    const auto eps = torch::randn({n, d}, gen, f64());
    // Component c: the first k with pick < π_0 + … + π_k.
    const auto cumulative = r.weights.cumsum(0).slice(0, 0, kTabular21Components - 1);
    const auto component = (pick.unsqueeze(1) >= cumulative.unsqueeze(0)).sum(1);
    const auto factors = torch::linalg::cholesky(r.covariances);  // K × d × d, lower
    auto z = torch::empty({n, d}, f64());
    for (int64_t c = 0; c < kTabular21Components; ++c) {
        const auto rows = component.eq(c);
        z.index_put_({rows}, r.means[c] + eps.index({rows}).matmul(factors[c].t()));
    }
    const auto e = torch::indexing::Slice(0, kTabular21ExpColumns);
    z.index_put_({torch::indexing::Slice(), e},
                 torch::exp(kTabular21ExpRate * z.index({torch::indexing::Slice(), e})));
    return (z - r.shift) / r.scale;
}

void write_tabular_csv(const std::string& path, const torch::Tensor& data) {
    if (!data.defined() || data.dim() != 2 || data.size(1) < 1)
        throw std::invalid_argument("write_tabular_csv: data must be a 2-D n × m tensor, m >= 1");
    if (!data.is_floating_point())
        throw std::invalid_argument("write_tabular_csv: data must be floating point");
    const auto values = data.detach().to(torch::kCPU, torch::kFloat64).contiguous();
    if (!torch::isfinite(values).all().item<bool>())
        throw std::invalid_argument("write_tabular_csv: data holds NaN or infinity");
    const int64_t n = values.size(0);
    const int64_t m = values.size(1);
    const double* v = values.data_ptr<double>();

    std::string text;
    for (int64_t j = 0; j < m; ++j) text += (j ? ",f" : "f") + std::to_string(j);
    text += '\n';
    for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < m; ++j) text += (j ? "," : "") + c_general(v[i * m + j], 9);
        text += '\n';
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw DataError(path, 0, "cannot open the file for writing");
    out << text;
    out.close();
    if (!out) throw DataError(path, 0, "writing the file failed (disk full?)");
}

}  // namespace liftlab
