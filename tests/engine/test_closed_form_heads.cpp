// The closed-form heads against their definitions (docs/methods.md §1.2, §1.6).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "data/dataset.h"
#include "lastlayer/closed_form_head.h"
#include "spec/experiment_spec.h"
#include "test_helpers.h"
#include "training/method_trainer.h"

using liftlab::test::relative_error;

namespace {
using liftlab::test::kF64;

torch::Tensor ridge(const torch::Tensor& phi, const torch::Tensor& y, double beta) {
    auto a = phi.t().matmul(phi) + beta * torch::eye(phi.size(1), kF64);
    return torch::linalg_solve(a, phi.t().matmul(y));
}
}  // namespace

TEST(RlsHead, UnitForgettingEqualsLeastSquaresOverAllSamplesSeen) {
    // ρ = 1: W_t = (λI + Σ ΦᵀΦ)⁻¹ Σ ΦᵀY, i.e. ridge(λ) on every batch so far stacked together;
    // with λ = 1e-9 that is batch least squares to 1e-7.
    torch::manual_seed(12);
    const int64_t d = 6, k = 2;
    liftlab::RlsHead head(d, k, /*rho=*/1.0, /*lambda=*/1e-9);
    std::vector<torch::Tensor> phis, ys;
    for (int t = 0; t < 5; ++t) {
        phis.push_back(torch::randn({4, d}, kF64));  // each batch alone is rank-deficient (4 < 7)
        ys.push_back(torch::randn({4, k}, kF64));
        head.observe_batch(phis.back(), ys.back());
    }
    auto phi_all = liftlab::with_bias_column(torch::cat(phis));
    auto ls = std::get<0>(torch::linalg_lstsq(phi_all, torch::cat(ys), c10::nullopt, "gelsd"));
    EXPECT_LT(relative_error(head.weights(), ls), 1e-7);
}

TEST(RlsHead, ForgettingDownWeightsOldBatches) {
    // ρ < 1: W_t minimises Σ_s ρ^{t−s} ||Y_s − Φ_s W||² + ρ^t λ ||W||² — a weighted ridge.
    torch::manual_seed(13);
    const int64_t d = 3, k = 1;
    const double rho = 0.5, lambda = 0.1;
    liftlab::RlsHead head(d, k, rho, lambda);
    std::vector<torch::Tensor> phis, ys;
    for (int t = 0; t < 4; ++t) {
        phis.push_back(liftlab::with_bias_column(torch::randn({5, d}, kF64)));
        ys.push_back(torch::randn({5, k}, kF64));
        head.observe_batch(phis.back().narrow(1, 0, d), ys.back());
    }
    auto a = std::pow(rho, 4) * lambda * torch::eye(d + 1, kF64);
    auto b = torch::zeros({d + 1, k}, kF64);
    for (int s = 0; s < 4; ++s) {
        const double w = std::pow(rho, 3 - s);
        a = a + w * phis[s].t().matmul(phis[s]);
        b = b + w * phis[s].t().matmul(ys[s]);
    }
    EXPECT_LT(relative_error(head.weights(), torch::linalg_solve(a, b)), 1e-10);
}

TEST(ProximalHead, CyclingBatchesApproachesFullDataLeastSquaresAsLambdaGrows) {
    // With a fixed backbone, cycling cf-prox over the batches of a data set is the incremental
    // proximal-point method with step 1/λ: it settles into a cycle whose distance to the
    // least-squares solution over the whole set is O(1/λ). So a 10× larger λ must shrink the gap
    // about 10× (between 5× and 20× accepted), and λ = 2000 must be within 1 %.
    torch::manual_seed(11);
    const int64_t d = 5;
    auto phi = torch::randn({40, d}, kF64);
    auto y = torch::randn({40, 1}, kF64);
    auto ls =
        std::get<0>(torch::linalg_lstsq(liftlab::with_bias_column(phi), y, c10::nullopt, "gelsd"));
    auto gap = [&](double lambda) {
        liftlab::ProximalHead head(d, 1, lambda);
        for (int epoch = 0; epoch < 1500; ++epoch)
            for (int b = 0; b < 4; ++b)
                head.observe_batch(phi.narrow(0, 10 * b, 10), y.narrow(0, 10 * b, 10));
        return relative_error(head.weights(), ls);
    };
    const double g200 = gap(200), g2000 = gap(2000);
    RecordProperty("gap_lambda200", std::to_string(g200));
    RecordProperty("gap_lambda2000", std::to_string(g2000));
    EXPECT_GT(g200 / g2000, 5.0);
    EXPECT_LT(g200 / g2000, 20.0);
    EXPECT_LT(g2000, 1e-2);
}

TEST(FullDataHead, OnAFixedBackboneEqualsRidgeRegression) {
    // cf-full refreshes W*(θ) on the whole training set; with lr = 0 the backbone stays fixed, so
    // after a step the head must equal ridge(β) on [φ(X_train), 1].
    auto spec = liftlab::parse_spec(nlohmann::json::parse(R"({
        "task": {"input_dim": 3, "output_dim": 2, "teacher_hidden": [8], "n_train": 300, "n_test": 50},
        "backbone": {"hidden": [12], "feature_dim": 6},
        "optimizer": {"kind": "sgd", "lr": 1e-30},
        "methods": [{"name": "cf-full", "beta": 0.3, "refresh_every": 5}],
        "batch_size": 20, "steps": 3, "threads": 1})"));
    const auto data = liftlab::make_dataset(spec.task);
    liftlab::MethodTrainer trainer(spec, spec.methods[0], data, /*seed=*/1);
    trainer.step();
    const auto phi =
        liftlab::with_bias_column(trainer.flat_features(data.x_train).to(torch::kFloat64));
    const auto expected = ridge(phi, data.y_train.to(torch::kFloat64), 0.3);
    EXPECT_LT(relative_error(trainer.last_layer(), expected), 1e-8);
    // Not re-solved between refreshes (refresh_every = 5).
    const auto w1 = trainer.last_layer().clone();
    trainer.step();
    EXPECT_TRUE(torch::equal(trainer.last_layer(), w1));
}
