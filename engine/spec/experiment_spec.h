// The experiment spec: everything that determines a run, as plain values (METHODS.md Part 1).
// Parsed strictly from JSON: unknown keys and wrong types are SpecErrors naming the dotted key.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace liftlab {

struct TaskSpec {
    // "teacher-regression": a random MLP teacher; "csv-regression": the user's own table.
    std::string kind = "teacher-regression";
    // teacher-regression
    int input_dim = 16;
    int output_dim = 4;
    std::vector<int> teacher_hidden = {64, 64};
    double noise = 0.1;  // std of Gaussian noise added to the teacher's outputs
    int n_train = 4096;
    int n_test = 1024;
    // csv-regression
    std::string csv_path;
    std::vector<std::string> target_columns;  // empty: the last column is the target
    double test_fraction = 0.2;
    bool standardize = true;  // z-score inputs and targets with training-split statistics
    // Seed of the data (generation and train/test split); independent of the training seeds.
    std::uint64_t data_seed = 1234;
};

struct BackboneSpec {
    std::string kind = "mlp";
    std::vector<int> hidden = {128, 128};
    int feature_dim = 64;              // d: width of the features fed to the last layer
    std::string activation = "tanh";   // tanh | relu | gelu
};

struct OptimizerSpec {
    std::string kind = "adam";  // sgd | adam
    double lr = 1e-3;
    double momentum = 0.0;  // sgd only
};

// One method to compare. Hyper-parameters irrelevant to a method are ignored for it.
struct MethodSpec {
    std::string name;   // sgd | adam | cf-ridge | cf-prox
    std::string label;  // unique name in plots and files; defaults to `name`
    double lr = -1;     // sgd/adam: step size for θ and W; cf-*: overrides the backbone lr if > 0
    double beta = 1e-3;  // cf-ridge: ridge strength (on batch sums)
    double lambda = 1.0;  // cf-prox: proximal strength (on batch sums)
};

struct ExperimentSpec {
    std::string name = "experiment";
    std::string description;
    TaskSpec task;
    BackboneSpec backbone;
    OptimizerSpec optimizer;  // the backbone optimizer of the cf-* methods
    std::vector<MethodSpec> methods;
    int batch_size = 32;
    int steps = 2000;
    std::vector<std::uint64_t> seeds = {0};
    int log_every = 20;
    int threads = 2;  // LibTorch intra-op threads; results are deterministic for a fixed count
    // backbone-first (default): θ step at W_{t-1}, then W_t on φ_{θ_t}(X_B); w-first: the reverse.
    std::string step_order = "backbone-first";
    // Stop a method as diverged when its loss exceeds this multiple of its first logged loss.
    double divergence_factor = 1e6;
};

// Parses and validates. Throws SpecError naming the dotted key on any problem.
ExperimentSpec parse_spec(const nlohmann::json& j);
// The fully resolved spec (every default written out); parse_spec(to_json(s)) == s.
nlohmann::json to_json(const ExperimentSpec& spec);

// Applies `key=value` to a spec in JSON form before parsing. The key is a dotted path; inside
// `methods` a component may be an index or a method label (methods.cf-prox.lambda=10). The value
// is read as JSON when it parses as JSON, else as a string. Throws SpecError for a bad path.
void apply_override(nlohmann::json& spec, const std::string& assignment);

}  // namespace liftlab
