#include "diagnostics/cross_covariance.h"

#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace liftlab {
namespace {

std::string shape_of(const torch::Tensor& t) {
    std::string s = "[";
    for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
    return s + "]";
}

// Uniform integer in [0, n) without modulo bias (rejects the incomplete top block).
uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
    const uint64_t threshold = (0 - n) % n;  // 2⁶⁴ mod n
    for (;;) {
        const uint64_t r = rng();
        if (r >= threshold) return r % n;
    }
}

void shuffle(std::vector<int64_t>& perm, std::mt19937_64& rng) {
    for (size_t i = perm.size() - 1; i > 0; --i)
        std::swap(perm[i], perm[uniform_below(rng, static_cast<uint64_t>(i) + 1)]);
}

// Throws std::invalid_argument for non-2-D or mismatched shapes, B < 3 or permutations < 0.
void check_trace_inputs(const torch::Tensor& iterates, const torch::Tensor& gradients,
                        int permutations) {
    if (iterates.dim() != 2)
        throw std::invalid_argument("cross_covariance_trace: iterates must be B × P, got " +
                                    shape_of(iterates));
    if (gradients.dim() != 2 || !gradients.sizes().equals(iterates.sizes()))
        throw std::invalid_argument("cross_covariance_trace: gradients " + shape_of(gradients) +
                                    " must have the shape of iterates " + shape_of(iterates));
    if (iterates.size(0) < 3)
        throw std::invalid_argument(
            "cross_covariance_trace: need at least 3 batches (iterates rows), got " +
            std::to_string(iterates.size(0)));
    if (permutations < 0)
        throw std::invalid_argument("cross_covariance_trace: permutations must be >= 0, got " +
                                    std::to_string(permutations));
}

}  // namespace

CrossCovarianceResult cross_covariance_trace(const torch::Tensor& iterates,
                                             const torch::Tensor& gradients, int permutations,
                                             uint64_t seed) {
    check_trace_inputs(iterates, gradients, permutations);
    const int64_t batches = iterates.size(0), coords = iterates.size(1);

    torch::NoGradGuard no_grad;
    auto x = iterates.detach().to(torch::kCPU, torch::kFloat64);
    auto g = gradients.detach().to(torch::kCPU, torch::kFloat64);
    if (!torch::isfinite(x).all().item<bool>())
        throw std::invalid_argument("cross_covariance_trace: iterates contain non-finite values");
    if (!torch::isfinite(g).all().item<bool>())
        throw std::invalid_argument("cross_covariance_trace: gradients contain non-finite values");

    // Shift by the first row, then centre: mathematically the plain centring, but a coordinate that
    // never moves is exactly 0 here (x − x₀ = 0 and its mean is 0), whatever rounding the mean has.
    x = x - x.slice(0, 0, 1);
    x = (x - x.mean(0, true)).contiguous();
    g = (g - g.mean(0, true)).contiguous();

    CrossCovarianceResult r;
    r.batches = batches;
    r.permutations = permutations;
    const double denom = static_cast<double>(batches - 1);
    r.iterate_spread = x.pow(2).sum().item<double>() / denom;

    // Σ_b ⟨x_b, g_π(b)⟩. Two equivalent evaluations: with the B × B Gram matrix M = X Gᵀ (one BLAS
    // product, then B per permutation) whenever there are permutations and M stays small (≤ 32 MB),
    // otherwise row by row (B·P per permutation). The observed value uses the same routine with the
    // identity, so an identity shuffle ties it exactly.
    const bool use_gram = permutations > 0 && batches <= 2048;
    torch::Tensor gram;
    if (use_gram) gram = x.matmul(g.t()).contiguous();
    const double* xp = x.data_ptr<double>();
    const double* gp = g.data_ptr<double>();
    const double* mp = use_gram ? gram.data_ptr<double>() : nullptr;
    auto statistic = [&](const std::vector<int64_t>& perm) {
        double s = 0;
        if (use_gram) {
            for (int64_t b = 0; b < batches; ++b) s += mp[b * batches + perm[b]];
        } else {
            for (int64_t b = 0; b < batches; ++b) {
                const double* xr = xp + b * coords;
                const double* gr = gp + perm[b] * coords;
                double row = 0;
                for (int64_t j = 0; j < coords; ++j) row += xr[j] * gr[j];
                s += row;
            }
        }
        return s / denom;
    };

    std::vector<int64_t> perm(static_cast<size_t>(batches));
    std::iota(perm.begin(), perm.end(), 0);
    r.sigma2_jac = statistic(perm);

    std::mt19937_64 rng(seed);
    const double obs = std::abs(r.sigma2_jac);
    int64_t at_least = 0;
    double sum = 0, sum_sq = 0;
    std::vector<double> stats;
    stats.reserve(static_cast<size_t>(permutations));
    for (int k = 0; k < permutations; ++k) {
        shuffle(perm, rng);
        const double s = statistic(perm);
        stats.push_back(s);
        sum += s;
        if (std::abs(s) >= obs) ++at_least;
    }
    r.p_value = static_cast<double>(1 + at_least) / static_cast<double>(1 + permutations);
    if (permutations > 0) r.null_mean = sum / permutations;
    if (permutations > 1) {
        for (double s : stats) sum_sq += (s - r.null_mean) * (s - r.null_mean);
        r.null_sd = std::sqrt(sum_sq / (permutations - 1));
    }
    return r;
}

}  // namespace liftlab
