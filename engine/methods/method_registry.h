// The registry of methods and task kinds: one entry per member — its name, family, the
// hyper-parameters it reads (with their defaults), a documentation line, its plot colour and
// its factory. The spec parser, the trainer factory, the CLI `list`, the GUI form and the plot
// colours read it; nothing else compares method or task names. The entries themselves are
// registered in builtins/builtin_methods.cpp, one line each (like PlotJuggler's
// registerTransform<T>() calls in its main.cpp).
// Torch-free: front ends include it without LibTorch headers.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace liftlab {

class LastLayer;
class PositivityStrategy;
struct TaskSpec;

// One method to compare. Hyper-parameters irrelevant to a method are ignored for it (its
// registry entry lists those it reads).
struct MethodSpec {
    std::string name;    // a registered method (method_registry())
    std::string label;   // unique name in plots and files; defaults to `name`
    double lr = -1;      // sgd/adam: step size for θ and W; cf-*: overrides the backbone lr if > 0
    double beta = 1e-3;  // cf-ridge: ridge strength (on batch sums)
    double lambda = 1.0;    // cf-prox: proximal strength; cf-rls: initial precision (batch sums)
    double rho = 1.0;       // cf-rls: forgetting factor in (0, 1]
    int refresh_every = 1;  // cf-full: re-solve W*(θ) on the whole training set every m steps
    // dfiv*: stage ridge strengths as a multiple of the samples in each solve (λ = scale · n)
    double lambda_scale = 0.1;
    // ICNN strategies: σ of a per-element N(0, σ²) perturbation of the strategy's own
    // pre-positivity parameter at initialisation (0: none). lifter: the constrained readouts'
    // biases (the slack b) are drawn N(0, σ²) in place of −2; softplus: θ̃ += N(0, σ²) on the
    // folded-normal draw; pgd: θ += N(0, σ²), then projected onto θ ≥ 0. Every strategy of a seed
    // draws the same values (the reference's symmetric initialisation).
    double init_noise = 0.0;
};

// A hyper-parameter of MethodSpec, declared once: parse_spec, to_json, the validation and the GUI
// form read this table. Its default is the MethodSpec member's initialiser.
struct MethodParameter {
    const char* key;
    double MethodSpec::*real = nullptr;  // exactly one of `real` and `integer` is set
    int MethodSpec::*integer = nullptr;
    const char* doc;
    bool (*valid)(double) = nullptr;  // the range every method's value must lie in (null: any)
    const char* rule = "";            // the message when it does not ("must be positive")

    double get(const MethodSpec& m) const { return real ? m.*real : m.*integer; }
    void set(MethodSpec& m, double v) const {
        if (real)
            m.*real = v;
        else
            m.*integer = static_cast<int>(v);
    }
    double default_value() const { return get(MethodSpec{}); }
};
const std::vector<MethodParameter>& method_parameters();
const MethodParameter* find_method_parameter(const std::string& key);

enum class MethodFamily {
    Gradient,    // backbone and last layer trained by the optimizer (sgd, adam, ce)
    ClosedForm,  // backbone trained by the optimizer, last layer solved in closed form (cf-*)
    Dfiv,        // two-stage instrumental-variable regression (task dfiv-demand)
    Positivity,  // a positivity strategy of the ICNN family
};
const char* to_string(MethodFamily family);

// How a positivity strategy keeps the ICNN's constrained weights non-negative.
enum class PositivityMap {
    None,       // not a positivity strategy
    Projected,  // θ trained directly and projected onto θ ≥ 0 (pgd)
    Softplus,   // θ = softplus(θ̃), θ̃ trained directly
    Lifted,     // θ = softplus(b + Θ_E h_φ(X)): the lifter family
};

using TensorShapeList = std::vector<std::vector<int64_t>>;

// Spec-level settings of the positivity strategies (from IcnnSpec): read by the lifter family.
struct PositivityOptions {
    // Widths of the lifter's per-sample MLP (a ReLU after every Linear); the last is the width of
    // the pooled code h_φ(X) the readouts read.
    std::vector<int64_t> lifter_body = {64, 64, 96};
    // Standardise the pooled code across its entries, (h − mean)/(std + 1e−5) (the reference's
    // pool_norm; its CP-Flow sweep leaves it off).
    bool lifter_pool_norm = true;
};
using HeadFactory = std::function<std::unique_ptr<LastLayer>(const MethodSpec&, int64_t feature_dim,
                                                             int64_t outputs)>;
using PositivityFactory = std::function<std::shared_ptr<PositivityStrategy>(
    TensorShapeList shapes, TensorShapeList free_shapes, int64_t input_dim,
    const PositivityOptions& options)>;

struct MethodInfo {
    std::string name;
    MethodFamily family = MethodFamily::Gradient;
    std::string doc;                      // one line, for `liftlab-cli list` and tooltips
    std::vector<std::string> parameters;  // keys of method_parameters() this method reads
    // The method's own defaults of some of those keys, over MethodSpec's initialisers (adam's
    // and sgd's step sizes): what a method named without its settings takes.
    std::vector<std::pair<std::string, double>> defaults;
    std::uint32_t colour = 0;  // 0xRRGGBB: the method's colour in every plot
    // Gradient and closed-form methods.
    std::string optimizer;       // the method's own optimizer kind (sgd, adam); "": the spec's
    bool cross_entropy = false;  // trained on cross-entropy: needs a classification task
    HeadFactory make_head;
    // Keys of method_parameters() that must be positive for this method.
    std::vector<std::string> positive;
    // Dfiv methods.
    bool dfiv_refit = false;     // re-estimate stage 1 on all data at the end
    bool dfiv_proximal = false;  // proximal stage solves
    // Positivity strategies.
    PositivityMap positivity = PositivityMap::None;
    bool wide = false;              // trained on an ICNN widened to the lifter's parameter count
    bool published_cpflow = false;  // offered by icnn.architecture cpflow-published too
    PositivityFactory make_positivity;
};

// Every registered method, in registration order.
const std::vector<MethodInfo>& method_registry();
// The entry called `name`, or null.
const MethodInfo* find_method(const std::string& name);
// The entry called `name`; throws std::invalid_argument naming the registered methods.
const MethodInfo& method_info(const std::string& name);
// A method's default of the parameter `p`: its registry entry's own, else MethodSpec's.
double method_default(const MethodInfo& info, const MethodParameter& p);
// The method `name` with its registry defaults (its label is its name).
MethodSpec default_method(const std::string& name);
// The names of the registered methods (of one family).
std::vector<std::string> method_names();
std::vector<std::string> method_names(MethodFamily family);
// The optimizer kinds a spec may name (optimizer.kind): those the gradient methods bring.
std::vector<std::string> optimizer_kinds();

enum class TaskFamily {
    LastLayer,             // backbone + last layer: gradient and closed-form methods
    InstrumentalVariable,  // dfiv methods
    Icnn,                  // positivity strategies
};
const char* to_string(TaskFamily family);
// Whether the methods of `method` may run on tasks of `task`.
bool takes_methods(TaskFamily task, MethodFamily method);

struct TaskKindInfo {
    std::string name;
    TaskFamily family = TaskFamily::LastLayer;
    std::string doc;
    // Classification: ce allowed (and, for images, cnn and n_train 0 = all).
    bool classification = false;
    std::string backbone;  // the backbone it needs ("": mlp, or cnn when classification)
    bool batch_within_n_train = false;  // batch_size may not exceed task.n_train
    // Operator learning: each of a sample's task.resolution grid points is a row of the last
    // layer (metrics per row, not per sample).
    bool grid_rows = false;
    bool published_cpflow = false;     // icnn.architecture cpflow-published allowed
    std::vector<std::string> targets;  // valid task.target values ("" none: target unchecked)
    // Targets that can be sampled afresh (task.fresh_samples, default on for them).
    std::vector<std::string> sampled_targets;
    // Further checks of the task section; throws SpecError naming the key (null: none).
    std::function<void(const TaskSpec&)> check;
};

const std::vector<TaskKindInfo>& task_kind_registry();
const TaskKindInfo* find_task_kind(const std::string& name);
// The entry called `name`; throws std::invalid_argument naming the registered kinds.
const TaskKindInfo& task_kind_info(const std::string& name);
std::vector<std::string> task_kind_names();

// The head of a gradient or closed-form method (its entry's make_head).
std::unique_ptr<LastLayer> make_head(const MethodSpec& method, int64_t feature_dim,
                                     int64_t outputs);
// The positivity strategies' names, in registration order.
const std::vector<std::string>& positivity_strategy_names();
// The first registered (not widened) strategy of `map`: the reference lifter for Lifted, direct
// softplus for Softplus, pgd for Projected. Throws std::logic_error when there is none.
const std::string& positivity_name(PositivityMap map);
// Builds the strategy called `name` for constrained tensors of `shapes` and unconstrained ICNN
// tensors of `free_shapes` (emitted by the lifter family, ignored by the others); `input_dim` is
// the width d of a conditioning sample. Throws std::invalid_argument naming the valid strategies.
std::shared_ptr<PositivityStrategy> make_positivity(const std::string& name, TensorShapeList shapes,
                                                    TensorShapeList free_shapes, int64_t input_dim,
                                                    const PositivityOptions& options = {});

// The built-in entries (builtins/builtin_methods.cpp): the registry holds these.
std::vector<MethodInfo> builtin_methods();
std::vector<TaskKindInfo> builtin_task_kinds();

}  // namespace liftlab
