#include "claims/claim_registry.h"

#include <stdexcept>

namespace liftlab::claims {

namespace {

using Sets = std::vector<std::string>;

Recipe run(std::string preset, int seeds, Sets sets = {}) {
    return {std::move(preset), std::move(sets), seeds};
}

Sets join(Sets a, const Sets& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

Comparison compare(std::string metric, std::string a, std::string b, std::string at,
                   bool lower_is_better, bool log_scale, double margin = 0) {
    Comparison c;
    c.metric = std::move(metric);
    c.a = std::move(a);
    c.b = std::move(b);
    c.at = std::move(at);
    c.lower_is_better = lower_is_better;
    c.log_scale = log_scale;
    c.margin = margin;
    return c;
}

// A tuning grid of one method: every value of `key` (one override each).
TuneAxis grid(std::string method, const std::string& key, const std::vector<std::string>& values) {
    TuneAxis axis{std::move(method), {}};
    for (const auto& v : values) axis.settings.push_back({key + "=" + v});
    return axis;
}

// A closed-form head's grid: its strength `key` × the backbone lr (methods.<label>.lr).
TuneAxis head_grid(const std::string& method, const std::string& key,
                   const std::vector<std::string>& strengths, const std::vector<std::string>& lrs) {
    TuneAxis axis{method, {}};
    for (const auto& s : strengths)
        for (const auto& lr : lrs)
            axis.settings.push_back(
                {"methods." + method + "." + key + "=" + s, "methods." + method + ".lr=" + lr});
    return axis;
}

// Seconds-long versions for the test suite (tests/cli's short presets).
const Sets kTinyCf = {"steps=20", "log_every=10"};
const Sets kTinyIcnn1d = {"steps=20",          "log_every=10",    "icnn.width=16",
                          "task.n_train=1024", "task.n_test=256", "icnn.quadrature_points=500"};
const Sets kTinyBurgers = {"steps=6",
                           "log_every=3",
                           "task.n_train=12",
                           "task.n_test=4",
                           "task.fine_grid=512",
                           "task.resolution=64",
                           "backbone.width=16",
                           "backbone.feature_dim=32"};

const Sets kCfBatch4 = {"sweep.values=[4]"};
const Sets kSgdBackbone = {"optimizer.kind=sgd", "optimizer.momentum=0.9", "optimizer.lr=0.03",
                           R"(methods=[{"name":"sgd","lr":0.03},{"name":"cf-prox","lambda":100}])",
                           "sweep.values=[4]"};
const Sets kLifterSoftplus = {R"(methods=[{"name":"lifter"},{"name":"softplus"}])"};
const Sets kWide = {R"(methods=[{"name":"lifter"},{"name":"softplus-wide"},{"name":"softplus"}])"};
// The fast tier keeps the sweep's 6 000 steps: over the 100 seeds of the 8-Gaussians sweep the
// lifter entered the low-loss basin between step 1 000 and 4 000 (median 1 800; 2-spirals, first 20
// seeds: 1 800–3 000), so at 1 500 steps the basin is not yet formed and a verdict there is about
// the transient, not the claim. The seeds (4: the fewest at which Fisher's exact test can decide,
// 4/4 against 0/4 gives p = 0.014) and the pgd arm of the symmetric control are what it drops.
const Sets kCpflowFast = {"log_every=500"};
const Sets kCpflowFastSymmetric = {
    "log_every=500",
    R"(methods=[{"name":"lifter","init_noise":0.5},{"name":"softplus","init_noise":0.5}])"};
const Sets kCpflowTiny = {"steps=10", "log_every=5", "icnn.width=8", "icnn.lifter_body=[16,16,32]",
                          "task.n_test=128"};
const Sets kSpirals = {"task.target=2spirals-demo"};

const Sets kFmnistFast = {"sweep.values=[16]",
                          R"(methods=[{"name":"ce"},{"name":"cf-prox","lambda":100}])",
                          "steps=1000", "log_every=250", "task.n_train=20000"};
const Sets kTabularFast = {"icnn.width=64",
                           "icnn.layers=3",
                           "steps=200",
                           "log_every=50",
                           "icnn.flow_fit_steps=1000",
                           "icnn.proposal_adapt_steps=500",
                           "icnn.eval_is_samples=16384"};

std::vector<Claim> make_registry() {
    std::vector<Claim> r;
    auto add = [&](Claim c) { r.push_back(std::move(c)); };

    // --- Closed-form last layers -------------------------------------------------------------
    {
        Claim c;
        c.id = "cf-ridge-small-batch";
        c.text = "Per-batch ridge fails at small batches; the proximal update holds";
        c.paper =
            "QM9: the per-batch ridge degrades at small batches, the proximal update does not";
        c.test = TestKind::Better;
        c.cmp = compare("test_loss", "cf-prox", "cf-ridge", "4", true, true);
        c.tiny = run("cf-batch-sweep", 2, join(kCfBatch4, kTinyCf));
        c.fast = run("cf-batch-sweep", 5, kCfBatch4);
        c.full = run("cf-batch-sweep", 10);
        c.figure = "sweep_test_loss";
        add(c);
    }
    {
        Claim c;
        c.id = "cf-prox-matches-adam";
        c.text = "The proximal closed-form head matches Adam (cf-prox ≈ Adam), batch 4";
        c.paper = "comparable to end-to-end Adam at every batch size (QM9)";
        c.test = TestKind::Equivalent;
        c.cmp = compare("test_loss", "cf-prox", "adam", "4", true, true, 0.10);
        c.tiny = run("cf-batch-sweep", 2, join(kCfBatch4, kTinyCf));
        c.fast = run("cf-batch-sweep", 5, kCfBatch4);
        c.full = run("cf-batch-sweep", 10);
        c.figure = "sweep_test_loss";
        c.tuning.axes = {grid("adam", "methods.adam.lr", {"3e-4", "1e-3", "3e-3", "1e-2"}),
                         head_grid("cf-prox", "lambda", {"10", "100"}, {"1e-3", "3e-3"})};
        c.tuning.select_metric = "test_loss";
        c.tuning.seeds = 3;
        add(c);
    }
    {
        Claim c;
        c.id = "cf-prox-beats-sgd";
        c.text = "With an SGD backbone the proximal head beats plain SGD, most at small batches";
        c.paper = "QM9: below plain SGD, most at small batches; robust to the backbone optimizer";
        c.test = TestKind::Better;
        c.cmp = compare("test_loss", "cf-prox", "sgd", "4", true, true);
        c.tiny = run("cf-batch-sweep", 2, join(kSgdBackbone, kTinyCf));
        c.fast = run("cf-batch-sweep", 5, kSgdBackbone);
        c.full = run("cf-batch-sweep", 10, kSgdBackbone);
        c.figure = "sweep_test_loss";
        c.tuning.axes = {grid("sgd", "methods.sgd.lr", {"3e-3", "1e-2", "3e-2", "1e-1"}),
                         head_grid("cf-prox", "lambda", {"10", "100"}, {"1e-2", "3e-2"})};
        c.tuning.select_metric = "test_loss";
        c.tuning.seeds = 3;
        add(c);
    }
    {
        Claim c;
        c.id = "fno-ridge-small-batch";
        c.text = "FNO (Burgers): the proximal head holds at 2 functions a batch, ridge fails";
        c.paper = "proximal effective across batch sizes, per-batch ridge fails at small ones";
        c.test = TestKind::Better;
        c.cmp = compare("test_rel_l2", "cf-prox", "cf-ridge", "2", true, true);
        c.tiny = run("cf-fno-batch-sweep", 2, join({"sweep.values=[2]"}, kTinyBurgers));
        c.fast = run("cf-fno-batch-sweep", 3,
                     {"sweep.values=[2]", "steps=300", "log_every=50", "task.n_train=200",
                      "task.n_test=50"});
        c.full = run("cf-fno-batch-sweep", 3);
        c.figure = "test_rel_l2";
        add(c);
    }
    {
        Claim c;
        c.id = "dfiv-prox-small-batch";
        c.text = "DFIV without the final full-data re-estimation: comparable accuracy, batch 16";
        c.paper = "no final re-estimation needed, comparable accuracy (demand design)";
        c.test = TestKind::NonInferior;
        c.cmp = compare("test_loss", "dfiv-prox", "dfiv", "16", true, true, 0.25);
        c.tiny = run("cf-dfiv-batch-sweep", 2,
                     join({"sweep.values=[16,512]", "task.n_train=600"}, kTinyCf));
        c.fast = run("cf-dfiv-batch-sweep", 3, {"sweep.values=[16,512]", "steps=1500"});
        c.full = run("cf-dfiv-batch-sweep", 5);
        c.figure = "sweep_test_loss";
        add(c);
    }
    {
        Claim c = r.back();
        c.id = "dfiv-prox-large-batch";
        c.text = "DFIV without the final full-data re-estimation: comparable accuracy, batch 512";
        c.cmp.at = "512";
        add(c);
    }
    {
        Claim c;
        c.id = "l2-onehot-vs-ce";
        c.text =
            "Classification: the one-hot squared loss with the proximal head is comparable "
            "or better than cross-entropy, batch 16";
        c.paper = "CIFAR-100: comparable or better than cross-entropy at small–moderate batches";
        c.test = TestKind::NonInferior;
        c.cmp = compare("test_accuracy", "cf-prox", "ce", "16", false, false, 0.005);
        c.tiny = run("cf-fmnist-batch-sweep", 2,
                     join(kFmnistFast, join(kTinyCf, {"task.n_train=512", "task.n_test=256"})));
        c.fast = run("cf-fmnist-batch-sweep", 3, kFmnistFast);
        c.full = run("cf-fmnist-batch-sweep", 3);
        c.figure = "sweep_test_accuracy";
        c.tuning.axes = {grid("ce", "methods.ce.lr", {"3e-4", "1e-3", "3e-3", "1e-2"}),
                         head_grid("cf-prox", "lambda", {"10", "100"}, {"1e-3", "3e-3"})};
        c.tuning.select_metric = "test_accuracy";
        c.tuning.select_lower_is_better = false;
        c.tuning.seeds = 2;
        add(c);
    }
    {
        Claim c;
        c.id = "many-classes-ce";
        c.text = "… but the squared loss falls behind cross-entropy at many classes (1000)";
        c.paper = "ImageNet: behind cross-entropy at many classes";
        c.test = TestKind::Better;
        c.cmp = compare("test_accuracy", "ce", "cf-prox", "1000", false, false);
        const Sets only_1000 = {"sweep.values=[1000]",
                                R"(methods=[{"name":"ce"},{"name":"cf-prox","lambda":100}])"};
        c.tiny = run("cf-class-count-sweep", 2,
                     join(only_1000, join(kTinyCf, {"task.n_train=3000", "task.n_test=600"})));
        c.fast = run("cf-class-count-sweep", 3, only_1000);
        c.full = run("cf-class-count-sweep", 5);
        c.figure = "sweep_test_accuracy";
        add(c);
    }

    // --- The lifter: energy models ---------------------------------------------------------
    {
        Claim c;
        c.id = "lifter-1d-tv";
        c.text = "1-D log-concave EBM (Gumbel): the lifter reaches a lower TV than direct softplus";
        c.paper = "Gumbel TV 0.011–0.015 for the lifter; 30 paired seeds (the 1-D density figure)";
        c.test = TestKind::Better;
        c.cmp = compare("tv", "lifter", "softplus", "", true, true);
        c.tiny = run("icnn-ebm-1d", 2, join(kLifterSoftplus, kTinyIcnn1d));
        c.fast = run("icnn-ebm-1d", 3, join(kLifterSoftplus, {"steps=1000"}));
        c.full = run("icnn-ebm-1d", 30);
        c.figure = "tv";
        c.tuning.axes = {grid("lifter", "methods.lifter.lr", {"3e-4", "1e-3", "3e-3"}),
                         grid("softplus", "methods.softplus.lr", {"3e-4", "1e-3", "3e-3"})};
        c.tuning.select_metric = "test_loss";  // the validation NLL (TV uses the exact density)
        c.tuning.seeds = 3;
        c.tuning.final_seeds = 10;
        add(c);
    }
    {
        Claim c;
        c.id = "softplus-wide";
        c.text = "Structural, not capacity: a parameter-matched wider direct softplus still fails";
        c.paper =
            "a direct softplus ICNN widened to the lifter's parameter count does not close the gap";
        c.test = TestKind::Better;
        c.cmp = compare("tv", "lifter", "softplus-wide", "", true, true);
        c.tiny = run("icnn-ebm-1d", 2, join(kWide, kTinyIcnn1d));
        c.fast = run("icnn-ebm-1d", 3, join(kWide, {"icnn.width=32", "steps=1000"}));
        c.full = run("icnn-ebm-1d", 3, kWide);
        c.figure = "tv";
        add(c);
    }
    {
        Claim c;
        c.id = "lifter-nd";
        c.text = "n-D log-concave EBM (8-D Gumbel): the lifter reaches a lower test NLL";
        c.paper = "holds up to 32-D (MNIST autoencoder latents)";
        c.test = TestKind::Better;
        c.cmp = compare("test_loss", "lifter", "softplus", "", true, false);
        c.tiny = run("icnn-ebm-nd", 2,
                     join(kLifterSoftplus, {"steps=10", "log_every=5", "icnn.width=16",
                                            "icnn.is_samples=256", "icnn.eval_is_samples=1024",
                                            "task.n_train=1024", "task.n_test=256", "task.dim=3"}));
        c.fast = run("icnn-ebm-nd", 3,
                     join(kLifterSoftplus, {"steps=600", "icnn.eval_is_samples=16384"}));
        c.full = run("icnn-ebm-nd", 5);
        c.figure = "test_loss";
        add(c);
    }
    {
        Claim c;
        c.id = "lifter-latents-32d";
        c.text = "32-D Fashion-MNIST autoencoder latents: the lifter reaches a lower test NLL";
        c.paper = "MNIST autoencoder latents (32-D)";
        c.test = TestKind::Better;
        c.cmp = compare("test_loss", "lifter", "softplus", "", true, false);
        // About an hour a seed on two cores: the full tier only.
        c.full = run("icnn-ebm-latents", 2);
        c.figure = "test_loss";
        add(c);
    }
    {
        Claim c;
        c.id = "theorem1-ablation";
        c.text = "Theorem 1: only the full lifter has a non-zero slack cross-covariance σ²_Jac";
        c.paper = "removing the slack, the body or the batch coupling makes σ²_Jac vanish";
        c.test = TestKind::CrossCovariance;
        c.cmp.metric = "sigma2_jac";
        c.cmp.a = "lifter";
        c.cmp.variants = {"lifter-noslack", "lifter-nobody", "lifter-decoupled"};
        c.tiny = run("icnn-ablation", 2, join(kTinyIcnn1d, {"diagnostics.jacobian_batches=8"}));
        c.fast = run("icnn-ablation", 3, {"steps=500", "diagnostics.permutations=1000"});
        c.full = run("icnn-ablation", 10, {"diagnostics.permutations=1000"});
        c.figure = "sigma2_jac";
        add(c);
    }
    {
        Claim c;
        c.id = "escape";
        c.text =
            "Escape: the lifter's coordinates leave the shoulder, direct softplus's are absorbed";
        c.paper = "lifter coordinates cycle through the shoulder; direct softplus ones stay";
        c.test = TestKind::Better;
        c.cmp = compare("exit_rate", "lifter", "softplus", "", false, true);
        c.tiny = run("icnn-escape", 2, join(kLifterSoftplus, kTinyIcnn1d));
        c.fast = run("icnn-escape", 3, join(kLifterSoftplus, {"steps=1000"}));
        c.full = run("icnn-escape", 10);
        c.figure = "escape";
        add(c);
    }
    {
        Claim c;
        c.id = "hepmass-stand-in";
        c.text = "21-D tabular EBM (HEPMASS stand-in): the lifter below PGD and direct softplus";
        c.paper = "HEPMASS: lifter 22.85, PGD 27.01, direct softplus 443.88 nats";
        c.test = TestKind::Better;
        c.cmp = compare("test_loss", "lifter", "softplus", "", true, false);
        c.tiny = run("icnn-ebm-tabular", 2,
                     {"steps=10", "log_every=5", "icnn.width=16", "icnn.layers=3",
                      "icnn.is_samples=256", "icnn.eval_is_samples=1024", "task.n_train=512",
                      "task.n_test=256", "icnn.flow_fit_steps=50", "icnn.flow_hidden=16",
                      "icnn.proposal_adapt_steps=20", kLifterSoftplus.front()});
        c.fast = run("icnn-ebm-tabular", 2, join(kTabularFast, kLifterSoftplus));
        c.full = run("icnn-ebm-tabular", 3,
                     {"icnn.width=64", "icnn.layers=3", "steps=500", "log_every=100"});
        c.figure = "test_loss";
        add(c);
    }

    // --- The lifter: CP-Flow, the authors' 100-seed sweeps ----------------------------------
    auto cpflow = [&](std::string id, std::string text, const std::string& preset,
                      const Sets& target) {
        const bool symmetric = preset.find("symmetric") != std::string::npos;
        Claim c;
        c.id = std::move(id);
        c.text = std::move(text);
        c.paper =
            "a lower-loss basin direct softplus rarely finds (100 seeds, "
            "experiments_cpflow_demo_2d_f1" +
            std::string(symmetric ? "_symmetric" : "") + ")";
        c.test = TestKind::Basin;
        c.cmp = compare("test_loss", "lifter", "softplus", "", true, false);
        c.tiny = run(preset, 2, join(target, kCpflowTiny));
        c.fast = run(preset, 4, join(target, symmetric ? kCpflowFastSymmetric : kCpflowFast));
        c.full = run(preset, 100, target);
        c.figure = "final_loss_histogram";
        add(c);
    };
    cpflow("cpflow-basin-8g", "CP-Flow 8-Gaussians: the lifter reaches a lower-loss basin",
           "cpflow-demo-2d", {});
    cpflow("cpflow-basin-2s", "CP-Flow 2-spirals: the lifter reaches a lower-loss basin",
           "cpflow-demo-2d", kSpirals);
    cpflow("cpflow-basin-8g-symmetric",
           "… with every arm's own parameter perturbed alike (8-Gaussians)",
           "cpflow-demo-2d-symmetric", {});
    cpflow("cpflow-basin-2s-symmetric",
           "… with every arm's own parameter perturbed alike (2-spirals)",
           "cpflow-demo-2d-symmetric", kSpirals);
    return r;
}

}  // namespace

const char* to_string(Tier tier) {
    switch (tier) {
        case Tier::Tiny:
            return "tiny";
        case Tier::Fast:
            return "fast";
        case Tier::Full:
            return "full";
    }
    return "?";
}

Tier parse_tier(const std::string& text) {
    if (text == "tiny") return Tier::Tiny;
    if (text == "fast") return Tier::Fast;
    if (text == "full") return Tier::Full;
    throw std::invalid_argument("--tier must be fast, full or tiny (got '" + text + "')");
}

const char* to_string(TestKind kind) {
    switch (kind) {
        case TestKind::Better:
            return "better";
        case TestKind::NonInferior:
            return "non-inferior";
        case TestKind::Equivalent:
            return "equivalent";
        case TestKind::CrossCovariance:
            return "cross-covariance";
        case TestKind::Basin:
            return "basin";
    }
    return "?";
}

const Recipe& Claim::recipe(Tier tier) const {
    return tier == Tier::Tiny ? tiny : tier == Tier::Fast ? fast : full;
}

const std::vector<Claim>& claim_registry() {
    static const std::vector<Claim> registry = make_registry();
    return registry;
}

const Claim* find_claim(const std::string& id) {
    for (const auto& c : claim_registry())
        if (c.id == id) return &c;
    return nullptr;
}

}  // namespace liftlab::claims
