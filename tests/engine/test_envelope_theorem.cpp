// Envelope theorem (docs/methods.md §1.1): with W*(θ) the ridge solution, the gradient of
// L*(θ) = L(W*(θ), θ) equals ∇θ L(W, θ) at the fixed W = W*(θ). Checked against central finite
// differences of L* that re-solve W at every perturbed θ, in float64.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "lastlayer/proximal_solve.h"
#include "nn/mlp_backbone.h"
#include "test_helpers.h"

namespace {

using liftlab::MlpBackbone;
using liftlab::MlpBackboneOptions;
using liftlab::solve_proximal;
using liftlab::with_bias_column;

constexpr double kBeta = 0.05;

// L(W, θ) = ||Y − [φ_θ(X), 1] W||² + β||W||² (batch sums, as the closed form is defined).
torch::Tensor objective(MlpBackbone& net, const torch::Tensor& x, const torch::Tensor& y,
                        const torch::Tensor& w) {
    auto phi = with_bias_column(net->forward(x));
    return (y - phi.matmul(w)).pow(2).sum() + kBeta * w.pow(2).sum();
}

torch::Tensor solve_w(MlpBackbone& net, const torch::Tensor& x, const torch::Tensor& y) {
    torch::NoGradGuard g;
    return solve_proximal(with_bias_column(net->forward(x)), y, kBeta).w;
}

// L*(θ): re-solves the last layer at the current θ.
double reduced_objective(MlpBackbone& net, const torch::Tensor& x, const torch::Tensor& y) {
    torch::NoGradGuard g;
    return objective(net, x, y, solve_w(net, x, y)).item<double>();
}

torch::Tensor flat_grad(MlpBackbone& net) {
    std::vector<torch::Tensor> parts;
    for (auto& p : net->parameters()) parts.push_back(p.grad().reshape(-1).clone());
    return torch::cat(parts);
}

torch::Tensor finite_difference_gradient(MlpBackbone& net, const torch::Tensor& x,
                                         const torch::Tensor& y, double h) {
    std::vector<double> g;
    torch::NoGradGuard guard;
    for (auto& p : net->parameters()) {
        auto flat = p.view(-1);
        for (int64_t i = 0; i < flat.numel(); ++i) {
            const double orig = flat[i].item<double>();
            flat[i] = orig + h;
            const double up = reduced_objective(net, x, y);
            flat[i] = orig - h;
            const double down = reduced_objective(net, x, y);
            flat[i] = orig;
            g.push_back((up - down) / (2 * h));
        }
    }
    return torch::tensor(g, torch::kFloat64);
}

class EnvelopeTheorem : public ::testing::TestWithParam<int64_t> {};

TEST_P(EnvelopeTheorem, GradientAtFixedSolutionMatchesFiniteDifferences) {
    torch::manual_seed(7);
    const int64_t n = GetParam();  // 40: Cholesky path; 6: Woodbury path (n < d + 1)
    MlpBackbone net(MlpBackboneOptions(/*input_dim=*/3, /*feature_dim=*/8).hidden({6}));
    net->to(torch::kFloat64);
    auto x = torch::randn({n, 3}, torch::kFloat64);
    auto y = torch::randn({n, 2}, torch::kFloat64);

    // Envelope gradient: back-propagate L with W held at W*(θ), never through the solve.
    const auto w_star = solve_w(net, x, y);
    net->zero_grad();
    objective(net, x, y, w_star).backward();
    const auto envelope = flat_grad(net);

    const auto fd = finite_difference_gradient(net, x, y, /*h=*/1e-5);
    const double rel = ((envelope - fd).norm() / fd.norm()).item<double>();
    EXPECT_LT(rel, 1e-5) << "relative error " << rel;

    // The check can fail: a W that is not the minimiser at θ breaks the identity.
    const auto w_stale = w_star + 0.1 * torch::randn_like(w_star);
    net->zero_grad();
    objective(net, x, y, w_stale).backward();
    const double rel_stale = ((flat_grad(net) - fd).norm() / fd.norm()).item<double>();
    EXPECT_GT(rel_stale, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(BothSolvePaths, EnvelopeTheorem, ::testing::Values(40, 6));

}  // namespace
