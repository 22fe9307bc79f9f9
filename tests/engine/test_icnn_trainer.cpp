// The ICNN trainer end to end on small, fixed-seed problems: training reduces the NLL and the TV
// distance, σ²_Jac separates the full lifter from softplus and the ablations (docs/methods.md
// §3.4, Theorem 1), pgd stays feasible, softplus-wide matches the lifter's parameter count,
// and the run folder gets the ICNN files (traces, trajectories, final σ²_Jac).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "data/dataset.h"
#include "ebm/log_concave_targets.h"
#include "ebm/quadrature.h"
#include "run/trajectory_file.h"
#include "spec/experiment_spec.h"
#include "training/icnn_trainer.h"
#include "training/runner.h"

namespace liftlab {
namespace {

// A small 1-D Gumbel problem that trains in about a second.
ExperimentSpec small_spec(const std::string& method) {
    ExperimentSpec s;
    s.name = "icnn-test";
    s.task.kind = "icnn-ebm-1d";
    s.task.target = "gumbel";
    s.task.n_train = 4096;
    s.task.n_test = 2048;
    s.icnn.width = 32;
    s.icnn.layers = 3;
    s.icnn.quadrature_points = 2000;
    s.icnn.reference_size = 512;
    s.optimizer.lr = 3e-3;
    s.batch_size = 128;
    s.steps = 200;
    s.threads = 1;
    s.methods = {MethodSpec{}};
    s.methods[0].name = method;
    s.methods[0].label = method;
    return s;
}

TEST(IcnnTrainer, TrainingReducesNllAndTvForEveryBaseStrategy) {
    for (const std::string m : {"lifter", "softplus", "pgd"}) {
        const auto spec = small_spec(m);
        const auto data = make_dataset(spec.task);
        IcnnTrainer trainer(spec, spec.methods[0], data, /*seed=*/0);
        const auto before = trainer.evaluate_test();
        for (int i = 0; i < spec.steps; ++i) trainer.step();
        const auto after = trainer.evaluate_test();
        // Gumbel(0,1) has entropy 1 + γ ≈ 1.577 nats: no model can have a lower expected NLL;
        // 2048 test samples put the sample mean within ±0.03 (sd of −log p is π/√6 ≈ 1.28/√2048).
        EXPECT_GT(after.at("test_loss"), 1.5772 - 0.1) << m;
        EXPECT_LT(after.at("test_loss"), before.at("test_loss")) << m;
        EXPECT_LT(after.at("tv"), before.at("tv")) << m;
        EXPECT_GE(after.at("tv"), 0.0);
        EXPECT_LE(after.at("tv"), 1.0);
    }
}

TEST(IcnnTrainer, PgdWeightsStayNonNegativeThroughTraining) {
    const auto spec = small_spec("pgd");
    const auto data = make_dataset(spec.task);
    IcnnTrainer trainer(spec, spec.methods[0], data, 0);
    for (int i = 0; i < 50; ++i) {
        trainer.step();
        for (const auto& t : trainer.reference_pre_readout())
            ASSERT_GE(t.min().item<double>(), 0.0) << "step " << i;
    }
}

TEST(IcnnTrainer, SoftplusWideMatchesTheLifterParameterCount) {
    auto spec = small_spec("softplus-wide");
    const int64_t w = IcnnTrainer::matched_wide_width(spec, 1);
    auto count = [](const std::string& strategy, int64_t width, const ExperimentSpec& s) {
        IcnnImpl icnn(IcnnOptions(1).width(width).layers(s.icnn.layers).strategy(strategy));
        int64_t n = 0;
        for (const auto& p : icnn.parameters_for_optimizer()) n += p.numel();  // trainable
        return n;
    };
    const int64_t lifter = count("lifter", spec.icnn.width, spec);
    EXPECT_GE(count("softplus", w, spec), lifter);
    EXPECT_LT(count("softplus", w - 1, spec), lifter);
    EXPECT_GT(w, spec.icnn.width);
}

// σ²_Jac after a short fixed-seed run (docs/methods.md §4.1, Theorem 1): a structural zero with
// no p-value where there is no slack (softplus, pgd, lifter-noslack); exactly 0 with p = 1 when θ̃
// does not depend on the batch (lifter-nobody); not significant for lifter-decoupled (θ̃ reads an
// independent batch); significant (p < 0.05) for the full lifter.
TEST(IcnnTrainer, CrossCovarianceSeparatesTheLifterFromItsAblations) {
    std::map<std::string, std::map<std::string, double>> results;
    for (const std::string m :
         {"lifter", "softplus", "pgd", "lifter-noslack", "lifter-nobody", "lifter-decoupled"}) {
        auto spec = small_spec(m);
        spec.diagnostics.jacobian_batches = 64;
        spec.diagnostics.permutations = 200;
        const auto data = make_dataset(spec.task);
        IcnnTrainer trainer(spec, spec.methods[0], data, 0);
        for (int i = 0; i < 100; ++i) trainer.step();
        results[m] = trainer.final_diagnostics();
    }
    for (const std::string m : {"softplus", "pgd", "lifter-noslack"}) {
        EXPECT_EQ(results[m].at("slack"), 0.0) << m;
        EXPECT_EQ(results[m].at("sigma2_jac"), 0.0) << m;
        EXPECT_EQ(results[m].count("p_value"), 0u) << m << ": a structural zero has no p-value";
        EXPECT_TRUE(results[m].count("sigma2_jac_theta")) << m;  // the separate diagnostic
    }
    // softplus: θ̃ does not move with the batch, so even the θ̃-gradient reading is exactly 0.
    EXPECT_EQ(results["softplus"].at("sigma2_jac_theta"), 0.0);
    EXPECT_EQ(results["lifter-nobody"].at("slack"), 1.0);
    EXPECT_EQ(results["lifter-nobody"].at("sigma2_jac"), 0.0);
    EXPECT_EQ(results["lifter-nobody"].at("p_value"), 1.0);
    EXPECT_GT(results["lifter-decoupled"].at("p_value"), 0.05);
    EXPECT_LT(results["lifter"].at("p_value"), 0.05);
    EXPECT_NE(results["lifter"].at("sigma2_jac"), 0.0);
}

// The training log Z (512 Gauss–Legendre nodes) against the reported 8000-point trapezoid on a
// trained ICNN: within 1e-4 nats.
TEST(IcnnTrainer, TrainingQuadratureMatchesTheReportedLogZOnATrainedIcnn) {
    for (const std::string m : {"lifter", "softplus"}) {
        auto spec = small_spec(m);
        spec.icnn.quadrature_points = 8000;
        const auto data = make_dataset(spec.task);
        IcnnTrainer trainer(spec, spec.methods[0], data, 0);
        for (int i = 0; i < 100; ++i) trainer.step();
        torch::NoGradGuard no_grad;
        const auto w = trainer.theta_weights();
        const GumbelTarget target;
        const auto grid = quadrature_grid(target.range(), 8000);
        auto energy = [&](const torch::Tensor& x) {
            return trainer.icnn()->energy_with_weights(x.to(torch::kFloat32).unsqueeze(1), w);
        };
        const double trap = log_partition(energy(grid).to(torch::kFloat64), grid).item<double>();
        const auto rule = gauss_legendre_rule(target.range(), spec.icnn.train_quadrature_points);
        const double gl =
            log_partition(energy(rule.nodes).to(torch::kFloat64), rule).item<double>();
        EXPECT_NEAR(gl, trap, 1e-4) << m;
        EXPECT_NEAR(trainer.evaluate_test().at("log_z"), trap, 1e-9) << m;
    }
}

// task.fresh_samples (the reference's recipe): every batch is new, seeded, and reproducible.
TEST(IcnnTrainer, FreshSamplesAreNewEveryStepAndReproducible) {
    auto spec = small_spec("softplus");
    ASSERT_TRUE(parse_spec(to_json(spec)).task.fresh_samples == spec.task.fresh_samples);
    spec.task.fresh_samples = true;
    const auto data = make_dataset(spec.task);
    std::vector<double> a, b;
    for (auto* losses : {&a, &b}) {
        IcnnTrainer trainer(spec, spec.methods[0], data, 0);
        for (int i = 0; i < 5; ++i) losses->push_back(trainer.step());
    }
    EXPECT_EQ(a, b);
    spec.task.fresh_samples = false;
    IcnnTrainer split(spec, spec.methods[0], data, 0);
    EXPECT_NE(split.step(), a[0]);
    // The default: on for analytic targets, off for data (fmnist-latents, CP-Flow).
    nlohmann::json j = to_json(small_spec("softplus"));
    j["task"].erase("fresh_samples");
    EXPECT_TRUE(parse_spec(j).task.fresh_samples);
    j["task"]["kind"] = "cpflow-toy";
    j["task"]["target"] = "8gaussians";
    EXPECT_FALSE(parse_spec(j).task.fresh_samples);
    j["task"]["fresh_samples"] = true;
    EXPECT_THROW(parse_spec(j), std::exception);
}

TEST(IcnnTrainer, RunFolderHoldsTracesTrajectoriesAndFinalCrossCovariance) {
    auto spec = small_spec("lifter");
    spec.methods.push_back(spec.methods[0]);
    spec.methods[1].name = spec.methods[1].label = "pgd";
    spec.steps = 40;
    spec.log_every = 10;
    spec.diagnostics.shoulder_every = 5;
    spec.diagnostics.trace_coordinates = 4;
    spec.diagnostics.jacobian_batches = 8;
    spec.diagnostics.checkpoint_every = 10;
    const auto out = std::filesystem::temp_directory_path() / "liftlab-icnn-runner-test";
    std::filesystem::remove_all(out);
    RunOptions options;
    options.out_dir = out.string();
    const auto result = run_experiment(spec, options);
    ASSERT_EQ(result.status, "ok");
    for (const auto& r : result.runs) {
        EXPECT_TRUE(r.final_metrics.count("sigma2_jac")) << r.method;
        EXPECT_TRUE(r.final_metrics.count("tv")) << r.method;
        EXPECT_TRUE(r.final_metrics.count("shoulder_occupancy")) << r.method;
        const auto t = read_trajectory(trajectory_path(result.run_dir, r.method, 0));
        // Checkpoints at steps 0, 10, 20, 30, 40.
        EXPECT_EQ(t.steps, (std::vector<std::int64_t>{0, 10, 20, 30, 40}));
        EXPECT_EQ(t.theta.size(0), 5);
        EXPECT_EQ(t.lifted.size(0), 5);
    }
    std::ifstream traces(result.run_dir + "/traces.csv");
    std::string line;
    int rows = -1;  // header
    while (std::getline(traces, line)) ++rows;
    // Observations at steps 1, 5, 10, …, 40 (9 of them), 4 coordinates, 2 methods.
    EXPECT_EQ(rows, 9 * 4 * 2);
    // dwells.csv: completed dwells only, each between two observations (1 … 39 steps), never
    // more than the exits the summary counts.
    double exits = 0;
    for (const auto& r : result.runs) exits += r.final_metrics.at("exits");
    std::ifstream dwells(result.run_dir + "/dwells.csv");
    int dwell_rows = 0;
    if (dwells) {
        std::getline(dwells, line);
        EXPECT_EQ(line, "method,seed,dwell");
        while (std::getline(dwells, line)) {
            const auto dwell = std::stoi(line.substr(line.rfind(',') + 1));
            EXPECT_GE(dwell, 1);
            EXPECT_LE(dwell, 39);
            ++dwell_rows;
        }
    }
    EXPECT_LE(dwell_rows, exits);
    std::filesystem::remove_all(out);
}

}  // namespace
}  // namespace liftlab

namespace liftlab {
namespace {

// icnn-ebm-nd with the adapted flow for the training draws: icnn.flow_refine_steps makes that
// adapted flow (not the data fit) take reverse-KL steps at every training step, before its
// draws. Seen from outside: the training draws — hence the losses — change, while the
// data-fitted flow, whose own test NLL is `proposal_nll`, stays exactly as it was.
TEST(IcnnTrainer, RefineStepsMoveTheAdaptedTrainingProposalNotTheDataFit) {
    auto spec = small_spec("softplus");
    spec.task.kind = "icnn-ebm-nd";
    spec.task.target = "gaussian";
    spec.task.dim = 3;
    spec.task.n_train = 512;
    spec.task.n_test = 256;
    spec.task.cache_dir = (std::filesystem::temp_directory_path() / "liftlab-refine-test").string();
    spec.icnn.width = 16;
    spec.icnn.proposal = "flow";
    spec.icnn.flow_layers = 2;
    spec.icnn.flow_hidden = 16;
    spec.icnn.flow_fit_steps = 30;
    spec.icnn.is_samples = 256;
    spec.icnn.eval_is_samples = 1024;
    spec.icnn.proposal_adapt_steps = 20;
    spec.icnn.proposal_adapt_train = true;
    spec.icnn.flow_refine_lr = 1e-2;
    spec.batch_size = 64;
    spec = parse_spec(to_json(spec));  // the checks a run's spec passes
    const auto data = make_dataset(spec.task);
    const auto run = [&](int refine_steps) {
        auto s = spec;
        s.icnn.flow_refine_steps = refine_steps;
        IcnnTrainer trainer(s, s.methods[0], data, 0);
        std::vector<double> losses;
        for (int i = 0; i < 3; ++i) losses.push_back(trainer.step());
        return std::make_pair(losses, trainer.evaluate_test());
    };
    const auto [fixed_losses, fixed_eval] = run(0);
    const auto [tracked_losses, tracked_eval] = run(2);
    // Every step refines the adapted flow (after its first fit) before drawing from it.
    for (size_t i = 0; i < fixed_losses.size(); ++i)
        EXPECT_NE(tracked_losses[i], fixed_losses[i]) << "step " << i + 1;
    EXPECT_EQ(tracked_eval.at("proposal_nll"), fixed_eval.at("proposal_nll"));
    EXPECT_TRUE(std::isfinite(tracked_eval.at("test_loss")));
}

}  // namespace
}  // namespace liftlab
