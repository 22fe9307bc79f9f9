// The built-in methods and task kinds, one registration each. A new closed-form head or
// positivity strategy is its own file plus one line here; a new task kind is its data file plus
// one entry here (and its data loader in data/dataset.cpp).
#include <algorithm>
#include <functional>
#include <memory>

#include "core/errors.h"
#include "icnn/positivity.h"
#include "lastlayer/closed_form_head.h"
#include "lastlayer/gradient_head.h"
#include "methods/method_registry.h"
#include "spec/experiment_spec.h"

namespace liftlab {

namespace {

// ---- method families: what every member of a family shares -----------------------------------

// The fields every entry has; the family builders below add their own.
MethodInfo entry(std::string name, MethodFamily family, std::string doc, std::uint32_t colour,
                 std::vector<std::string> parameters) {
    MethodInfo m;
    m.name = std::move(name);
    m.family = family;
    m.doc = std::move(doc);
    m.colour = colour;
    m.parameters = std::move(parameters);
    return m;
}

// `lr`: the default step size of a method with its own optimizer (ignored without one).
MethodInfo gradient(std::string name, std::string doc, std::uint32_t colour, std::string optimizer,
                    double lr, bool cross_entropy = false) {
    MethodInfo m = entry(std::move(name), MethodFamily::Gradient, std::move(doc), colour, {"lr"});
    m.optimizer = std::move(optimizer);
    m.cross_entropy = cross_entropy;
    if (!m.optimizer.empty()) {
        m.positive = {"lr"};  // its own optimizer needs a step size
        m.defaults = {{"lr", lr}};
    }
    m.make_head = [](const MethodSpec&, int64_t d, int64_t k) {
        return std::make_unique<GradientHead>(d, k);
    };
    return m;
}

MethodInfo closed_form(std::string name, std::string doc, std::uint32_t colour,
                       std::vector<std::string> parameters, HeadFactory head) {
    MethodInfo m = entry(std::move(name), MethodFamily::ClosedForm, std::move(doc), colour, {"lr"});
    for (auto& p : parameters) m.parameters.push_back(std::move(p));
    m.make_head = std::move(head);
    return m;
}

MethodInfo dfiv(std::string name, std::string doc, std::uint32_t colour, bool refit,
                bool proximal) {
    MethodInfo m =
        entry(std::move(name), MethodFamily::Dfiv, std::move(doc), colour, {"lr", "lambda_scale"});
    if (proximal) m.parameters.push_back("lambda");
    m.dfiv_refit = refit;
    m.dfiv_proximal = proximal;
    return m;
}

MethodInfo positivity(std::string name, std::string doc, std::uint32_t colour, PositivityMap map,
                      PositivityFactory make) {
    MethodInfo m = entry(std::move(name), MethodFamily::Positivity, std::move(doc), colour, {"lr"});
    m.positivity = map;
    m.make_positivity = std::move(make);
    return m;
}

MethodInfo published(MethodInfo m) {
    m.published_cpflow = true;
    return m;
}

MethodInfo wide(MethodInfo m) {
    m.wide = true;
    return m;
}

// A strategy that reads `init_noise` (PositivityStrategy::perturb_init).
MethodInfo noisy_init(MethodInfo m) {
    m.parameters.push_back("init_noise");
    return m;
}

PositivityFactory softplus_init(SoftplusPositivity::Init init) {
    return [init](TensorShapeList shapes, TensorShapeList, int64_t, const PositivityOptions&) {
        return std::make_shared<SoftplusPositivity>(std::move(shapes), init);
    };
}

// The lifter with the spec's body and pool_norm, and `change` applied to its options (the
// ablations).
PositivityFactory lifter_with(
    std::function<LifterPositivityOptions(LifterPositivityOptions)> change) {
    return [change](TensorShapeList shapes, TensorShapeList free_shapes, int64_t input_dim,
                    const PositivityOptions& options) {
        return std::make_shared<LifterPositivity>(std::move(shapes), std::move(free_shapes),
                                                  change(LifterPositivityOptions(input_dim)
                                                             .body_widths(options.lifter_body)
                                                             .pool_norm(options.lifter_pool_norm)));
    };
}

// ---- task checks ------------------------------------------------------------------------------

void require_method_key(bool ok, const std::string& key, const std::string& what) {
    if (!ok) throw SpecError(key, what);
}

}  // namespace

std::vector<MethodInfo> builtin_methods() {
    using PM = PositivityMap;
    using Init = SoftplusPositivity::Init;
    const auto same = [](LifterPositivityOptions o) { return o; };
    // Colours: the tab10 palette (distinct hues, readable on white) for the first ten, then eight
    // more picked so that any two methods differ by a CIEDE2000 ΔE of at least 15 (a comparison
    // of two runs may show any of them side by side; checked by the GUI tests).
    return {
        // Default step sizes: the presets' (Adam 1e-3 as the reference training, docs/methods.md).
        gradient("sgd", "backbone and last layer by SGD (lr)", 0x1f77b4, "sgd", 0.05),
        gradient("adam", "backbone and last layer by Adam (lr)", 0xff7f0e, "adam", 1e-3),
        gradient("ce", "cross-entropy classifier trained by the spec's optimizer", 0x9467bd, "",
                 /*lr=*/-1, /*cross_entropy=*/true),
        closed_form("cf-ridge", "last layer: ridge on the batch alone (β)", 0x2ca02c, {"beta"},
                    [](const MethodSpec& m, int64_t d, int64_t k) {
                        return std::make_unique<RidgeHead>(d, k, m.beta);
                    }),
        closed_form("cf-prox", "last layer: proximal solve toward the previous W (λ)", 0xd62728,
                    {"lambda"},
                    [](const MethodSpec& m, int64_t d, int64_t k) {
                        return std::make_unique<ProximalHead>(d, k, m.lambda);
                    }),
        closed_form("cf-full", "last layer: ridge on the whole training set every m steps (β)",
                    0x8c564b, {"beta", "refresh_every"},
                    [](const MethodSpec& m, int64_t d, int64_t k) {
                        return std::make_unique<FullDataHead>(d, k, m.beta, m.refresh_every);
                    }),
        [] {
            auto rls =
                closed_form("cf-rls", "last layer: recursive least squares (ρ, λ > 0)", 0xe377c2,
                            {"rho", "lambda"}, [](const MethodSpec& m, int64_t d, int64_t k) {
                                return std::make_unique<RlsHead>(d, k, m.rho, m.lambda);
                            });
            rls.positive = {"lambda"};
            return rls;
        }(),
        dfiv("dfiv", "two-stage IV regression, stage 1 re-fitted on all data at the end", 0x99aaff,
             /*refit=*/true, /*proximal=*/false),
        dfiv("dfiv-norefit", "two-stage IV regression without the final re-fit", 0x444455, false,
             false),
        dfiv("dfiv-prox", "two-stage IV regression with proximal stage solves (λ)", 0xff8888, false,
             true),
        published(noisy_init(positivity(
            "pgd", "θ trained directly, projected onto θ ≥ 0", 0x7f7f7f, PM::Projected,
            [](TensorShapeList shapes, TensorShapeList, int64_t, const PositivityOptions&) {
                return std::make_shared<PgdPositivity>(std::move(shapes));
            }))),
        published(noisy_init(positivity("softplus", "θ = softplus(θ̃), folded-normal init", 0xbcbd22,
                                        PM::Softplus, softplus_init(Init::FoldedNormal)))),
        positivity("softplus-const", "θ = softplus(θ̃), constant init θ̃ = −2", 0x886600,
                   PM::Softplus, softplus_init(Init::Constant)),
        wide(noisy_init(positivity("softplus-wide",
                                   "softplus on an ICNN as wide as the lifter's parameters",
                                   0x334400, PM::Softplus, softplus_init(Init::FoldedNormal)))),
        published(noisy_init(positivity("lifter", "every ICNN tensor emitted by a DeepSets lifter",
                                        0x17becf, PM::Lifted, lifter_with(same)))),
        positivity("lifter-noslack", "lifter without the slack bias b", 0x005555, PM::Lifted,
                   lifter_with([](auto o) { return o.slack(false); })),
        noisy_init(positivity("lifter-nobody", "lifter whose h is a learned constant", 0x771155,
                              PM::Lifted, lifter_with([](auto o) { return o.body(false); }))),
        noisy_init(positivity("lifter-decoupled", "lifter whose body reads an independent batch X′",
                              0x1100cc, PM::Lifted,
                              lifter_with([](auto o) { return o.decoupled(true); }))),
    };
}

std::vector<TaskKindInfo> builtin_task_kinds() {
    auto kind = [](std::string name, TaskFamily family, std::string doc) {
        TaskKindInfo t;
        t.name = std::move(name);
        t.family = family;
        t.doc = std::move(doc);
        return t;
    };
    auto teacher = kind("teacher-regression", TaskFamily::LastLayer, "a random MLP teacher");
    teacher.batch_within_n_train = true;
    auto csv = kind("csv-regression", TaskFamily::LastLayer, "regression on the user's CSV table");
    csv.check = [](const TaskSpec& t) {
        require_method_key(!t.csv_path.empty(), "task.csv_path", "is required for csv-regression");
    };
    auto burgers = kind("burgers", TaskFamily::LastLayer, "operator learning u0 ↦ u(·, T)");
    burgers.backbone = "fno1d";
    burgers.batch_within_n_train = true;
    burgers.grid_rows = true;
    auto fmnist = kind("fashion-mnist", TaskFamily::LastLayer, "Fashion-MNIST classification");
    fmnist.classification = true;
    auto cifar = kind("cifar-binary", TaskFamily::LastLayer, "CIFAR binary-record classification");
    cifar.classification = true;
    cifar.check = [](const TaskSpec& t) {
        require_method_key(!t.train_files.empty(), "task.train_files",
                           "is required for cifar-binary");
        require_method_key(!t.test_files.empty(), "task.test_files",
                           "is required for cifar-binary");
    };
    auto mixture = kind("class-mixture", TaskFamily::LastLayer,
                        "classification with output_dim classes of a warped Gaussian mixture");
    mixture.classification = true;
    mixture.backbone = "mlp";  // vectors, not images
    mixture.check = [](const TaskSpec& t) {
        require_method_key(t.output_dim >= 2, "task.output_dim",
                           "is the class count of class-mixture: at least 2");
        require_method_key(t.n_train > 0, "task.n_train", "must be positive for class-mixture");
        require_method_key(t.n_test > 0, "task.n_test", "must be positive for class-mixture");
        require_method_key(t.noise > 0, "task.noise",
                           "is the within-class sd of class-mixture: must be positive");
    };
    auto demand = kind("dfiv-demand", TaskFamily::InstrumentalVariable,
                       "instrumental-variable regression on the demand design");
    demand.batch_within_n_train = true;
    auto ebm1d = kind("icnn-ebm-1d", TaskFamily::Icnn, "1-D energy-based density estimation");
    ebm1d.targets = {"gumbel", "laplace", "gamma", "beta", "halfnormal", "skewnormal"};
    ebm1d.sampled_targets = ebm1d.targets;
    ebm1d.batch_within_n_train = true;
    auto ebmnd = kind("icnn-ebm-nd", TaskFamily::Icnn, "n-D energy-based density estimation");
    // Data targets: the autoencoder latents, the generated 21-D table, the user's CSV.
    ebmnd.targets = {"gaussian", "gumbel", "correlated", "fmnist-latents", "tabular21", "csv"};
    ebmnd.sampled_targets = {"gaussian", "gumbel", "correlated"};
    ebmnd.batch_within_n_train = true;
    ebmnd.check = [sampled = ebmnd.sampled_targets](const TaskSpec& t) {
        const bool known = std::find(sampled.begin(), sampled.end(), t.target) != sampled.end();
        if (known)
            require_method_key(t.dim <= 32, "task.dim",
                               "must lie in [1, 32] for the known n-D targets");
        if (t.target == "csv")
            require_method_key(!t.csv_path.empty(), "task.csv_path",
                               "is required for target csv (a table of numbers, one sample a row)");
    };
    auto toy = kind("cpflow-toy", TaskFamily::Icnn, "2-D convex-potential flow toys");
    // The FFJORD-recipe toys are generated data sets; the -demo ones (the reference sweep's
    // scaling, ebm/toy2d.h) are sampled afresh.
    toy.targets = {"8gaussians", "2spirals", "8gaussians-demo", "2spirals-demo"};
    toy.sampled_targets = {"8gaussians-demo", "2spirals-demo"};
    toy.batch_within_n_train = true;
    toy.published_cpflow = true;
    auto tabular = kind("cpflow-tabular", TaskFamily::Icnn,
                        "convex-potential flow on a table (csv_path, or the generated 21-D set)");
    return {teacher, csv, burgers, fmnist, cifar, mixture, demand, ebm1d, ebmnd, toy, tabular};
}

}  // namespace liftlab
