#include "lastlayer/proximal_solve.h"

#include <stdexcept>

namespace liftlab {

namespace {

// Lower Cholesky factor of a symmetric positive-definite matrix, or a clear error.
torch::Tensor cholesky_or_throw(const torch::Tensor& a, const char* what) {
    auto [l, info] = torch::linalg_cholesky_ex(a);
    if (info.item<int64_t>() != 0)
        throw std::runtime_error(std::string("closed-form solve: ") + what +
                                 " is not positive definite (singular features with lambda = 0?"
                                 " use a positive beta/lambda)");
    return l;
}

}  // namespace

torch::Tensor with_bias_column(const torch::Tensor& phi) {
    return torch::cat({phi, torch::ones({phi.size(0), 1}, phi.options())}, /*dim=*/1);
}

ProximalSolveResult solve_proximal(const torch::Tensor& phi_in, const torch::Tensor& y_in,
                                   double lambda, const torch::Tensor& w_prior, SolvePath path) {
    torch::NoGradGuard no_grad;
    const auto phi = phi_in.to(torch::kFloat64);
    const auto y = y_in.to(torch::kFloat64);
    const int64_t n = phi.size(0), d = phi.size(1);
    if (y.size(0) != n) throw std::invalid_argument("solve_proximal: Φ and Y row counts differ");
    if (lambda < 0) throw std::invalid_argument("solve_proximal: lambda must be non-negative");

    // Right-hand side R = ΦᵀY + λ W0 (d × k).
    auto rhs = phi.t().matmul(y);
    if (w_prior.defined() && lambda > 0) rhs = rhs + lambda * w_prior.to(torch::kFloat64);

    if (path == SolvePath::Automatic)
        path = (n < d && lambda > 0) ? SolvePath::Woodbury : SolvePath::Cholesky;

    if (path == SolvePath::Woodbury) {
        if (lambda <= 0) throw std::invalid_argument("solve_proximal: Woodbury needs lambda > 0");
        // (ΦᵀΦ + λI)⁻¹ R = (R − Φᵀ (ΦΦᵀ + λI)⁻¹ Φ R) / λ
        auto k = phi.matmul(phi.t());
        k.diagonal().add_(lambda);
        const auto l = cholesky_or_throw(k, "Φ Φᵀ + λI");
        const auto inner = torch::cholesky_solve(phi.matmul(rhs), l);
        return {(rhs - phi.t().matmul(inner)) / lambda, SolvePath::Woodbury};
    }
    auto gram = phi.t().matmul(phi);
    gram.diagonal().add_(lambda);
    const auto l = cholesky_or_throw(gram, "ΦᵀΦ + λI");
    return {torch::cholesky_solve(rhs, l), SolvePath::Cholesky};
}

}  // namespace liftlab

namespace liftlab {

void GramStatistics::add(const torch::Tensor& phi_in, const torch::Tensor& y_in) {
    torch::NoGradGuard no_grad;
    const auto phi = phi_in.to(torch::kFloat64);
    const auto y = y_in.to(torch::kFloat64);
    const auto g = phi.t().matmul(phi), c = phi.t().matmul(y);
    gram = gram.defined() ? gram + g : g;
    cross = cross.defined() ? cross + c : c;
    count += phi.size(0);
}

void GramStatistics::add(const GramStatistics& other) {
    if (!other.gram.defined()) return;
    gram = gram.defined() ? gram + other.gram : other.gram.clone();
    cross = cross.defined() ? cross + other.cross : other.cross.clone();
    count += other.count;
}

void GramStatistics::scale(double factor) {
    if (gram.defined()) {
        gram = gram * factor;
        cross = cross * factor;
    }
}

torch::Tensor solve_statistics(const GramStatistics& stats, double lambda,
                               const torch::Tensor& w_prior) {
    torch::NoGradGuard no_grad;
    if (!stats.gram.defined()) throw std::invalid_argument("solve_statistics: no data yet");
    auto a = stats.gram.clone();
    a.diagonal().add_(lambda);
    auto rhs = stats.cross;
    if (w_prior.defined() && lambda > 0) rhs = rhs + lambda * w_prior.to(torch::kFloat64);
    auto [l, info] = torch::linalg_cholesky_ex(a);
    if (info.item<int64_t>() != 0)
        throw std::runtime_error(
            "closed-form solve: accumulated Gram matrix + λI is not positive definite (use a "
            "positive beta/lambda)");
    return torch::cholesky_solve(rhs, l);
}

}  // namespace liftlab
