// Untrusted models are checked in a child process, and every long phase can be stopped (issue 36,
// items 4 and 5): the child's time and memory limits, a crash in it, a stop while it runs, the
// same words as the in-process checks; the feature spectrum's Gram route against the SVD, and its
// stop between blocks. The hostile models are written here with LibTorch's own TorchScript
// compiler (Module::define), so no Python is needed.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <torch/script.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

#include "core/activity.h"
#include "core/child_process.h"
#include "core/errors.h"
#include "data/dataset.h"
#include "diagnostics/feature_spectrum.h"
#include "nn/torchscript_backbone.h"
#include "spec/experiment_spec.h"
#include "test_helpers.h"
#include "training/model_probe.h"
#include "training/runner.h"

namespace liftlab {
namespace {

using test::TempDir;
using ProbeClock = std::chrono::steady_clock;

double seconds_from(ProbeClock::time_point t0) {
    return std::chrono::duration<double>(ProbeClock::now() - t0).count();
}

// A 16 → 8 TorchScript backbone whose forward body is `body` (then `return x.matmul(self.w)`).
std::string scripted_backbone(const TempDir& dir, const std::string& name,
                              const std::string& body) {
    torch::jit::Module m("Probed");
    m.register_parameter("w", torch::ones({16, 8}) / 16, /*is_buffer=*/false);
    m.define("def forward(self, x):\n" + body + "    return x.matmul(self.w)\n");
    const std::string path = dir.file(name);
    m.save(path);
    return path;
}

// cf-regression's teacher task (16 → 4), small, with a TorchScript backbone.
ExperimentSpec probe_spec(const std::string& script) {
    ExperimentSpec s;
    s.name = "probe-test";
    s.task.kind = "teacher-regression";
    s.task.n_train = 256;
    s.task.n_test = 64;
    s.backbone.kind = "torchscript";
    s.backbone.script = script;
    s.steps = 5;
    s.threads = 1;
    MethodSpec m;
    m.name = "cf-prox";
    m.label = "cf-prox";
    m.lambda = 10;
    s.methods = {m};
    return s;
}

Dataset probe_data() {
    Dataset d;
    d.x_train = torch::randn({8, 16});
    d.y_train = torch::randn({8, 4});
    return d;
}

// The message of the SpecError `f` throws ("" when it throws none).
template <typename F>
std::string spec_error_of(F f) {
    try {
        f();
    } catch (const SpecError& e) {
        return e.what();
    }
    return "";
}

TEST(ChildProcess, AnswersTimesOutStopsAndNamesSignals) {
    ChildOptions o;
    o.argv = {"/bin/sh", "-c", "echo said >&2; printf 'answer' >&3; exit 7"};
    auto c = run_child_process(o);
    EXPECT_EQ(c.end, ChildOutcome::End::Exited);
    EXPECT_EQ(c.exit_code, 7);
    EXPECT_EQ(c.answer, "answer");
    EXPECT_EQ(c.log, "said\n");

    o.argv = {"/bin/sh", "-c", "kill -SEGV $$"};
    c = run_child_process(o);
    EXPECT_EQ(c.end, ChildOutcome::End::Signalled);
    EXPECT_EQ(signal_name(c.signal), "SIGSEGV");

    // A child that never ends, and its own child: both gone at the limit (the process group).
    o.argv = {"/bin/sh", "-c", "sleep 30 & sleep 30"};
    o.timeout_seconds = 0.3;
    c = run_child_process(o);
    EXPECT_EQ(c.end, ChildOutcome::End::TimedOut);
    EXPECT_LT(c.seconds, 0.3 + 0.5);

    std::atomic<bool> stop{false};
    o.timeout_seconds = 30;
    o.stop = &stop;
    std::thread raise([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        stop = true;
    });
    c = run_child_process(o);
    raise.join();
    EXPECT_EQ(c.end, ChildOutcome::End::Stopped);
    EXPECT_LT(c.seconds, 0.2 + 0.5);
}

TEST(ModelProbe, AcceptsAGoodFileAndKeepsTheInProcessWords) {
    const auto spec =
        probe_spec(std::string(LIFTLAB_SOURCE_DIR) + "/resources/models/mlp_backbone.pt");
    const auto data = probe_data();
    const auto in_process = load_torchscript_backbone(spec.backbone, data);
    EXPECT_EQ(check_backbone_in_child(spec, data), in_process->sha256());

    // The cnn example on the teacher task's rows: the same SpecError, word for word.
    auto cnn = spec;
    cnn.backbone.script = std::string(LIFTLAB_SOURCE_DIR) + "/resources/models/cnn_backbone.pt";
    const auto inside = spec_error_of([&] { load_torchscript_backbone(cnn.backbone, data); });
    ASSERT_FALSE(inside.empty());
    EXPECT_EQ(spec_error_of([&] { check_backbone_in_child(cnn, data); }), inside);

    const auto params = inspect_torchscript_in_child(spec.backbone.script, "model");
    const auto direct = inspect_torchscript(spec.backbone.script, "model");
    ASSERT_EQ(params.size(), direct.size());
    for (size_t i = 0; i < params.size(); ++i) {
        EXPECT_EQ(params[i].name, direct[i].name);
        EXPECT_EQ(params[i].shape, direct[i].shape);
    }
}

TEST(ModelProbe, AForwardThatNeverReturnsEndsAtTheLimit) {
    TempDir dir;
    const auto file =
        scripted_backbone(dir, "hang.pt", "    i = 0\n    while i >= 0:\n        i = i + 1\n");
    auto spec = probe_spec(file);
    // A LibTorch process takes ≈ 1 s to start on a busy machine, more beside a heavy test under
    // ctest -j2: 5 s leaves the child room to reach its forward before the limit.
    spec.probe_timeout_seconds = 5;
    const auto t0 = ProbeClock::now();
    const auto message = spec_error_of([&] { check_backbone_in_child(spec, probe_data()); });
    const double took = seconds_from(t0);
    EXPECT_NE(
        message.find("spec key 'backbone.script': " + file + ": forward did not return within 5 s"),
        std::string::npos)
        << message;
    EXPECT_GE(took, 5.0);
    EXPECT_LT(took, 5.0 + 2.0);  // the limit, then SIGKILL and the reap

    // A stop ends it at once.
    spec.probe_timeout_seconds = 60;
    std::atomic<bool> stop{false};
    std::thread raise([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        stop = true;
    });
    const auto t1 = ProbeClock::now();
    EXPECT_THROW(check_backbone_in_child(spec, probe_data(), &stop), ModelProbeCancelled);
    raise.join();
    EXPECT_LT(seconds_from(t1), 0.5 + 1.0);

    // The runner: a stop during the check cancels the run before any folder exists.
    stop = false;
    std::thread raise_again([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        stop = true;
    });
    RunOptions options;
    options.out_dir = dir.file("runs");
    options.stop = &stop;
    const auto t2 = ProbeClock::now();
    const auto result = run_experiment(spec, options);
    raise_again.join();
    EXPECT_LT(seconds_from(t2), 0.5 + 2.0);
    EXPECT_EQ(result.status, RunStatus::Cancelled);
    EXPECT_TRUE(result.run_dir.empty());
    EXPECT_FALSE(std::filesystem::exists(dir.file("runs")));
}

TEST(ModelProbe, ACrashInLibTorchIsASpecErrorNamingTheSignal) {
    const auto spec =
        probe_spec(std::string(LIFTLAB_SOURCE_DIR) + "/resources/models/mlp_backbone.pt");
    ::setenv("LIFTLAB_TEST_PROBE_CRASH", "SIGSEGV", 1);
    const auto message = spec_error_of([&] { check_backbone_in_child(spec, probe_data()); });
    ::unsetenv("LIFTLAB_TEST_PROBE_CRASH");
    EXPECT_NE(message.find(spec.backbone.script +
                           ": LibTorch crashed on this file (SIGSEGV) while loading it"),
              std::string::npos)
        << message;
}

TEST(ModelProbe, AModelThatAsksForTooMuchMemoryIsRefusedByTheLimit) {
    TempDir dir;
    // 8 GiB of float32 zeros in forward, against a 2 GiB address-space limit.
    const auto file = scripted_backbone(
        dir, "greedy.pt", "    big = torch.zeros([2147483648])\n    x = x + big[0]\n");
    auto spec = probe_spec(file);
    spec.probe_memory_gib = 2;
    const auto message = spec_error_of([&] { check_backbone_in_child(spec, probe_data()); });
    EXPECT_NE(message.find(file + ": ran out of memory (limit 2 GiB, probe_memory_gib) in its "
                                  "probe forward pass"),
              std::string::npos)
        << message;
}

// Φ = U diag(σ) Vᵀ with the given singular values (n × d, orthonormal U, V).
torch::Tensor phi_with_singular_values(int64_t n, int64_t d, const std::vector<double>& sigma) {
    torch::manual_seed(36);
    const int64_t k = static_cast<int64_t>(sigma.size());
    const auto u = std::get<0>(torch::linalg_qr(torch::randn({n, k}, test::kF64)));
    const auto v = std::get<0>(torch::linalg_qr(torch::randn({d, k}, test::kF64)));
    return u.matmul(torch::diag(torch::tensor(sigma, test::kF64))).matmul(v.t());
}

// The Gram route gives the SVD's singular values, κ and ranks: σ_i within 1e-9 · σ_max (its error
// is about max(N, d) · ε · σ_max² / σ_i ≈ 1e-11 σ_max at κ = 100), on wide and tall features and
// on rank-deficient ones.
TEST(FeatureSpectrum, GramRouteMatchesTheSvd) {
    std::vector<double> sigma;
    for (int i = 0; i < 40; ++i) sigma.push_back(std::pow(100.0, -i / 39.0));  // κ = 100
    for (const auto& [n, d] : {std::pair<int64_t, int64_t>{40, 3000}, {3000, 40}}) {
        const auto phi = phi_with_singular_values(n, d, sigma).to(torch::kFloat32);
        const auto svd = feature_spectrum(phi, {}, SpectrumRoute::Svd);
        const auto gram = feature_spectrum(phi, {}, SpectrumRoute::Gram);
        ASSERT_EQ(gram.singular_values.size(), svd.singular_values.size());
        for (size_t i = 0; i < svd.singular_values.size(); ++i)
            EXPECT_NEAR(gram.singular_values[i], svd.singular_values[i],
                        1e-9 * svd.singular_values[0])
                << n << " × " << d << ", σ_" << i;
        EXPECT_NEAR(gram.kappa, svd.kappa, 1e-7 * svd.kappa);
        EXPECT_NEAR(gram.effective_rank, svd.effective_rank, 1e-9 * svd.effective_rank);
        EXPECT_EQ(gram.numerical_rank, 40);
        EXPECT_EQ(svd.numerical_rank, 40);
    }
    // Rank 10 of 60 × 5000: both routes see 10 non-zero singular values.
    const auto low = phi_with_singular_values(60, 5000, {5, 4, 3, 2, 1, 0.9, 0.8, 0.7, 0.6, 0.5});
    EXPECT_EQ(feature_spectrum(low, {}, SpectrumRoute::Gram).numerical_rank, 10);
    EXPECT_EQ(feature_spectrum(low, {}, SpectrumRoute::Svd).numerical_rank, 10);
    EXPECT_NEAR(feature_spectrum(low, {}, SpectrumRoute::Gram).kappa, 10.0, 1e-8);
}

TEST(FeatureSpectrum, WideFeaturesTakeTheGramRouteAndStopBetweenBlocks) {
    // 64 × 200 000: wide, the Gram route (the SVD takes 7 s); it is asked for a stop between
    // blocks.
    const auto phi = torch::randn({64, 200000});
    int asked = 0;
    EXPECT_THROW(feature_spectrum(phi, [&] { return ++asked > 3; }), Stopped);
    EXPECT_EQ(asked, 4);
    const auto t0 = ProbeClock::now();
    const auto s = feature_spectrum(phi);
    EXPECT_LT(seconds_from(t0), 3.0);  // 64² × 200 000 multiply-adds: ≈ 0.1 s
    ASSERT_EQ(s.singular_values.size(), 64u);
    // Gaussian rows: σ_i² ≈ d (1 ± √(n/d) …): every σ within 10 % of √d.
    for (double v : s.singular_values)
        EXPECT_NEAR(v, std::sqrt(200000.0), 0.1 * std::sqrt(200000.0));
    // The row budget: at most kSpectrumRowBudget rows when both sides are wider.
    EXPECT_EQ(spectrum_rows(torch::zeros({3000, 3000})).size(0), kSpectrumRowBudget);
    EXPECT_EQ(spectrum_rows(torch::zeros({3000, 64})).size(0), 3000);
}

TEST(Activity, NamesTheInnermostPhaseOfEachThreadAndStopsThroughTheScope) {
    EXPECT_EQ(current_activity(), "");
    {
        const Activity outer("training");
        const Activity inner("the spectrum");
        EXPECT_EQ(current_activity(), "the spectrum");
        std::thread other([] {
            const Activity mine("log Z");
            const auto now = current_activity();
            EXPECT_NE(now.find("the spectrum"), std::string::npos);
            EXPECT_NE(now.find("log Z"), std::string::npos);
        });
        other.join();
    }
    EXPECT_EQ(current_activity(), "");
    std::atomic<bool> flag{false};
    EXPECT_FALSE(stop_requested());
    {
        const StopScope scope(&flag);
        EXPECT_NO_THROW(throw_if_stopped());
        flag = true;
        EXPECT_THROW(throw_if_stopped(), Stopped);
    }
    EXPECT_FALSE(stop_requested());
}

}  // namespace
}  // namespace liftlab
