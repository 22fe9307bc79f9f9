// Deep Feature Instrumental Variables with closed-form stages (docs/methods.md §1.9):
// the stage solves meet their first-order conditions, dfiv learns the
// structural function, the two-stage closed form removes the confounding bias that naive
// regression keeps, dfiv re-estimates on the full halves at the last step (and only dfiv), runs
// are deterministic, and bad inputs are refused with a clear message.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include "data/dataset.h"
#include "data/demand_design.h"
#include "lastlayer/proximal_solve.h"
#include "spec/experiment_spec.h"
#include "test_helpers.h"
#include "training/dfiv_trainer.h"
#include "training/runner.h"

using liftlab::DfivTrainer;
using liftlab::solve_proximal;
using liftlab::with_bias_column;
using liftlab::test::relative_error;
using nlohmann::json;

namespace {

// Small nets (d1 = d3 = 4, d2 = 8: 25 stage-2 features < 64 batch rows) so every test is fast.
json dfiv_json(int n_train, double rho, int steps) {
    return {{"name", "dfiv-test"},
            {"task",
             {{"kind", "dfiv-demand"}, {"n_train", n_train}, {"rho", rho}, {"data_seed", 1234}}},
            {"backbone", {{"hidden", {32, 16}}, {"feature_dim", 4}, {"activation", "relu"}}},
            {"optimizer", {{"kind", "adam"}, {"lr", 3e-3}}},
            {"methods",
             {{{"name", "dfiv"}},
              {{"name", "dfiv-norefit"}},
              {{"name", "dfiv-prox"}, {"lambda", 100.0}}}},
            {"batch_size", 64},
            {"steps", steps},
            {"log_every", steps},
            {"threads", 1}};
}

struct Setup {
    liftlab::ExperimentSpec spec;
    liftlab::Dataset data;
};

Setup make_setup(int n_train, double rho, int steps) {
    Setup s{liftlab::parse_spec(dfiv_json(n_train, rho, steps)), {}};
    s.data = liftlab::make_dataset(s.spec.task);
    return s;
}

const liftlab::MethodSpec& method(const Setup& s, const std::string& name) {
    for (const auto& m : s.spec.methods)
        if (m.name == name) return m;
    throw std::runtime_error("no method " + name);
}

torch::Tensor f64(const torch::Tensor& t) {
    return t.to(torch::kFloat64);
}

// [a, 1] ⊗ [b, 1] per row, built here independently of dfiv_outer_features.
torch::Tensor outer_rows(const torch::Tensor& a, const torch::Tensor& b) {
    const auto at = with_bias_column(a), bt = with_bias_column(b);
    return (at.unsqueeze(2) * bt.unsqueeze(1)).reshape({a.size(0), -1});
}

// Full-data ridge stages on the trainer's current features, solved here directly.
DfivTrainer::StageWeights direct_full_ridge(DfivTrainer& tr, const liftlab::Dataset& data,
                                            double lambda_scale) {
    const int64_t n1 = tr.stage1_rows(), n2 = data.n_train() - n1;
    const auto x1 = data.x_train.narrow(0, 0, n1), x2 = data.x_train.narrow(0, n1, n2);
    DfivTrainer::StageWeights w;
    w.v = solve_proximal(with_bias_column(f64(tr.instrument_features(x1))),
                         tr.treatment_features(x1), lambda_scale * n1)
              .w;
    const auto psi_hat = with_bias_column(f64(tr.instrument_features(x2))).matmul(w.v);
    const auto y2 = (f64(data.y_train.narrow(0, n1, n2)) - tr.outcome_mean()) / tr.outcome_scale();
    w.u = solve_proximal(outer_rows(psi_hat, f64(tr.covariate_features(x2))), y2, lambda_scale * n2)
              .w;
    return w;
}

double trivial_grid_mse(const liftlab::Dataset& data) {
    return (data.y_test - data.y_train.mean()).pow(2).mean().item<double>();
}

}  // namespace

TEST(Dfiv, OuterFeaturesLayout) {
    // [2, 3, 1] ⊗ [5, 1] = [10, 2, 15, 3, 5, 1]: a's index slowest, the constant last.
    const auto got = liftlab::dfiv_outer_features(torch::tensor({{2.0, 3.0}}, torch::kFloat64),
                                                  torch::tensor({{5.0}}, torch::kFloat64));
    const auto want = torch::tensor({{10.0, 2.0, 15.0, 3.0, 5.0, 1.0}}, torch::kFloat64);
    EXPECT_TRUE(torch::equal(got, want)) << got;
}

TEST(Dfiv, StageSolvesMeetTheirFirstOrderConditions) {
    // ∇V [||Ψ − Φ̃V||² + λ1||V||² + λp||V − V_prev||²] = 2(Φ̃ᵀ(Φ̃V − Ψ) + λ1 V + λp (V − V_prev))
    // must vanish (likewise for u). float64 Cholesky solves of well-conditioned systems: the
    // residual relative to |Φ̃ᵀΨ| is ~1e-15; the tolerance 1e-9 leaves room for conditioning.
    constexpr double kTol = 1e-9;
    auto s = make_setup(/*n_train=*/1000, /*rho=*/0.5, /*steps=*/100);
    for (const std::string name : {"dfiv", "dfiv-prox"}) {
        DfivTrainer tr(s.spec, method(s, name), s.data, /*seed=*/0);
        for (int i = 0; i < 10; ++i) tr.step();  // features away from init; prox has a prior
        const auto v_prev = tr.stage1_weights(), u_prev = tr.stage2_weights();
        const bool prox = name == "dfiv-prox";
        const double lam_p = prox ? method(s, name).lambda : 0.0;

        const int64_t rows = 64, n1 = tr.stage1_rows();
        const auto x1 = s.data.x_train.narrow(0, 0, rows);
        const auto x2 = s.data.x_train.narrow(0, n1, rows);
        const auto y2 = s.data.y_train.narrow(0, n1, rows);
        const auto w = tr.solve_stages(x1, x2, y2);

        const auto phi1 = with_bias_column(f64(tr.instrument_features(x1)));
        const auto psi1 = f64(tr.treatment_features(x1));
        auto g1 = phi1.t().matmul(phi1.matmul(w.v) - psi1) + tr.ridge_lambda(rows) * w.v;
        if (prox) g1 = g1 + lam_p * (w.v - v_prev);
        EXPECT_LT(g1.abs().max().item<double>() / phi1.t().matmul(psi1).abs().max().item<double>(),
                  kTol)
            << name;

        const auto f2 = outer_rows(with_bias_column(f64(tr.instrument_features(x2))).matmul(w.v),
                                   f64(tr.covariate_features(x2)));
        const auto ys = (f64(y2) - tr.outcome_mean()) / tr.outcome_scale();
        auto g2 = f2.t().matmul(f2.matmul(w.u) - ys) + tr.ridge_lambda(rows) * w.u;
        if (prox) g2 = g2 + lam_p * (w.u - u_prev);
        EXPECT_LT(g2.abs().max().item<double>() / f2.t().matmul(ys).abs().max().item<double>(),
                  kTol)
            << name;
        // A query: the trainer's own V and u are untouched.
        EXPECT_TRUE(torch::equal(tr.stage1_weights(), v_prev)) << name;
    }
}

TEST(Dfiv, LearnsTheStructuralFunction) {
    // n = 1000, 1000 steps: the grid MSE of f̂ must fall far below that of the best constant
    // (the mean of Y), which scores ≈ 3.3e4 (the spread of f over the grid, in Y units). Seeds
    // 0, 1, 2 reach 763, 957, 547 (2.3 %, 2.9 %, 1.7 %); the bound is 5 %.
    auto s = make_setup(/*n_train=*/1000, /*rho=*/0.5, /*steps=*/1000);
    DfivTrainer tr(s.spec, method(s, "dfiv"), s.data, /*seed=*/0);
    const double before = tr.evaluate_test().at("test_loss");
    for (int i = 0; i < s.spec.steps; ++i) tr.step();
    const double mse = tr.evaluate_test().at("test_loss");
    const double trivial = trivial_grid_mse(s.data);
    EXPECT_NEAR(before, trivial, 1e-4 * trivial);  // before the first step f̂ = mean of Y
    EXPECT_LT(mse, 0.05 * trivial);
}

TEST(Dfiv, TwoStageClosedFormRemovesTheConfoundingBiasOfNaiveRegression) {
    // Why IV at all, checked where estimation error cannot hide the answer: oracle features and
    // n = 200000 at ρ = 0.9. Treatment feature P, covariate features b = [sψ, 1/(1 + ψ²),
    // ψ/(1 + ψ²)] (ψ = ψ(t)); [P, 1] ⊗ [b, 1] spans both f = 100 + 10 sψ + P sψ − 2P and the
    // naive target E[Y | P, t, s] = f + ρ E[V | P, t] = f + ρ (P − 25 − 3ψ)/(1 + ψ²).
    //  * naive least squares of Y on [P, 1] ⊗ [b, 1] converges to E[Y | P, t, s]: its grid MSE is
    //    the squared confounding bias, ≈ 4.6 at ρ = 0.9 (computed from the formula above);
    //  * the two stages (instrument features [C ψ, ψ] span E[P | Z] = 25 + (C + 3) ψ) converge
    //    to f itself.
    // Learned features cannot show this at the sizes of a fast test: dfiv's estimation error
    // at n = 5000 is ≈ 100 on the grid, twenty times this bias.
    const auto d = liftlab::make_demand_design(/*n=*/200000, /*rho=*/0.9, /*seed=*/99);
    const auto grid = liftlab::demand_test_grid();
    const auto covariate_basis = [](const torch::Tensor& ts) {
        const auto psi = liftlab::demand_psi(ts.narrow(1, 0, 1));
        const auto damp = 1.0 / (1.0 + psi * psi);
        return torch::cat({ts.narrow(1, 1, 1) * psi, damp, psi * damp}, 1);
    };
    const auto b = covariate_basis(d.covariates);
    const auto grid_basis =
        liftlab::dfiv_outer_features(grid.treatment, covariate_basis(grid.covariates));
    constexpr double kTiny = 1e-6;  // plain least squares, kept positive definite
    const auto grid_mse = [&](const torch::Tensor& u) {
        return (grid_basis.matmul(u) - grid.structural).pow(2).mean().item<double>();
    };

    const auto u_naive =
        solve_proximal(liftlab::dfiv_outer_features(d.treatment, b), d.outcome, kTiny).w;
    const auto psi = liftlab::demand_psi(d.instruments.narrow(1, 1, 1));
    const auto z = with_bias_column(torch::cat({d.instruments.narrow(1, 0, 1) * psi, psi}, 1));
    const auto p_hat = z.matmul(solve_proximal(z, d.treatment, kTiny).w);
    const auto u_iv = solve_proximal(liftlab::dfiv_outer_features(p_hat, b), d.outcome, kTiny).w;

    const double naive = grid_mse(u_naive), iv = grid_mse(u_iv);
    // Data seeds 1..4 and 99 give naive 4.55–4.70 and iv 0.002–0.04.
    EXPECT_NEAR(naive, 4.6, 0.5);
    EXPECT_LT(iv, 0.05 * naive);
}

TEST(Dfiv, FinalStepReestimatesOnTheFullHalvesOnlyForDfiv) {
    // dfiv and dfiv-norefit share seed, batches and updates, so they are identical until the
    // last step; there dfiv replaces V and u by the full-half ridge (λ = lambda_scale · rows) on
    // its final features. Compared with a direct float64 solve on the same float32 features
    // (same Gram matrix, same Cholesky route): they agree to rounding — 0 measured here; the
    // tolerance 1e-10 allows another BLAS's summation order.
    constexpr double kTol = 1e-10;
    auto s = make_setup(/*n_train=*/1000, /*rho=*/0.5, /*steps=*/30);
    const double scale = method(s, "dfiv").lambda_scale;
    DfivTrainer refit(s.spec, method(s, "dfiv"), s.data, /*seed=*/0);
    DfivTrainer norefit(s.spec, method(s, "dfiv-norefit"), s.data, /*seed=*/0);
    for (int i = 1; i < s.spec.steps; ++i) {
        refit.step();
        norefit.step();
    }
    EXPECT_TRUE(torch::equal(refit.stage2_weights(), norefit.stage2_weights()));
    EXPECT_GT(relative_error(refit.stage1_weights(), direct_full_ridge(refit, s.data, scale).v),
              1e-2);  // before the last step: per-batch estimates

    refit.step();
    norefit.step();
    const auto x = s.data.x_train;
    EXPECT_TRUE(torch::equal(refit.treatment_features(x), norefit.treatment_features(x)));
    const auto want = direct_full_ridge(refit, s.data, scale);
    EXPECT_LT(relative_error(refit.stage1_weights(), want.v), kTol);
    EXPECT_LT(relative_error(refit.stage2_weights(), want.u), kTol);
    const auto full = direct_full_ridge(norefit, s.data, scale);
    EXPECT_GT(relative_error(norefit.stage1_weights(), full.v), 1e-2);
    EXPECT_GT(relative_error(norefit.stage2_weights(), full.u), 1e-2);
}

TEST(Dfiv, IsDeterministicForAFixedSeed) {
    auto s = make_setup(/*n_train=*/600, /*rho=*/0.5, /*steps=*/40);
    auto run = [&](const std::string& name, std::uint64_t seed) {
        DfivTrainer tr(s.spec, method(s, name), s.data, seed);
        for (int i = 0; i < s.spec.steps; ++i) tr.step();
        return std::make_pair(tr.evaluate_test().at("test_loss"), tr.stage2_weights());
    };
    for (const std::string name : {"dfiv", "dfiv-norefit", "dfiv-prox"}) {
        const auto a = run(name, 3), b = run(name, 3), c = run(name, 4);
        EXPECT_EQ(a.first, b.first) << name;
        EXPECT_TRUE(torch::equal(a.second, b.second)) << name;
        EXPECT_NE(a.first, c.first) << name;
    }
}

TEST(Dfiv, RunnerRunsTheThreeMethodsOnOneData) {
    auto spec = liftlab::parse_spec(dfiv_json(/*n_train=*/400, /*rho=*/0.5, /*steps=*/40));
    spec.diagnostics.train_set_loss = true;
    const auto r = liftlab::run_experiment(spec, {});
    ASSERT_EQ(r.runs.size(), 3u);
    EXPECT_EQ(r.status, "ok");
    for (const auto& run : r.runs) {
        EXPECT_EQ(run.status, "ok") << run.method << ": " << run.reason;
        EXPECT_TRUE(std::isfinite(run.final_metrics.at("test_loss"))) << run.method;
        EXPECT_TRUE(std::isfinite(run.final_metrics.at("train_set_loss"))) << run.method;
        EXPECT_GT(run.final_metrics.at("solve_fraction"), 0.0) << run.method;
        EXPECT_LE(run.final_metrics.at("solve_fraction"), 1.0) << run.method;
    }
}

// DFIV has no single last layer: the runner logs the spectra of the instrument features φ(Z)
// (2d wide) and the treatment features ψ(P) (d wide), named, with κ and effective rank each.
TEST(Dfiv, RunnerLogsInstrumentAndTreatmentSpectra) {
    auto spec = liftlab::parse_spec(dfiv_json(/*n_train=*/400, /*rho=*/0.5, /*steps=*/20));
    spec.diagnostics.spectrum_every = 10;
    spec.diagnostics.probe_size = 100;
    std::map<std::string, size_t> widths;
    const auto r = liftlab::run_experiment(spec, {}, [&](const liftlab::ProgressUpdate& u) {
        for (const auto& sp : u.spectra) widths[sp.method] = sp.singular_values.size();
        return true;
    });
    ASSERT_EQ(r.status, "ok");
    EXPECT_EQ(widths.size(), 6u);  // 3 methods × 2 feature sets
    EXPECT_EQ(widths["dfiv-prox/instrument"], 8u);
    EXPECT_EQ(widths["dfiv-prox/treatment"], 4u);
    for (const auto& run : r.runs) {
        for (const char* m :
             {"kappa_instrument", "eff_rank_instrument", "kappa_treatment", "eff_rank_treatment"}) {
            ASSERT_TRUE(run.final_metrics.count(m)) << run.method << " " << m;
            EXPECT_TRUE(std::isfinite(run.final_metrics.at(m))) << run.method << " " << m;
        }
        EXPECT_GE(run.final_metrics.at("eff_rank_treatment"), 1.0);
        EXPECT_LE(run.final_metrics.at("eff_rank_treatment"), 4.0);
        EXPECT_FALSE(run.final_metrics.count("eff_rank")) << "no unnamed last-layer features";
    }
}

TEST(Dfiv, RefusesOtherDataAndMethods) {
    auto s = make_setup(/*n_train=*/400, /*rho=*/0.5, /*steps=*/10);
    auto has = [](const std::exception& e, const std::string& part) {
        return std::string(e.what()).find(part) != std::string::npos;
    };
    liftlab::Dataset wrong = s.data;
    wrong.x_train = wrong.x_train.narrow(1, 0, 3);
    try {
        DfivTrainer tr(s.spec, method(s, "dfiv"), wrong, 0);
        ADD_FAILURE() << "no throw for 3 input columns";
    } catch (const std::invalid_argument& e) {
        EXPECT_TRUE(has(e, "rows [P, t, s, C]")) << e.what();
    }
    liftlab::MethodSpec other;
    other.name = "cf-prox";
    try {
        DfivTrainer tr(s.spec, other, s.data, 0);
        ADD_FAILURE() << "no throw for cf-prox";
    } catch (const std::invalid_argument& e) {
        EXPECT_TRUE(has(e, "unknown method 'cf-prox'")) << e.what();
    }
}
