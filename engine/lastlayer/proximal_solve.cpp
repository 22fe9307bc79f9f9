#include "lastlayer/proximal_solve.h"

#include <memory>
#include <stdexcept>
#include <vector>

#include "core/blas_lapack.h"

namespace liftlab {

namespace {

const char* not_spd_message(bool woodbury) {
    return woodbury ? "closed-form solve: Φ Φᵀ + λI is not positive definite (singular features "
                      "with lambda = 0? use a positive beta/lambda)"
                    : "closed-form solve: ΦᵀΦ + λI is not positive definite (singular features "
                      "with lambda = 0? use a positive beta/lambda)";
}

// The solve straight on BLAS/LAPACK (float64 throughout, same formulas as the LibTorch path
// below): a symmetric rank-k product (half the multiplies of a general product), one Cholesky,
// two small products, and no LibTorch operator in between. phi (n × d), y (n × k) and w0 (d × k,
// may be undefined) are contiguous row-major float64 — read by BLAS as their column-major
// transposes.
torch::Tensor solve_with_lapack(const BlasLapack& f, const torch::Tensor& phi,
                                const torch::Tensor& y, double lambda, const torch::Tensor& w0,
                                bool woodbury) {
    const int n = static_cast<int>(phi.size(0)), d = static_cast<int>(phi.size(1));
    const int k = static_cast<int>(y.size(1));
    const double* p = phi.data_ptr<double>();  // column-major Φᵀ (d × n), ld = d
    const double* yv = y.data_ptr<double>();   // column-major Yᵀ (k × n), ld = k
    const double one = 1.0, zero = 0.0, minus_one = -1.0;
    int info = 0;
    auto w = torch::empty({d, k}, torch::kFloat64);
    double* out = w.data_ptr<double>();  // column-major Wᵀ (k × d), ld = k
    if (woodbury) {
        // W = W0 + Φᵀ (ΦΦᵀ + λI)⁻¹ (Y − Φ W0), the Woodbury form of (ΦᵀΦ + λI)⁻¹(ΦᵀY + λW0).
        // Scratch BLAS writes before reading (β = 0): not zero-filled.
        std::unique_ptr<double[]> gram_buf(new double[static_cast<size_t>(n) * n]);
        double* gram = gram_buf.get();
        f.dsyrk("L", "T", &n, &d, &one, p, &d, &zero, gram, &n, 1, 1);  // ΦΦᵀ
        for (int i = 0; i < n; ++i) gram[static_cast<size_t>(i) * n + i] += lambda;
        f.dpotrf("L", &n, gram, &n, &info, 1);
        if (info != 0) throw std::runtime_error(not_spd_message(true));
        // Residual Rᵀ = Yᵀ − W0ᵀ Φᵀ (k × n), then R (n × k, column-major) for the solve.
        std::vector<double> rt(yv, yv + static_cast<size_t>(n) * k);
        if (w0.defined())
            f.dgemm("N", "N", &k, &n, &d, &minus_one, w0.data_ptr<double>(), &k, p, &d, &one,
                    rt.data(), &k, 1, 1);
        std::unique_ptr<double[]> r(new double[static_cast<size_t>(n) * k]);
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < k; ++j)
                r[static_cast<size_t>(j) * n + i] = rt[static_cast<size_t>(i) * k + j];
        f.dpotrs("L", &n, &k, gram, &n, r.get(), &n, &info, 1);
        // Wᵀ = W0ᵀ + Sᵀ Φ (k × d).
        if (w0.defined())
            std::copy(w0.data_ptr<double>(), w0.data_ptr<double>() + static_cast<size_t>(d) * k,
                      out);
        f.dgemm("T", "T", &k, &d, &n, &one, r.get(), &n, p, &d, w0.defined() ? &one : &zero, out,
                &k, 1, 1);
        return w;
    }
    // W = (ΦᵀΦ + λI)⁻¹ (ΦᵀY + λW0) by Cholesky of the d × d matrix.
    std::unique_ptr<double[]> gram_buf(new double[static_cast<size_t>(d) * d]);  // β = 0: no fill
    double* gram = gram_buf.get();
    f.dsyrk("L", "N", &d, &n, &one, p, &d, &zero, gram, &d, 1, 1);  // ΦᵀΦ
    for (int i = 0; i < d; ++i) gram[static_cast<size_t>(i) * d + i] += lambda;
    std::vector<double> rhs(static_cast<size_t>(d) * k, 0.0);  // column-major d × k
    if (w0.defined() && lambda > 0) {
        const double* w0v = w0.data_ptr<double>();
        for (int i = 0; i < d; ++i)
            for (int j = 0; j < k; ++j)
                rhs[static_cast<size_t>(j) * d + i] = lambda * w0v[static_cast<size_t>(i) * k + j];
    }
    f.dgemm("N", "T", &d, &k, &n, &one, p, &d, yv, &k, &one, rhs.data(), &d, 1, 1);  // + ΦᵀY
    f.dpotrf("L", &d, gram, &d, &info, 1);
    if (info != 0) throw std::runtime_error(not_spd_message(false));
    f.dpotrs("L", &d, &k, gram, &d, rhs.data(), &d, &info, 1);
    for (int i = 0; i < d; ++i)
        for (int j = 0; j < k; ++j)
            out[static_cast<size_t>(i) * k + j] = rhs[static_cast<size_t>(j) * d + i];
    return w;
}

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

torch::Tensor bias_column_f64(const torch::Tensor& phi) {
    torch::NoGradGuard no_grad;
    const int64_t d = phi.size(1);
    auto out = torch::empty({phi.size(0), d + 1}, phi.options().dtype(torch::kFloat64));
    out.narrow(1, 0, d).copy_(phi.detach());
    out.select(1, d).fill_(1.0);
    return out;
}

ProximalSolveResult solve_proximal(const torch::Tensor& phi_in, const torch::Tensor& y_in,
                                   double lambda, const torch::Tensor& w_prior, SolvePath path) {
    torch::NoGradGuard no_grad;
    const auto phi = phi_in.to(torch::kFloat64);
    const auto y = y_in.to(torch::kFloat64);
    const int64_t n = phi.size(0), d = phi.size(1);
    if (y.size(0) != n) throw std::invalid_argument("solve_proximal: Φ and Y row counts differ");
    if (lambda < 0) throw std::invalid_argument("solve_proximal: lambda must be non-negative");

    if (path == SolvePath::Automatic)
        path = (n < d && lambda > 0) ? SolvePath::Woodbury : SolvePath::Cholesky;
    if (path == SolvePath::Woodbury && lambda <= 0)
        throw std::invalid_argument("solve_proximal: Woodbury needs lambda > 0");

    if (const BlasLapack* f = blas_lapack(); f != nullptr && phi.device().is_cpu()) {
        const auto w0 = w_prior.defined() ? w_prior.to(torch::kFloat64).contiguous() : w_prior;
        const bool woodbury = path == SolvePath::Woodbury;
        return {solve_with_lapack(*f, phi.contiguous(), y.contiguous(), lambda, w0, woodbury),
                path};
    }

    // Right-hand side R = ΦᵀY + λ W0 (d × k).
    auto rhs = phi.t().matmul(y);
    if (w_prior.defined() && lambda > 0) rhs = rhs + lambda * w_prior.to(torch::kFloat64);
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
