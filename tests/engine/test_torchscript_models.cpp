// A user's TorchScript models in the lab (docs/your-model.md): a scripted backbone
// under a closed-form head trains exactly like the built-in backbone of the same weights; the
// lifter (and softplus) on a scripted ICNN exactly like on the built-in ICNN of the same weights;
// exported models give back the logged metrics; bad files are spec errors naming the file, with
// no run folder. The example models are resources/models/ (scripts/make_example_models.py).
#include <gtest/gtest.h>
#include <torch/script.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/errors.h"
#include "data/dataset.h"
#include "export/model_export.h"
#include "icnn/script_icnn.h"
#include "nn/torchscript_backbone.h"
#include "nn/torchscript_module.h"
#include "spec/experiment_spec.h"
#include "test_helpers.h"
#include "training/icnn_trainer.h"
#include "training/method_trainer.h"
#include "training/runner.h"

namespace liftlab {
namespace {

std::string example(const std::string& name) {
    return std::string(LIFTLAB_SOURCE_DIR) + "/resources/models/" + name;
}

// cf-regression's teacher task (16 → 4) at test size, with one method.
ExperimentSpec teacher_spec(const std::string& method) {
    ExperimentSpec s;
    s.name = "script-test";
    s.task.kind = "teacher-regression";
    s.task.n_train = 1024;
    s.task.n_test = 256;
    s.backbone.hidden = {128, 128};
    s.backbone.feature_dim = 64;
    s.batch_size = 32;
    s.steps = 20;
    s.threads = 1;
    MethodSpec m;
    m.name = method;
    m.label = method;
    m.lambda = 100.0;
    s.methods = {m};
    return s;
}

ExperimentSpec scripted(ExperimentSpec s) {
    s.backbone.kind = "torchscript";
    s.backbone.script = example("mlp_backbone.pt");
    return s;
}

// A 1-D Gumbel energy model of width 32 (the example ICNN's), fresh samples every step.
ExperimentSpec ebm_spec(const std::string& method) {
    ExperimentSpec s;
    s.name = "script-icnn-test";
    s.task.kind = "icnn-ebm-1d";
    s.task.target = "gumbel";
    s.task.fresh_samples = true;
    s.task.n_train = 2048;
    s.task.n_test = 1024;
    s.icnn.width = 32;
    s.icnn.layers = 3;
    s.icnn.quadrature_points = 2000;
    s.icnn.reference_size = 256;
    s.optimizer.lr = 3e-3;
    s.batch_size = 128;
    s.steps = 20;
    s.threads = 1;
    MethodSpec m;
    m.name = method;
    m.label = method;
    s.methods = {m};
    return s;
}

ExperimentSpec scripted_icnn(ExperimentSpec s) {
    s.icnn.script = example("icnn_1d.pt");
    s.icnn.constrained = {"wz1", "wz2", "w_out"};
    return s;
}

void copy_into(const std::vector<torch::Tensor>& from, const std::vector<torch::Tensor>& to) {
    ASSERT_EQ(from.size(), to.size());
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < from.size(); ++i) {
        ASSERT_EQ(from[i].sizes(), to[i].sizes()) << "tensor " << i;
        to[i].copy_(from[i]);
    }
}

// |a − b| ≤ tol · max(1, |b|) for every metric of b.
void expect_same_metrics(const std::map<std::string, double>& a,
                         const std::map<std::string, double>& b, double tol) {
    for (const auto& [k, v] : b) {
        ASSERT_TRUE(a.count(k)) << k;
        EXPECT_LE(std::abs(a.at(k) - v), tol * std::max(1.0, std::abs(v)))
            << k << ": " << a.at(k) << " vs " << v;
    }
}

TEST(TorchScriptBackbone, ClosedFormHeadEqualsTheBuiltInBackboneOfTheSameWeights) {
    // cf-prox over 20 steps on the scripted MLP and on LiftLab's mlp backbone carrying the file's
    // weights: the same losses and test metrics to 1e-6. (The built-in tanh is a kernel within
    // 2.5 ulp of torch.tanh, so the two agree to rounding, not bit for bit.)
    const auto spec = teacher_spec("cf-prox");
    const auto data = make_dataset(spec.task);
    MethodTrainer script(scripted(spec), spec.methods[0], data, /*seed=*/3);
    MethodTrainer builtin(spec, spec.methods[0], data, /*seed=*/3);
    EXPECT_EQ(script.backbone().feature_dim(), 64);
    copy_into(script.backbone().parameters(), builtin.backbone().parameters());
    double largest = 0;
    for (int i = 0; i < spec.steps; ++i) {
        const double ls = script.step(), lb = builtin.step();
        EXPECT_NEAR(ls, lb, 1e-6 * std::max(1.0, std::abs(lb))) << "step " << i + 1;
        largest = std::max(largest, std::abs(ls - lb));
    }
    expect_same_metrics(script.evaluate_test(), builtin.evaluate_test(), 1e-6);
    std::printf("[ info     ] largest training-loss difference over 20 steps: %.3g\n", largest);
}

// spec.json records what ran: the scripted backbone's own feature width (64 for the example
// MLP), not the built-in backbone.feature_dim the spec carried, so the folder re-runs as itself.
TEST(TorchScriptBackbone, SpecJsonRecordsTheProbedFeatureWidth) {
    test::TempDir dir;
    auto spec = scripted(teacher_spec("cf-prox"));
    spec.backbone.feature_dim = 128;
    spec.steps = 2;
    RunOptions opts;
    opts.out_dir = dir.str();
    const auto r = run_experiment(spec, opts);
    ASSERT_EQ(r.status, "ok");
    const auto written = nlohmann::json::parse(std::ifstream(r.run_dir + "/spec.json"));
    EXPECT_EQ(written["backbone"]["feature_dim"], 64);
    EXPECT_EQ(written["backbone"]["kind"], "torchscript");
    // Parsed back, it is the same spec but for that width.
    auto again = parse_spec(written);
    EXPECT_EQ(again.backbone.feature_dim, 64);
    again.backbone.feature_dim = 128;
    again.backbone.script_sha256.clear();
    EXPECT_EQ(to_json(again), to_json(spec));
}

TEST(TorchScriptBackbone, EverySeedStartsFromTheFileUnlessReset) {
    const auto spec = scripted(teacher_spec("cf-prox"));
    const auto data = make_dataset(spec.task);
    const auto file = load_torchscript(spec.backbone.script, "backbone.script").module;
    std::vector<torch::Tensor> own;
    for (const auto& [name, p] : torchscript_parameters(file)) own.push_back(p);
    for (std::uint64_t seed : {0, 7}) {
        MethodTrainer t(spec, spec.methods[0], data, seed);
        const auto params = t.backbone().parameters();
        ASSERT_EQ(params.size(), own.size());
        for (size_t i = 0; i < own.size(); ++i) EXPECT_TRUE(torch::equal(params[i], own[i]));
    }
    auto reset = spec;
    reset.backbone.init = "reset";
    MethodTrainer r1(reset, reset.methods[0], data, 1), r1b(reset, reset.methods[0], data, 1),
        r2(reset, reset.methods[0], data, 2);
    const auto p1 = r1.backbone().parameters(), p1b = r1b.backbone().parameters(),
               p2 = r2.backbone().parameters();
    EXPECT_FALSE(torch::equal(p1[0], own[0]));
    EXPECT_TRUE(torch::equal(p1[0], p1b[0]));  // seeded
    EXPECT_FALSE(torch::equal(p1[0], p2[0]));
    // scripts/make_example_models.py built the MLP after torch.manual_seed(0): PyTorch's own
    // Linear init from that generator state. The reset at seed 0 draws exactly those numbers —
    // the same distributions, in the same order, from the same generator.
    MethodTrainer r0(reset, reset.methods[0], data, 0);
    const auto p0 = r0.backbone().parameters();
    for (size_t i = 0; i < own.size(); ++i) EXPECT_TRUE(torch::equal(p0[i], own[i])) << i;
}

TEST(TorchScriptBackbone, ResetDrawsPyTorchsLinearInit) {
    // layer0.weight 128 × 16: U(±1/4), variance 1/48; layer0.bias U(±1/4) too (its weight's
    // fan-in). 2048 draws: the sample variance within 5 standard errors (var of U² is b⁴/5 − b⁴/9).
    auto m = load_torchscript(example("mlp_backbone.pt"), "backbone.script").module;
    torch::manual_seed(11);
    reset_torchscript_parameters(m);
    const auto params = torchscript_parameters(m);
    ASSERT_EQ(params[0].first, "layer0.weight");
    ASSERT_EQ(params[1].first, "layer0.bias");
    const auto w = params[0].second.to(torch::kFloat64);
    const double bound = 0.25;
    EXPECT_LE(w.abs().max().item<double>(), bound);
    const double var = w.pow(2).mean().item<double>();
    const double se = std::sqrt((std::pow(bound, 4) / 5 - std::pow(bound, 4) / 9) / w.numel());
    EXPECT_NEAR(var, bound * bound / 3, test::kStdErrors * se);
    EXPECT_LE(params[1].second.abs().max().item<double>(), bound);
    EXPECT_GT(params[1].second.abs().max().item<double>(), 0.0);
}

TEST(TorchScriptIcnn, LifterEqualsTheBuiltInLifterFromTheSameWeights) {
    // The lifter emits every ICNN tensor, so "the same weights" are the lifter's own (body,
    // readouts, slack): the built-in trainer's copied into the scripted one's. 20 steps, then the
    // test NLL, log Z and TV: equal to 1e-6.
    for (const std::string method : {"lifter", "lifter-noslack"}) {
        const auto spec = ebm_spec(method);
        const auto data = make_dataset(spec.task);
        IcnnTrainer builtin(spec, spec.methods[0], data, /*seed=*/5);
        IcnnTrainer script(scripted_icnn(spec), spec.methods[0], data, /*seed=*/5);
        ASSERT_EQ(script.icnn()->constrained_shapes(), builtin.icnn()->constrained_shapes());
        ASSERT_EQ(script.icnn()->free_shapes(), builtin.icnn()->free_shapes());
        copy_into(builtin.icnn()->strategy().parameters(), script.icnn()->strategy().parameters());
        for (int i = 0; i < spec.steps; ++i) {
            const double ls = script.step(), lb = builtin.step();
            EXPECT_NEAR(ls, lb, 1e-6 * std::max(1.0, std::abs(lb))) << method << " step " << i + 1;
        }
        expect_same_metrics(script.evaluate_test(), builtin.evaluate_test(), 1e-6);
    }
}

TEST(TorchScriptIcnn, SoftplusAndPgdStartFromTheFileAndMatchTheBuiltInIcnn) {
    // init "file": softplus θ̃ = softplus⁻¹(θ_file), pgd θ = θ_file (non-negative already), the
    // free tensors the file's. The built-in ICNN given the same values trains the same.
    const auto loaded =
        TorchScriptIcnn::load(scripted_icnn(ebm_spec("softplus")).icnn, 1, torch::zeros({2, 1}));
    for (const std::string method : {"softplus", "pgd"}) {
        const auto spec = ebm_spec(method);
        const auto data = make_dataset(spec.task);
        IcnnTrainer builtin(spec, spec.methods[0], data, /*seed=*/2);
        IcnnTrainer script(scripted_icnn(spec), spec.methods[0], data, /*seed=*/2);
        const auto theta = script.theta_weights();
        for (size_t i = 0; i < loaded->own_constrained().size(); ++i)
            EXPECT_LE((theta[i] - loaded->own_constrained()[i]).abs().max().item<double>(), 1e-5)
                << method << " constrained " << i;  // softplus(softplus⁻¹(θ)) = θ to rounding
        copy_into(script.icnn()->free_parameters(), builtin.icnn()->free_parameters());
        copy_into(script.icnn()->strategy().parameters(), builtin.icnn()->strategy().parameters());
        for (int i = 0; i < spec.steps; ++i) {
            const double ls = script.step(), lb = builtin.step();
            EXPECT_NEAR(ls, lb, 1e-6 * std::max(1.0, std::abs(lb))) << method << " step " << i + 1;
        }
        expect_same_metrics(script.evaluate_test(), builtin.evaluate_test(), 1e-6);
    }
}

TEST(TorchScriptIcnn, ConstrainedParametersAreNamedOrMatched) {
    auto spec = ebm_spec("lifter").icnn;
    spec.script = example("icnn_1d.pt");
    spec.constrained_regex = "wz\\d+|w_out";
    const auto a = TorchScriptIcnn::load(spec, 1, torch::zeros({2, 1}));
    EXPECT_EQ(a->constrained_names(), (std::vector<std::string>{"wz1", "wz2", "w_out"}));
    EXPECT_EQ(a->free_names(),
              (std::vector<std::string>{"w0", "b0", "wx1", "b1", "wx2", "b2", "w_x"}));
    spec.constrained_regex = "nothing";
    try {
        TorchScriptIcnn::load(spec, 1, torch::zeros({2, 1}));
        FAIL() << "a regex matching nothing must be refused";
    } catch (const SpecError& e) {
        EXPECT_EQ(e.key(), "icnn.constrained_regex");
        EXPECT_NE(std::string(e.what()).find("w_out"), std::string::npos) << e.what();
    }
    spec.constrained_regex.clear();
    spec.constrained = {"wz1", "not_there"};
    try {
        TorchScriptIcnn::load(spec, 1, torch::zeros({2, 1}));
        FAIL() << "an unknown parameter name must be refused";
    } catch (const SpecError& e) {
        EXPECT_EQ(e.key(), "icnn.constrained");
        EXPECT_NE(std::string(e.what()).find("not_there"), std::string::npos) << e.what();
    }
}

TEST(TorchScriptIcnn, TrainedEnergyIsConvexOnRandomChords) {
    // The lifter and pgd keep the named weights non-negative, so the trained example ICNN is
    // convex: no chord above tolerance. Naming no real constraint (only b0, a bias) leaves Wz
    // free; after training with pgd the check reports what it sees (a number in [0, 1]).
    for (const std::string method : {"lifter", "pgd"}) {
        const auto spec = scripted_icnn(ebm_spec(method));
        const auto data = make_dataset(spec.task);
        IcnnTrainer t(spec, spec.methods[0], data, 0);
        for (int i = 0; i < spec.steps; ++i) t.step();
        const auto d = t.final_diagnostics();
        EXPECT_EQ(d.at("chord_convexity_violations"), 0.0) << method;
        EXPECT_LE(d.at("chord_convexity_gap"), 1e-5) << method;
    }
}

TEST(TorchScriptIcnn, ChordCheckFindsAConcaveEnergy) {
    // E(x) = c·x − (w x)² with only c constrained: concave in x. Every chord lies below it.
    test::TempDir dir;
    torch::jit::Module m("Concave");
    m.register_parameter("c", torch::full({1, 1}, 0.5), false);
    m.register_parameter("w", torch::full({1, 1}, 2.0), false);
    m.define(
        "def forward(self, x):\n"
        "    return torch.linear(x, self.c).squeeze(1) - torch.linear(x, "
        "self.w).pow(2).squeeze(1)\n");
    m.save(dir.file("concave.pt"));
    auto spec = ebm_spec("pgd");
    spec.icnn.script = dir.file("concave.pt");
    spec.icnn.constrained = {"c"};
    const auto data = make_dataset(spec.task);
    IcnnTrainer t(spec, spec.methods[0], data, 0);
    const auto d = t.final_diagnostics();
    EXPECT_GT(d.at("chord_convexity_violations"), 0.9);
    EXPECT_GT(d.at("chord_convexity_gap"), 1e-3);
}

// A TorchScript module built here (source and parameters), saved to `path`.
std::string save_script(const test::TempDir& dir, const std::string& name,
                        const std::vector<std::pair<std::string, torch::Tensor>>& params,
                        const std::string& forward_body) {
    torch::jit::Module m("UserModel");
    for (const auto& [n, t] : params) m.register_parameter(n, t, false);
    m.define("def forward(self, x):\n" + forward_body);
    m.save(dir.file(name));
    return dir.file(name);
}

// run_experiment on `spec` must throw a SpecError on `key` whose text holds every `needles`
// entry, and leave no run folder.
void expect_refused(const ExperimentSpec& spec, const std::string& key,
                    const std::vector<std::string>& needles) {
    test::TempDir out;
    RunOptions options;
    options.out_dir = out.str();
    try {
        run_experiment(spec, options);
        ADD_FAILURE() << "expected a spec error on " << key;
    } catch (const SpecError& e) {
        EXPECT_EQ(e.key(), key) << e.what();
        for (const auto& n : needles)
            EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
                << "'" << n << "' not in: " << e.what();
    }
    EXPECT_TRUE(std::filesystem::is_empty(out.str())) << "a run folder was written";
}

TEST(TorchScriptBackbone, BadFilesAreSpecErrorsNamingTheFileWithNoRunFolder) {
    test::TempDir dir;
    auto spec = scripted(teacher_spec("cf-prox"));
    spec.backbone.script = dir.write("notes.pt", "this is not a zip archive\n");
    expect_refused(spec, "backbone.script", {"notes.pt", "not a TorchScript archive"});
    spec.backbone.script = dir.file("missing.pt");
    expect_refused(spec, "backbone.script", {"missing.pt", "cannot open"});
    spec.backbone.script = save_script(dir, "empty.pt", {}, "    return x\n");
    expect_refused(spec, "backbone.script", {"empty.pt", "no parameters"});
    spec.backbone.script =
        save_script(dir, "throws.pt", {{"w", torch::ones({3, 3})}},
                    "    assert x.dim() == 4, \"inputs must be images\"\n    return x\n");
    expect_refused(spec, "backbone.script", {"throws.pt", "inputs must be images"});
    spec.backbone.script = save_script(dir, "wrong_width.pt", {{"w", torch::ones({8, 5})}},
                                       "    return torch.linear(x, self.w)\n");
    expect_refused(spec, "backbone.script", {"wrong_width.pt", "forward failed", "4 × 16"});
    spec.backbone.script = save_script(dir, "scalar.pt", {{"w", torch::ones({5, 16})}},
                                       "    return torch.linear(x, self.w).sum()\n");
    expect_refused(spec, "backbone.script", {"scalar.pt", "returned a scalar", "4 × d"});
    // A real model whose central directory declares a 150 MB code file (a damaged size field, as
    // the fuzzer found; LibTorch would inflate and compile it for many seconds).
    {
        std::ifstream in(example("mlp_backbone.pt"), std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const std::string code = "/code/__torch__.py";
        size_t header = std::string::npos;  // its central directory entry
        for (size_t at = bytes.find("PK\x01\x02"); at != std::string::npos;
             at = bytes.find("PK\x01\x02", at + 4)) {
            const size_t name_len = static_cast<unsigned char>(bytes[at + 28]) |
                                    static_cast<unsigned char>(bytes[at + 29]) << 8;
            const std::string name = bytes.substr(at + 46, name_len);
            if (name.size() > code.size() &&
                name.compare(name.size() - code.size(), code.size(), code) == 0)
                header = at;
        }
        ASSERT_NE(header, std::string::npos);
        auto le = [&](size_t at, int n) {
            size_t v = 0;
            for (int i = n - 1; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(bytes[at + i]);
            return v;
        };
        // Its deflated code with a reserved block type in the first byte: a stream zlib refuses
        // (LibTorch's miniz reads some damaged streams differently; found by fuzzing).
        std::string damaged = bytes;
        const size_t local = le(header + 42, 4);
        damaged[local + 30 + le(local + 26, 2) + le(local + 28, 2)] = '\xff';
        spec.backbone.script = dir.write("damaged_deflate.pt", damaged);
        expect_refused(spec, "backbone.script",
                       {"damaged_deflate.pt", "__torch__.py' does not inflate"});
        const uint32_t huge = 150'000'000;
        for (int i = 0; i < 4; ++i) bytes[header + 24 + i] = static_cast<char>(huge >> (8 * i));
        spec.backbone.script = dir.write("bomb.pt", bytes);
        expect_refused(spec, "backbone.script", {"bomb.pt", "__torch__.py' declares 150000000"});
    }
    // Its end-of-directory record counting one entry more than the directory holds (LibTorch's
    // miniz reads the other count and goes on; found by fuzzing, with a damaged pickle behind).
    {
        std::ifstream in(example("mlp_backbone.pt"), std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const size_t eocd = bytes.rfind("PK\x05\x06");
        ASSERT_NE(eocd, std::string::npos);
        bytes[eocd + 10] = static_cast<char>(bytes[eocd + 10] + 1);
        spec.backbone.script = dir.write("directory.pt", bytes);
        expect_refused(spec, "backbone.script", {"directory.pt", "zip directory is damaged"});
    }
    // Its data.pkl (stored as is) with a string said to be 436 MB long, and with a memo index of
    // 2³² − 16 (LibTorch would allocate 436 MB, or reserve 64 GB, before finding the file ends);
    // with a TUPLE3 on a fresh mark, a dict of three values and a read of a memo slot never
    // written (LibTorch 1.13 reads past its stack's end, or off its memo, for such opcodes; found
    // by fuzzing: a crash).
    for (const auto& [name, patch, message] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"long_string.pt", std::string("X\x01\x00\x00\x1atraining", 13),
              "a 436207617-byte string where"},
             {"memo.pt", std::string("r\xf0\xff\xff\xffN0N0N0N0", 13),
              "a memo index of 4294967280"},
             {"underflow.pt", std::string("(\x87N0N0N0N0N0N", 13),
              "takes 3 values where its stack holds 0"},
             {"odd_dict.pt", std::string("(NNNdN0N0N0N0", 13),
              "a dict with an odd number of keys and values"},
             {"memo_read.pt", std::string("j\xf0\xff\xff\x00N0N0N0N0", 13),
              "reads memo slot 16777200 before writing it"}}) {
        std::ifstream in(example("mlp_backbone.pt"), std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const std::string field("X\x08\x00\x00\x00training", 13);
        const size_t at = bytes.find(field);
        ASSERT_NE(at, std::string::npos);
        bytes.replace(at, field.size(), patch);
        spec.backbone.script = dir.write(name, bytes);
        expect_refused(spec, "backbone.script", {name, "data.pkl' is damaged", message});
    }
    // Its first storage declared 2304 floats over a record of 2048 (LibTorch takes the count as
    // declared: training would read past the record).
    {
        std::ifstream in(example("mlp_backbone.pt"), std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const std::string count("M\x00\x08t", 4);  // BININT2 2048, TUPLE
        const size_t at = bytes.find(count);
        ASSERT_NE(at, std::string::npos);
        bytes[at + 2] = '\x09';
        spec.backbone.script = dir.write("short_record.pt", bytes);
        expect_refused(spec, "backbone.script",
                       {"short_record.pt", "a tensor storage of 2304 elements of 4 bytes",
                        "holds 8192 bytes"});
    }
    spec.backbone.script = example("mlp_backbone.pt");
    spec.backbone.script_sha256 = std::string(64, 'a');
    expect_refused(spec, "backbone.script_sha256", {"mlp_backbone.pt", "the file changed"});
}

TEST(TorchScriptIcnn, BadFilesAreSpecErrorsNamingTheFileWithNoRunFolder) {
    test::TempDir dir;
    auto spec = scripted_icnn(ebm_spec("lifter"));
    spec.icnn.script = save_script(dir, "two.pt", {{"w", torch::ones({2, 1})}},
                                   "    return torch.linear(x, self.w)\n");
    spec.icnn.constrained = {"w"};
    expect_refused(spec, "icnn.script", {"two.pt", "one energy per row"});
    spec.icnn.script = example("icnn_2d.pt");
    spec.icnn.constrained = {"wz1", "wz2", "w_out"};
    expect_refused(spec, "icnn.script", {"icnn_2d.pt", "forward failed"});
}

TEST(ModelExport, ExportedModelsGiveTheLoggedTestMetrics) {
    // The run folder's models/, loaded back with torch::jit::load: the backbone + head model's
    // MSE on models/test_data.pt is the logged test_loss; the ICNN's mean energy plus its log_z
    // is the logged test NLL. (tests/cli runs the same check in Debian's python3-torch.)
    test::TempDir out;
    RunOptions options;
    options.out_dir = out.str();
    auto cf = scripted(teacher_spec("cf-prox"));
    const auto cf_run = run_experiment(cf, options);
    auto ebm = ebm_spec("lifter");  // the built-in ICNN exports too
    const auto ebm_run = run_experiment(ebm, options);
    for (const auto* run : {&cf_run, &ebm_run}) {
        ASSERT_EQ(run->runs.size(), 1u);
        const auto& r = run->runs[0];
        ASSERT_EQ(r.model, "models/" + r.method + "_seed0.pt");
        auto model = torch::jit::load(run->run_dir + "/" + r.model);
        auto data = torch::jit::load(run->run_dir + "/models/test_data.pt");
        torch::NoGradGuard no_grad;
        const auto x = data.attr("x").toTensor();
        const auto pred = model.forward({x}).toTensor().to(torch::kFloat64);
        double value;
        if (run == &cf_run)
            value =
                (pred - data.attr("y").toTensor().to(torch::kFloat64)).pow(2).mean().item<double>();
        else
            value = pred.mean().item<double>() + model.attr("log_z").toDouble();
        const double logged = r.final_metrics.at("test_loss");
        EXPECT_NEAR(value, logged, 1e-6 * std::max(1.0, std::abs(logged))) << r.method;
    }
}

}  // namespace
}  // namespace liftlab
