// The closed-form last layer against its maths (docs/methods.md §1.4): first-order
// conditions, the least-squares limit, and Woodbury against Cholesky.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "lastlayer/proximal_solve.h"
#include "test_helpers.h"

using liftlab::solve_proximal;
using liftlab::SolvePath;
using liftlab::test::relative_error;

namespace {
using liftlab::test::kF64;

// Gradient of ||Y − ΦW||² + λ||W − W0||² w.r.t. W, divided by 2: −Φᵀ(Y − ΦW) + λ(W − W0).
torch::Tensor half_gradient(const torch::Tensor& phi, const torch::Tensor& y,
                            const torch::Tensor& w, double lambda, const torch::Tensor& w0) {
    return -phi.t().matmul(y - phi.matmul(w)) + lambda * (w - w0);
}
}  // namespace

TEST(ProximalSolve, SatisfiesFirstOrderCondition) {
    torch::manual_seed(378);
    // Tolerance: the stationarity residual relative to the size of its terms, 1e-10 in float64.
    for (int64_t n : {8, 200}) {
        const int64_t d = 50, k = 3;
        const double lambda = 0.7;
        auto phi = torch::randn({n, d}, kF64);
        auto y = torch::randn({n, k}, kF64);
        auto w0 = torch::randn({d, k}, kF64);
        auto w = solve_proximal(phi, y, lambda, w0).w;
        auto g = half_gradient(phi, y, w, lambda, w0);
        const double scale =
            phi.t().matmul(y).abs().max().item<double>() + lambda * w0.abs().max().item<double>();
        EXPECT_LT(g.abs().max().item<double>() / scale, 1e-10) << "n=" << n;
    }
}

TEST(ProximalSolve, PicksWoodburyOnlyWhenFewerSamplesThanFeatures) {
    torch::manual_seed(146);
    auto phi = torch::randn({10, 40}, kF64);
    auto y = torch::randn({10, 2}, kF64);
    EXPECT_EQ(solve_proximal(phi, y, 1.0).path, SolvePath::Woodbury);
    EXPECT_EQ(solve_proximal(phi.t().contiguous(), torch::randn({40, 2}, kF64), 1.0).path,
              SolvePath::Cholesky);
    // λ = 0 cannot use Woodbury (it divides by λ).
    EXPECT_EQ(solve_proximal(torch::randn({60, 40}, kF64), torch::randn({60, 2}, kF64), 0.0).path,
              SolvePath::Cholesky);
}

TEST(ProximalSolve, WoodburyAgreesWithCholesky) {
    torch::manual_seed(390);
    // docs/methods.md §1.4: both paths must agree to 1e-8 in float64.
    for (int64_t n : {4, 16, 128}) {
        for (double lambda : {1e-3, 1.0, 50.0}) {
            const int64_t d = 256, k = 5;
            auto phi = torch::randn({n, d}, kF64);
            auto y = torch::randn({n, k}, kF64);
            auto w0 = torch::randn({d, k}, kF64);
            auto chol = solve_proximal(phi, y, lambda, w0, SolvePath::Cholesky).w;
            auto wood = solve_proximal(phi, y, lambda, w0, SolvePath::Woodbury).w;
            EXPECT_LT(relative_error(wood, chol), 1e-8) << "n=" << n << " lambda=" << lambda;
        }
    }
}

TEST(ProximalSolve, VanishingLambdaGivesLeastSquares) {
    torch::manual_seed(622);
    // Full column rank Φ: as λ → 0 the proximal solution tends to the least-squares solution,
    // whatever the prior; the gap is O(λ) so λ = 1e-9 must agree to 1e-6.
    const int64_t n = 300, d = 20, k = 2;
    auto phi = torch::randn({n, d}, kF64);
    auto y = torch::randn({n, k}, kF64);
    auto w0 = 10 * torch::randn({d, k}, kF64);
    auto ls = std::get<0>(torch::linalg_lstsq(phi, y, /*rcond=*/c10::nullopt, /*driver=*/"gelsd"));
    auto w = solve_proximal(phi, y, 1e-9, w0).w;
    EXPECT_LT(relative_error(w, ls), 1e-6);
    // And λ = 0 exactly is the normal-equations solution.
    EXPECT_LT(relative_error(solve_proximal(phi, y, 0.0).w, ls), 1e-9);
}

TEST(ProximalSolve, LargeLambdaStaysAtThePrior) {
    torch::manual_seed(530);
    auto phi = torch::randn({30, 10}, kF64);
    auto y = torch::randn({30, 1}, kF64);
    auto w0 = torch::randn({10, 1}, kF64);
    EXPECT_LT(relative_error(solve_proximal(phi, y, 1e12, w0).w, w0), 1e-8);
}

TEST(ProximalSolve, RidgeEqualsPushThroughForm) {
    torch::manual_seed(32);
    // (ΦᵀΦ + βI)⁻¹ΦᵀY = Φᵀ(ΦΦᵀ + βI)⁻¹Y: an independent check of the zero-prior ridge.
    const int64_t n = 12, d = 30;
    const double beta = 0.3;
    auto phi = torch::randn({n, d}, kF64);
    auto y = torch::randn({n, 4}, kF64);
    auto kmat = phi.matmul(phi.t()) + beta * torch::eye(n, kF64);
    auto expected = phi.t().matmul(torch::linalg_solve(kmat, y));
    EXPECT_LT(relative_error(solve_proximal(phi, y, beta).w, expected), 1e-10);
}

TEST(ProximalSolve, SingularSystemIsAClearError) {
    torch::manual_seed(452);
    auto phi = torch::randn({5, 20}, kF64);  // rank 5 < 20, and λ = 0
    auto y = torch::randn({5, 1}, kF64);
    try {
        solve_proximal(phi, y, 0.0);
        FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("not positive definite"), std::string::npos)
            << e.what();
    }
}

TEST(ProximalSolve, AcceptsFloat32InputsAndComputesInFloat64) {
    torch::manual_seed(592);
    auto phi = torch::randn({40, 8});
    auto y = torch::randn({40, 2});
    auto w = solve_proximal(phi, y, 0.5).w;
    EXPECT_EQ(w.scalar_type(), torch::kFloat64);
    auto w64 = solve_proximal(phi.to(torch::kFloat64), y.to(torch::kFloat64), 0.5).w;
    EXPECT_LT(relative_error(w, w64), 1e-12);
}

TEST(ProximalSolve, StridedInputsGiveTheSameSolutionOnBothPaths) {
    // The solve reads raw memory (BLAS/LAPACK): transposed views must be made contiguous first.
    torch::manual_seed(611);
    for (int64_t n : {12, 90}) {
        const int64_t d = 30, k = 3;
        auto phi = torch::randn({d, n}, kF64).t();  // n × d, column-major in memory
        auto y = torch::randn({k, n}, kF64).t();
        auto w0 = torch::randn({k, d}, kF64).t();
        const auto strided = solve_proximal(phi, y, 0.3, w0).w;
        const auto dense = solve_proximal(phi.contiguous(), y.contiguous(), 0.3, w0.contiguous()).w;
        EXPECT_LT(relative_error(strided, dense), 1e-13) << "n=" << n;
        EXPECT_LT(half_gradient(phi, y, strided, 0.3, w0).abs().max().item<double>(), 1e-9)
            << "n=" << n;
    }
}
