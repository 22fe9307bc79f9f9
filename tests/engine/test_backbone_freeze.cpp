// A frozen or pretrained backbone (spec backbone.freeze, a TorchScript file's requires_grad=False):
// fully frozen it is a linear probe — the closed forms solve exactly on the fixed features
// (cf-full reaches the full-data ridge optimum in its one solve), the gradient methods train
// their head alone and the backbone's bits never change; partly frozen, the frozen tensors stay
// as they were; a name or pattern that matches nothing is a spec error listing the parameters.
#include <gtest/gtest.h>
#include <torch/script.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <tuple>

#include "core/errors.h"
#include "data/batch_sampler.h"
#include "data/dataset.h"
#include "lastlayer/proximal_solve.h"
#include "nn/backbone_freeze.h"
#include "spec/experiment_spec.h"
#include "test_helpers.h"
#include "training/method_trainer.h"
#include "training/runner.h"

namespace liftlab {
namespace {

// cf-regression's teacher task (16 → 4) at test size, the built-in mlp 16 → 32 → 16 features.
ExperimentSpec probe_spec(const std::string& method) {
    ExperimentSpec s;
    s.name = "freeze-test";
    s.task.kind = "teacher-regression";
    s.task.n_train = 600;
    s.task.n_test = 128;
    s.backbone.hidden = {32};
    s.backbone.feature_dim = 16;
    s.batch_size = 32;
    s.steps = 10;
    s.threads = 1;
    MethodSpec m;
    m.name = method;
    m.label = method;
    m.lr = method == "sgd" ? 0.05 : (method == "adam" ? 1e-2 : -1);
    m.beta = 0.5;
    m.lambda = 10.0;
    s.methods = {m};
    return s;
}

std::vector<torch::Tensor> snapshot(const std::vector<torch::Tensor>& params) {
    std::vector<torch::Tensor> out;
    for (const auto& p : params) out.push_back(p.detach().clone());
    return out;
}

// The example MLP backbone (resources/models/) with requires_grad=False on every parameter, as
// a user's pretrained file: saved by LibTorch, which keeps the flag.
std::string frozen_example(const test::TempDir& dir) {
    auto m =
        torch::jit::load(std::string(LIFTLAB_SOURCE_DIR) + "/resources/models/mlp_backbone.pt");
    for (auto p : m.parameters()) p.requires_grad_(false);
    m.save(dir.file("frozen_mlp.pt"));
    return dir.file("frozen_mlp.pt");
}

// ‖Φ̃ᵀ(Φ̃W − Y) + λ(W − W0)‖ against the backward-error scale ‖Φ̃ᵀΦ̃ + λI‖·‖W‖ + ‖Φ̃ᵀY + λW0‖:
// the first-order condition of min ‖Y − Φ̃W‖² + λ‖W − W0‖² (Φ̃ = [Φ, 1], float64).
double first_order_residual(const torch::Tensor& phi, const torch::Tensor& y,
                            const torch::Tensor& w, double lambda, torch::Tensor w0 = {}) {
    const auto p = with_bias_column(phi.to(torch::kFloat64));
    const auto t = y.to(torch::kFloat64);
    if (!w0.defined()) w0 = torch::zeros_like(w);
    const auto a = p.t().mm(p) + lambda * torch::eye(p.size(1), test::kF64);
    const auto b = p.t().mm(t) + lambda * w0;
    const double residual = (a.mm(w) - b).norm().item<double>();
    const double scale =
        a.norm().item<double>() * w.norm().item<double>() + b.norm().item<double>();
    return residual / scale;
}

// A float64 Cholesky solve is backward stable: the residual is a modest multiple of ε = 2.2e-16
// times the scale above; 1e-12 leaves room, yet a W off the optimum (a batch-only solve, another
// β) misses it by orders of magnitude (checked below).
constexpr double kFirstOrderTolerance = 1e-12;

TEST(FrozenBackbone, SpecTakesTrueAListOrARegexAndRoundTrips) {
    const auto base = to_json(probe_spec("adam"));
    for (const nlohmann::json& value :
         {nlohmann::json(true), nlohmann::json(false), nlohmann::json({"layers.0.weight"}),
          nlohmann::json("layers\\.0\\..*")}) {
        auto j = base;
        j["backbone"]["freeze"] = value;
        const auto s = parse_spec(j);
        EXPECT_EQ(to_json(s)["backbone"]["freeze"], value);
        EXPECT_EQ(to_json(parse_spec(to_json(s))), to_json(s));
    }
    auto j = base;
    j["backbone"]["freeze"] = nlohmann::json::array();  // nothing listed: nothing frozen
    EXPECT_EQ(to_json(parse_spec(j))["backbone"]["freeze"], false);
    auto refused = [&](const nlohmann::json& value, const std::string& key,
                       const std::string& needle) {
        auto bad = base;
        bad["backbone"]["freeze"] = value;
        try {
            parse_spec(bad);
            ADD_FAILURE() << "accepted " << value.dump();
        } catch (const SpecError& e) {
            EXPECT_EQ(e.key(), key);
            EXPECT_TRUE(test::has(e.what(), needle)) << e.what();
        }
    };
    refused(3, "backbone.freeze", "expected true, false, a list of parameter names or a regular");
    refused("", "backbone.freeze", "an empty regular expression freezes nothing");
    refused("layers.(", "backbone.freeze", "is not a valid regular expression");
    refused({"a", 1}, "backbone.freeze[1]", "expected a string");
    refused({"a", "a"}, "backbone.freeze[1]", "listed twice");
    // A spec whose methods have no backbone.
    auto icnn = nlohmann::json::parse(R"({"task": {"kind": "icnn-ebm-1d"},
        "methods": [{"name": "pgd"}], "backbone": {"freeze": true}})");
    try {
        parse_spec(icnn);
        ADD_FAILURE() << "a freeze without a backbone was accepted";
    } catch (const SpecError& e) {
        EXPECT_EQ(e.key(), "backbone.freeze");
        EXPECT_TRUE(test::has(e.what(), "no method of this spec has a backbone")) << e.what();
    }
}

TEST(FrozenBackbone, ResolvesNamesAndRefusesOnesThatMatchNothing) {
    auto spec = probe_spec("adam");
    const auto data = make_dataset(spec.task);
    FreezeResolution r;
    spec.backbone.freeze_regex = "layers\\.1\\..*";
    auto backbone = make_backbone(spec.backbone, data, &r);
    EXPECT_EQ(r.frozen, (std::vector<std::string>{"layers.1.weight", "layers.1.bias"}));
    EXPECT_TRUE(r.by_file.empty());
    EXPECT_EQ(r.parameters, 4);
    EXPECT_EQ(r.frozen_elements, 16 * 32 + 16);
    EXPECT_EQ(r.elements, 32 * 16 + 32 + 16 * 32 + 16);
    EXPECT_FALSE(r.linear_probe());
    EXPECT_EQ(backbone->trainable_parameters().size(), 2u);
    spec.backbone.freeze_regex.clear();
    spec.backbone.freeze_all = true;
    make_backbone(spec.backbone, data, &r);
    EXPECT_TRUE(r.linear_probe());
    EXPECT_EQ(to_json(r)["linear_probe"], true);
    // Nothing matched: the key, the pattern and some of the backbone's names.
    spec.backbone.freeze_all = false;
    for (const auto& [names, regex, needle] :
         std::vector<std::tuple<std::vector<std::string>, std::string, std::string>>{
             {{"layers.0.weight", "layer0.weight"}, "", "no parameter 'layer0.weight'"},
             {{}, "conv.*", "'conv.*' matches none of the parameters of the mlp backbone"}}) {
        spec.backbone.freeze_names = names;
        spec.backbone.freeze_regex = regex;
        try {
            make_backbone(spec.backbone, data);
            ADD_FAILURE() << "accepted " << needle;
        } catch (const SpecError& e) {
            EXPECT_EQ(e.key(), "backbone.freeze");
            EXPECT_TRUE(test::has(e.what(), needle)) << e.what();
            EXPECT_TRUE(test::has(e.what(), "layers.0.weight, layers.0.bias, layers.1.weight"))
                << e.what();
        }
    }
}

TEST(FrozenBackbone, ClosedFormHeadsSolveExactlyOnTheFixedFeaturesOfAFrozenFile) {
    // The reported fault: a TorchScript backbone frozen in its file made cf-ridge and cf-prox
    // fail with "element 0 of tensors does not require grad". Now each step is the closed form on
    // the batch's fixed features: W satisfies its first-order condition.
    test::TempDir dir;
    for (const std::string method : {"cf-ridge", "cf-prox", "cf-rls"}) {
        auto spec = probe_spec(method);
        spec.backbone.kind = "torchscript";
        spec.backbone.script = frozen_example(dir);
        const auto data = make_dataset(spec.task);
        const std::uint64_t seed = 4;
        MethodTrainer t(spec, spec.methods[0], data, seed);
        ASSERT_TRUE(t.linear_probe()) << method;
        const auto before = snapshot(t.backbone().parameters());
        BatchSampler sampler(data.n_train(), spec.batch_size, seed);  // the trainer's batches
        torch::Tensor w_prev = t.last_layer().clone();
        for (int step = 1; step <= 3; ++step) {
            ASSERT_NO_THROW(t.step()) << method;
            const auto idx = sampler.next();
            const auto phi = t.flat_features(data.x_train.index_select(0, idx));
            const auto y = data.y_train.index_select(0, idx);
            const auto w = t.last_layer();
            if (method == "cf-ridge")
                EXPECT_LT(first_order_residual(phi, y, w, spec.methods[0].beta),
                          kFirstOrderTolerance);
            if (method == "cf-prox")
                EXPECT_LT(first_order_residual(phi, y, w, spec.methods[0].lambda, w_prev),
                          kFirstOrderTolerance);
            w_prev = w.clone();
        }
        const auto after = t.backbone().parameters();
        for (size_t i = 0; i < after.size(); ++i)
            EXPECT_TRUE(torch::equal(before[i], after[i])) << method << " tensor " << i;
    }
}

TEST(FrozenBackbone, FullDataHeadReachesTheRidgeOptimumInOneSolve) {
    auto spec = probe_spec("cf-full");
    spec.backbone.freeze_all = true;
    spec.methods[0].beta = 2.0;
    const auto data = make_dataset(spec.task);
    MethodTrainer t(spec, spec.methods[0], data, 0);
    ASSERT_TRUE(t.linear_probe());
    t.step();
    const auto phi = t.flat_features(data.x_train);
    const auto w1 = t.last_layer().clone();
    const double residual = first_order_residual(phi, data.y_train, w1, spec.methods[0].beta);
    EXPECT_LT(residual, kFirstOrderTolerance);
    // The test has teeth: the optimum of a batch, or of another β, misses the condition.
    const auto batch_w = solve_proximal(bias_column_f64(phi.narrow(0, 0, 32)),
                                        data.y_train.narrow(0, 0, 32), spec.methods[0].beta)
                             .w;
    EXPECT_GT(first_order_residual(phi, data.y_train, batch_w, spec.methods[0].beta), 1e-6);
    EXPECT_GT(first_order_residual(phi, data.y_train, w1, 10 * spec.methods[0].beta), 1e-9);
    // One solve: later steps (refresh_every 1) neither solve again nor move W.
    const double solve_seconds = t.solve_seconds();
    for (int i = 0; i < 4; ++i) t.step();
    EXPECT_EQ(t.solve_seconds(), solve_seconds);
    EXPECT_TRUE(torch::equal(t.last_layer(), w1));
}

TEST(FrozenBackbone, GradientMethodsTrainTheHeadAlone) {
    test::TempDir dir;
    for (const bool script : {false, true})
        for (const std::string method : {"adam", "sgd", "ce"}) {
            auto spec = probe_spec(method);
            if (method == "ce") {
                spec.task.kind = "class-mixture";
                spec.task.input_dim = 16;
                spec.task.output_dim = 3;
                spec.task.teacher_hidden = {8};
            }
            if (script) {
                if (method == "ce") continue;  // the example file takes the teacher's 16 inputs
                spec.backbone.kind = "torchscript";
                spec.backbone.script = frozen_example(dir);
            } else {
                spec.backbone.freeze_all = true;
            }
            const auto data = make_dataset(spec.task);
            MethodTrainer t(spec, spec.methods[0], data, 1);
            ASSERT_TRUE(t.linear_probe());
            const auto backbone = snapshot(t.backbone().parameters());
            const auto head = t.last_layer().clone();
            for (int i = 0; i < spec.steps; ++i) ASSERT_TRUE(std::isfinite(t.step()));
            const auto after = t.backbone().parameters();
            for (size_t i = 0; i < after.size(); ++i)
                EXPECT_TRUE(torch::equal(backbone[i], after[i]))
                    << method << (script ? " (file)" : " (freeze)") << ": backbone tensor " << i;
            EXPECT_GT((t.last_layer() - head).abs().max().item<double>(), 1e-4) << method;
        }
}

TEST(FrozenBackbone, PartlyFrozenBackbonesKeepTheirFrozenWeights) {
    for (const std::string method : {"adam", "cf-prox", "cf-full"}) {
        auto spec = probe_spec(method);
        spec.backbone.freeze_names = {"layers.0.weight", "layers.1.bias"};
        const auto data = make_dataset(spec.task);
        MethodTrainer t(spec, spec.methods[0], data, 2);
        EXPECT_FALSE(t.linear_probe());
        const auto named = t.backbone().named_parameters();
        std::vector<torch::Tensor> before;
        for (const auto& [name, p] : named) before.push_back(p.detach().clone());
        for (int i = 0; i < spec.steps; ++i) ASSERT_TRUE(std::isfinite(t.step())) << method;
        for (size_t i = 0; i < named.size(); ++i) {
            const bool frozen =
                named[i].first == "layers.0.weight" || named[i].first == "layers.1.bias";
            EXPECT_EQ(torch::equal(before[i], named[i].second), frozen)
                << method << ": " << named[i].first;
        }
    }
}

TEST(FrozenBackbone, RunRecordsTheFreezeAndLogsTheFixedSpectrumOnce) {
    test::TempDir dir;
    auto spec = probe_spec("cf-full");
    spec.backbone.kind = "torchscript";
    spec.backbone.script = frozen_example(dir);
    spec.methods.push_back(probe_spec("adam").methods[0]);
    spec.methods.push_back(probe_spec("cf-prox").methods[0]);
    spec.seeds = {0, 1};
    spec.steps = 12;
    spec.log_every = 4;
    spec.diagnostics.spectrum_every = 4;
    spec.diagnostics.probe_size = 64;
    RunOptions options;
    options.out_dir = dir.file("runs");
    const auto result = run_experiment(spec, options);
    ASSERT_EQ(result.status, RunStatus::Ok);
    std::ifstream in(result.run_dir + "/spec.json");
    const auto recorded = nlohmann::json::parse(in);
    EXPECT_EQ(recorded["backbone"]["freeze"], false);
    EXPECT_EQ(recorded["backbone_freeze"]["linear_probe"], true);
    EXPECT_EQ(recorded["backbone_freeze"]["by_file"].size(), 6u);
    EXPECT_EQ(recorded["backbone_freeze"]["frozen"][0], "layer0.weight");
    EXPECT_NO_THROW(parse_spec(recorded));  // the folder's spec repeats the run
    // One spectrum per seed, at the first spectrum point, under one label; κ once per method.
    std::ifstream spectra(result.run_dir + "/spectra.csv");
    std::string line;
    std::set<std::string> where;
    std::getline(spectra, line);
    while (std::getline(spectra, line)) {
        // step,method,seed,index,sigma: the first three columns
        size_t cut = 0;
        for (int i = 0; i < 3; ++i) cut = line.find(',', cut + (i ? 1 : 0));
        where.insert(line.substr(0, cut));
    }
    EXPECT_EQ(where, (std::set<std::string>{"4,frozen-backbone,0", "4,frozen-backbone,1"}));
    std::ifstream metrics(result.run_dir + "/metrics.csv");
    int kappas = 0;
    while (std::getline(metrics, line)) kappas += test::has(line, ",kappa,");
    EXPECT_EQ(kappas, 3 * 2);
    // cf-full is the same optimum on every seed (fixed features, one solve).
    double first = -1;
    for (const auto& r : result.runs) {
        if (r.method != "cf-full") continue;
        if (first < 0) first = r.final_metrics.at("test_loss");
        EXPECT_EQ(r.final_metrics.at("test_loss"), first);
    }
}

TEST(FrozenBackbone, AFreezeThatMatchesNothingLeavesNoRunFolder) {
    auto spec = probe_spec("cf-prox");
    spec.backbone.freeze_regex = "backbone\\..*";
    test::TempDir out;
    RunOptions options;
    options.out_dir = out.str();
    try {
        run_experiment(spec, options);
        ADD_FAILURE() << "expected a spec error";
    } catch (const SpecError& e) {
        EXPECT_EQ(e.key(), "backbone.freeze");
        EXPECT_TRUE(test::has(e.what(), "layers.0.weight")) << e.what();
    }
    EXPECT_TRUE(std::filesystem::is_empty(out.str()));
}

}  // namespace
}  // namespace liftlab
