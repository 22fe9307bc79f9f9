// The runner's contracts: determinism, divergence isolation, cancellation, the run folder, and the
// closed-form step order of docs/methods.md §1.3.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "data/batch_sampler.h"
#include "data/dataset.h"
#include "lastlayer/proximal_solve.h"
#include "run/run_store.h"
#include "test_helpers.h"
#include "training/method_trainer.h"
#include "training/runner.h"

using nlohmann::json;

namespace {

liftlab::ExperimentSpec small_runner_spec() {
    return liftlab::parse_spec(json::parse(R"({
        "name": "small",
        "task": {"input_dim": 4, "output_dim": 2, "teacher_hidden": [16], "n_train": 256,
                 "n_test": 128, "noise": 0.05},
        "backbone": {"hidden": [16], "feature_dim": 8},
        "methods": [{"name": "adam", "lr": 0.003}, {"name": "sgd", "lr": 0.05},
                    {"name": "cf-ridge", "beta": 0.01}, {"name": "cf-prox", "lambda": 1.0}],
        "batch_size": 16, "steps": 60, "log_every": 20, "threads": 1})"));
}

const liftlab::MethodRunSummary& find_run(const liftlab::RunResult& r, const std::string& m) {
    for (const auto& run : r.runs)
        if (run.method == m) return run;
    throw std::runtime_error("no run " + m);
}

}  // namespace

TEST(Runner, IsDeterministicForFixedSeeds) {
    auto spec = small_runner_spec();
    auto a = liftlab::run_experiment(spec, {});
    auto b = liftlab::run_experiment(spec, {});
    ASSERT_EQ(a.runs.size(), 4u);
    for (size_t i = 0; i < a.runs.size(); ++i) {
        EXPECT_EQ(a.runs[i].status, "ok");
        EXPECT_EQ(a.runs[i].final_metrics.at("test_loss"), b.runs[i].final_metrics.at("test_loss"))
            << a.runs[i].method;
    }
}

TEST(Runner, TrainingReducesTestLossBelowTheTargetVariance) {
    // Targets are scaled to unit variance, so predicting zero scores ≈ 1 + noise².
    auto spec = small_runner_spec();
    spec.steps = 300;
    auto r = liftlab::run_experiment(spec, {});
    EXPECT_LT(find_run(r, "cf-prox").final_metrics.at("test_loss"), 0.5);
    EXPECT_LT(find_run(r, "adam").final_metrics.at("test_loss"), 0.5);
}

TEST(Runner, DivergingMethodIsIsolated) {
    auto spec = small_runner_spec();
    spec.methods[1].lr = 1e6;  // sgd blows up within a few steps
    std::vector<liftlab::MethodStatus> statuses;
    auto r = liftlab::run_experiment(spec, {}, [&](const liftlab::ProgressUpdate& u) {
        statuses.insert(statuses.end(), u.statuses.begin(), u.statuses.end());
        return true;
    });
    EXPECT_EQ(r.status, "ok");
    const auto& sgd = find_run(r, "sgd");
    EXPECT_EQ(sgd.status, "diverged");
    EXPECT_LT(sgd.steps_done, spec.steps);
    EXPECT_FALSE(sgd.reason.empty());
    for (const char* m : {"adam", "cf-ridge", "cf-prox"}) {
        EXPECT_EQ(find_run(r, m).status, "ok") << m;
        EXPECT_EQ(find_run(r, m).steps_done, spec.steps) << m;
    }
    bool reported = false;
    for (const auto& s : statuses)
        reported = reported || (s.method == "sgd" && s.status == "diverged");
    EXPECT_TRUE(reported);
}

TEST(Runner, EveryMethodDivergedIsTheRunStatus) {
    auto spec = small_runner_spec();
    spec.methods = {spec.methods[1]};
    spec.methods[0].lr = 1e6;
    EXPECT_EQ(liftlab::run_experiment(spec, {}).status, "diverged");
}

TEST(Runner, CallbackReturningFalseCancels) {
    auto spec = small_runner_spec();
    spec.steps = 100000;
    int calls = 0;
    auto r = liftlab::run_experiment(spec, {}, [&](const liftlab::ProgressUpdate& u) {
        ++calls;
        return u.step < 40;
    });
    EXPECT_EQ(r.status, "cancelled");
    for (const auto& run : r.runs) {
        EXPECT_EQ(run.status, "cancelled");
        EXPECT_EQ(run.steps_done, 40);
    }
}

TEST(Runner, StopFlagCancelsAtTheNextStep) {
    auto spec = small_runner_spec();
    spec.steps = 100000;
    std::atomic<bool> stop{false};
    liftlab::RunOptions opts;
    opts.stop = &stop;
    auto r = liftlab::run_experiment(spec, opts, [&](const liftlab::ProgressUpdate& u) {
        if (u.step >= 20) stop = true;
        return true;
    });
    EXPECT_EQ(r.status, "cancelled");
}

TEST(Runner, WritesTheRunFolder) {
    liftlab::test::TempDir dir;
    auto spec = small_runner_spec();
    liftlab::RunOptions opts;
    opts.out_dir = dir.str();
    auto r = liftlab::run_experiment(spec, opts);
    ASSERT_FALSE(r.run_dir.empty());
    namespace fs = std::filesystem;
    for (const char* f : {"spec.json", "metrics.csv", "summary.json"})
        EXPECT_TRUE(fs::exists(fs::path(r.run_dir) / f)) << f;

    json summary = json::parse(std::ifstream(r.run_dir + "/summary.json"));
    EXPECT_EQ(summary["status"], "ok");
    ASSERT_EQ(summary["runs"].size(), 4u);
    for (const auto& run : summary["runs"]) {
        EXPECT_EQ(run["batch_size"], 16);
        EXPECT_TRUE(run["final"]["test_loss"].is_number()) << run.dump();
    }
    json resolved = json::parse(std::ifstream(r.run_dir + "/spec.json"));
    EXPECT_TRUE(resolved["versions"]["libtorch"].is_string());
    EXPECT_EQ(resolved["seeds"], json::array({0}));
    // spec.json reproduces the run: parse it back (minus the recorded extras) and compare.
    resolved.erase("versions");
    resolved.erase("data");
    EXPECT_EQ(liftlab::to_json(liftlab::parse_spec(resolved)), liftlab::to_json(spec));

    auto rows = liftlab::read_metrics_csv(r.run_dir + "/metrics.csv");
    // 3 log points × (3 metrics × 4 methods + 1 solve_fraction × 2 cf methods)
    EXPECT_EQ(rows.size(), 3u * (3 * 4 + 2));
}

// spec log_initial: every method's test metrics before its first step, as step 0. A closed-form
// head starts at W = 0 (predicts 0), so its step-0 test loss is the mean square of the test
// targets; without the key no step-0 point is logged.
TEST(Runner, LogInitialRecordsTheUntrainedModelsAtStepZero) {
    auto spec = small_runner_spec();
    spec.steps = 20;
    std::map<std::string, double> at_zero;
    int zero_points = 0;
    const auto collect = [&](const liftlab::ProgressUpdate& u) {
        for (const auto& p : u.points)
            if (p.step == 0) {
                ++zero_points;
                if (p.metric == "test_loss") at_zero[p.method] = p.value;
            }
        return true;
    };
    liftlab::run_experiment(spec, {}, collect);
    EXPECT_EQ(zero_points, 0);
    spec.log_initial = true;
    auto r = liftlab::run_experiment(spec, {}, collect);
    EXPECT_EQ(r.status, "ok");
    ASSERT_EQ(at_zero.size(), 4u);  // adam, sgd, cf-ridge, cf-prox
    const auto data = liftlab::make_dataset(spec.task);
    const double mean_square = data.y_test.to(torch::kFloat64).square().mean().item<double>();
    for (const char* cf : {"cf-ridge", "cf-prox"})
        EXPECT_NEAR(at_zero.at(cf), mean_square, 1e-6 * mean_square) << cf;
    for (const char* g : {"adam", "sgd"}) EXPECT_TRUE(std::isfinite(at_zero.at(g))) << g;
    // The key round-trips through spec.json.
    EXPECT_TRUE(liftlab::parse_spec(liftlab::to_json(spec)).log_initial);
}

TEST(Runner, SeedsChangeInitialisationButNotData) {
    auto spec = small_runner_spec();
    spec.methods = {spec.methods[0]};
    spec.seeds = {0, 1};
    auto r = liftlab::run_experiment(spec, {});
    ASSERT_EQ(r.runs.size(), 2u);
    EXPECT_NE(r.runs[0].final_metrics.at("test_loss"), r.runs[1].final_metrics.at("test_loss"));
}

// The backbone-first cf-prox step: θ_t from W_{t−1}, then W_t = (ΦᵀY + λW_{t−1})(ΦᵀΦ + λI)⁻¹ with
// Φ = [φ_{θ_t}(X_B), 1] on the same batch. Checked through the first-order condition.
TEST(MethodTrainer, ProximalStepSolvesOnTheUpdatedFeatures) {
    for (const std::string order : {"backbone-first", "w-first"}) {
        auto spec = small_runner_spec();
        spec.step_order = order;
        const auto data = liftlab::make_dataset(spec.task);
        const auto& method = spec.methods[3];
        liftlab::MethodTrainer trainer(spec, method, data, /*seed=*/5);
        liftlab::BatchSampler sampler(data.n_train(), spec.batch_size, /*seed=*/5);
        for (int t = 0; t < 3; ++t) {
            const auto w_prev = trainer.last_layer().clone();
            const auto idx = sampler.next();
            const auto xb = data.x_train.index_select(0, idx);
            const auto yb = data.y_train.index_select(0, idx).to(torch::kFloat64);
            // w-first solves on φ_{θ_{t−1}}: take the features before the step.
            torch::Tensor phi_before;
            {
                torch::NoGradGuard g;
                phi_before =
                    liftlab::with_bias_column(trainer.backbone().features(xb).to(torch::kFloat64));
            }
            trainer.step();
            torch::NoGradGuard g;
            const auto phi =
                order == "backbone-first"
                    ? liftlab::with_bias_column(trainer.backbone().features(xb).to(torch::kFloat64))
                    : phi_before;
            const auto w = trainer.last_layer();
            const auto residual =
                -phi.t().matmul(yb - phi.matmul(w)) + method.lambda * (w - w_prev);
            EXPECT_LT(residual.abs().max().item<double>(), 1e-4) << order << " step " << t;
        }
    }
}
