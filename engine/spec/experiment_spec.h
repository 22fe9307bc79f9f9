// The experiment spec: everything that determines a run, as plain values (docs/methods.md).
// Parsed strictly from JSON: unknown keys and wrong types are SpecErrors naming the dotted key.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "methods/method_registry.h"

namespace liftlab {

// Written into every resolved spec.json as "schema_version". 1: folders written before the key
// existed (read as such); 2: adds the key. Bump it when a key changes meaning or name, and teach
// parse_spec to read the old form.
constexpr int kSpecSchemaVersion = 2;

// The largest `threads` a spec may ask for: the machine's hardware threads (at least 2).
int max_threads();

struct TaskSpec {
    // teacher-regression: a random MLP teacher; csv-regression: the user's own table;
    // burgers: operator learning u0 ↦ u(·, T); fashion-mnist / cifar-binary: classification;
    // dfiv-demand: instrumental-variable regression on the demand design; class-mixture:
    // output_dim classes of a warped Gaussian mixture in input_dim dimensions (within-class sd
    // noise, warp width teacher_hidden[0]; data/class_mixture.h).
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
    // burgers (docs/methods.md §8.3)
    int resolution = 1024;  // s: grid points the model sees
    int fine_grid = 8192;   // grid of the pseudo-spectral solver
    double viscosity = 0.1;
    double final_time = 1.0;
    std::string cache_dir;  // generated data cache; empty: $XDG_CACHE_HOME/liftlab or ~/.cache
    // fashion-mnist (n_train / n_test cap the sizes; 0 = all) and cifar-binary
    std::string data_dir = "/usr/share/datasets/fashion-mnist";
    std::vector<std::string> train_files, test_files;  // cifar-binary record files
    int label_bytes = 1;                               // 1: CIFAR-10, 2: CIFAR-100 (coarse, fine)
    int label_index = 0;                               // which label byte is the class
    // dfiv-demand (docs/methods.md §8.4): n = n_train
    double rho = 0.5;  // confounding strength ρ of e = ρV + N(0, 1 − ρ²)
    // ICNN family (docs/methods.md §8.6–§8.8). icnn-ebm-1d: gumbel | laplace | gamma | beta |
    // halfnormal | skewnormal;
    // icnn-ebm-nd: gaussian | gumbel | correlated (sampled), fmnist-latents | tabular21 | csv
    // (data sets; csv reads csv_path like cpflow-tabular); cpflow-toy: 8gaussians | 2spirals
    // (the FFJORD recipe) | 8gaussians-demo | 2spirals-demo (the reference sweep's scaling,
    // ebm/toy2d.h);
    // cpflow-tabular: csv_path (every column a coordinate) or, when empty, the generated 21-D
    // set. `--set target=…` is short for task.target.
    std::string target = "gumbel";
    int dim = 2;  // icnn-ebm-nd: dimension (fmnist-latents: the autoencoder's latent size)
    int latent_steps = 2000;  // fmnist-latents: autoencoder training steps
    // Draw every training batch (and σ²_Jac probe batch) fresh from the target, as the reference
    // does, instead of from the n_train split. Only for targets that can be sampled (icnn-ebm-1d,
    // icnn-ebm-nd's sampled ones, cpflow-toy's -demo ones), where it is the default.
    bool fresh_samples = false;
    // With fresh_samples: every training seed draws its own n_test test samples from the target
    // (shared by the methods of that seed), as the reference's 2-D CP-Flow sweep draws 1024 per
    // seed; false: one test split from data_seed for every seed.
    bool test_per_seed = false;
    // Seed of the data (generation and train/test split); independent of the training seeds.
    std::uint64_t data_seed = 1234;
    // Which split is scored (the metrics named test_*): "test", or "validation" — the last
    // round(validation_fraction · n) rows of the training split, held out of training (the test
    // split is then never read). For choosing settings without looking at the test split
    // (liftlab-cli claims, the tuned comparisons). Not for dfiv-demand (its test metric is the
    // structural function on a grid) nor with test_per_seed.
    std::string split = "test";
    double validation_fraction = 0.2;
};

struct BackboneSpec {
    std::string kind = "mlp";  // mlp | fno1d | cnn | torchscript
    std::vector<int> hidden = {128, 128};
    int feature_dim = 64;             // d: width of the features fed to the last layer
    std::string activation = "tanh";  // tanh | relu | gelu
    // fno1d: lift to `width`, `layers` Fourier layers keeping `modes`, projection width =
    // feature_dim
    int modes = 16;
    int width = 64;
    int layers = 4;
    // cnn: channels of the conv blocks (5x5 conv, ReLU, 2x2 max-pool), then a dense feature layer
    std::vector<int> channels = {16, 32};
    // torchscript: the user's TorchScript module (nn/torchscript_backbone.h); init "file" starts
    // every seed from the file's own weights, "reset" re-draws them from the seed. sha256: the
    // file's, written into the resolved spec; when given, the file must still have it.
    std::string script;
    std::string init = "file";
    std::string script_sha256;
    // Parameters kept fixed (nn/backbone_freeze.h), for every backbone kind: the spec key
    // backbone.freeze is false (none but those a TorchScript file itself marks
    // requires_grad=False), true (every one: a linear probe on fixed features), a list of dotted
    // parameter names, or a regular expression matched against whole names. At most one of
    // freeze_all, freeze_names and freeze_regex is set.
    bool freeze_all = false;
    std::vector<std::string> freeze_names;
    std::string freeze_regex;
};

// The input-convex network of the ICNN family and its loss (docs/methods.md §3, §5).
struct IcnnSpec {
    int width = 128;
    int layers = 3;
    double grad_clip = 1.0;     // global gradient-norm clip (0: off)
    int reference_size = 1024;  // training samples the lifter's body reads at evaluation
    // What the lifter's body reads when a split is scored: "reference" (the reference_size
    // training samples) or "scored" (the scored split itself, e.g. the 1024 test points, as the
    // reference's 2-D CP-Flow sweep emits its test weights).
    std::string eval_conditioning = "reference";
    // c in the built-in ICNN's (c/2)||x||² (its strong convexity floor).
    double strong_convexity = 0.02;
    // The lifter family's per-sample MLP widths (a ReLU after each; the last is the code width
    // d_h) and whether the pooled code is standardised (pool_norm).
    std::vector<int> lifter_body = {64, 64, 96};
    bool lifter_pool_norm = true;
    // cpflow-toy / cpflow-tabular (liftlab): the learned softplus(w1), softplus(w0) around the
    // ICNN, F = softplus(w1)·ICNN + softplus(w0)·||x||²/2; false: F = ICNN (needs
    // strong_convexity > 0).
    bool flow_scales = true;
    int quadrature_points = 8000;  // icnn-ebm-1d: reported log Z and TV (trapezoid, target range)
    // icnn-ebm-1d: Gauss–Legendre nodes (panels of 8) for the training log Z; 0: the trapezoid
    // grid of quadrature_points
    int train_quadrature_points = 512;
    int is_samples = 4096;        // icnn-ebm-nd: proposal samples for log Z per training step
    int eval_is_samples = 65536;  // icnn-ebm-nd: proposal samples for log Z at evaluation
    // icnn-ebm-nd: flow (affine-coupling flow fitted to the training data, cached) | gaussian |
    // student-t (moment-matched)
    std::string proposal = "student-t";
    double proposal_dof = 5.0;
    // Widening of the proposal: covariance factor (gaussian, student-t), base variance τ² (flow)
    double proposal_inflate = 1.5;
    int flow_layers = 8;        // flow proposal: coupling layers
    int flow_hidden = 128;      // flow proposal: width of each coupling MLP
    int flow_fit_steps = 3000;  // flow proposal: Adam steps of the maximum-likelihood fit
    // flow proposal: Adam steps per training step that refine the flow toward the current EBM
    // (reverse KL, density_models.cpp) — the flow the training draws come from: the data fit, or
    // with proposal_adapt_train the adapted flow (tracking the EBM between refits); 0: none
    int flow_refine_steps = 0;
    double flow_refine_lr = 1e-4;
    // flow proposal, adapted to the EBM (density_models.cpp, engine/ebm/flow_proposal.h): at every
    // evaluation a copy of the flow (warm-started from the previous evaluation's, the first from
    // the data fit) is fitted to the current exp(−E) by at most proposal_adapt_steps Adam steps of
    // reverse KL (batch proposal_adapt_batch, lr proposal_adapt_lr), stopping once the ESS fraction
    // of 4096 probe draws reaches proposal_adapt_target_ess; log Z is then estimated from the
    // defensive mixture (1 − w) flow(N(0, I)) + w flow(N(0, proposal_defensive_inflate · I)),
    // w = proposal_defensive_weight. 0 steps: off (evaluation draws from the data fit as before).
    int proposal_adapt_steps = 0;
    int proposal_adapt_batch = 256;
    double proposal_adapt_lr = 1e-3;
    double proposal_adapt_target_ess = 0.5;
    double proposal_defensive_weight = 0.1;
    double proposal_defensive_inflate = 4.0;
    // Also draw the training-step importance samples from the adapted mixture instead of the data
    // fit. It is fitted before the first step, refitted at every evaluation, and refitted (at most
    // proposal_adapt_steps / 10 steps) whenever a step's draws have an ESS fraction below
    // proposal_adapt_target_ess / 5.
    bool proposal_adapt_train = false;
    // cpflow-toy: liftlab (our ICNN and CpFlow, engine/flows/cp_flow.h) | cpflow-published (the
    // published toy recipe: ActNorm + one convex block of the input-augmented ICNN, width =
    // hidden units, layers = depth; engine/flows/published_cp_flow.h)
    std::string architecture = "liftlab";
    // cpflow-published: convex blocks, each an ICNN of `layers` depth and `width` hidden units,
    // with ActNorms between them (1: CP-Flow's toy recipe A; 5: the appendix table's recipe B)
    int blocks = 1;
    // cpflow-published lifter: the reference's readout_fanin_scale, W̃ = (Θ_E h)/d_h + b with
    // Θ_E ~ N(0, 1) (its CP-Flow figures' lifter); false: W̃ = Θ_E h + b, PyTorch's Linear init
    bool readout_fanin_scale = false;
    // A user's TorchScript ICNN in place of the built-in one (icnn-ebm-1d / -nd;
    // icnn/script_icnn.h): forward(x) → E(x) for x of n × d. Its non-negative parameters are named
    // by `constrained` (dotted names) or matched by `constrained_regex` (std::regex, whole name);
    // width and layers are then the file's. init "file": pgd and softplus start from the file's
    // constrained values and every strategy but the lifter family trains the file's other tensors
    // from their values; "reset": the built-in ICNN's init (folded normal / Xavier / zero biases)
    // from the seed. The lifter family emits every tensor, so only the file's shapes matter to it.
    std::string script;
    std::vector<std::string> constrained;
    std::string constrained_regex;
    std::string init = "file";
    std::string script_sha256;  // as backbone.script_sha256
};

struct OptimizerSpec {
    std::string kind = "adam";  // sgd | adam
    double lr = 1e-3;
    double momentum = 0.0;  // sgd only
    // Step decay lr · gamma^⌊step / lr_step_every⌋ (0: constant). Only the cpflow-published
    // trainer reads it; the spec rejects it elsewhere.
    int lr_step_every = 0;
    double lr_step_gamma = 0.5;
};

// Runs the whole comparison once per value of one spec key (e.g. batch_size or backbone.hidden).
struct SweepSpec {
    std::string key;  // dotted path as in apply_override; empty: no sweep
    std::vector<nlohmann::json> values;
};

struct DiagnosticsSpec {
    int spectrum_every = 0;       // singular values of probe features every N steps (0: off)
    int probe_size = 1024;        // held-out samples in the probe set
    int one_step_every = 0;       // one-step gain (closed form vs best fixed gradient step) every N
    bool train_set_loss = false;  // also evaluate the loss on the whole training set at log points
    // ICNN family (docs/methods.md §4, §7).
    int shoulder_every = 0;     // observe the shoulder (occupancy, exits, dwell) every N steps
    int trace_coordinates = 0;  // θ̃ coordinates traced (at shoulder observations; traces.csv)
    int jacobian_batches = 0;   // B probe batches for σ²_Jac at the end (0: off)
    int permutations = 200;     // shuffles of the σ²_Jac permutation test
    int checkpoint_every = 0;   // trajectory checkpoints for landscapes (0: off)
};

// A change of one method's live setting during a run (issue 40; `--event STEP:LABEL.KEY=VALUE`):
// applied once step `step` is trained and logged, so steps step+1… use `value` (step 0: from the
// first step). Every unit (sweep value × seed) applies it to its method `method` (a label); each
// application is a row of events.csv. Keys: live_setting_keys().
struct RunEvent {
    int step = 0;
    std::string method;
    std::string key;
    double value = 0;
    // method "push" (ICNN runs): key readout | hidden | all, value the fraction of those layers'
    // constrained coordinates set into the shoulder at θ̃ = depth (σ(depth) < 0.05; pgd: θ = 0).
    double depth = -4.0;
    bool operator==(const RunEvent& o) const {
        return step == o.step && method == o.method && key == o.key && value == o.value &&
               depth == o.depth;
    }
};

struct ExperimentSpec {
    std::string name = "experiment";
    std::string description;
    TaskSpec task;
    BackboneSpec backbone;
    OptimizerSpec optimizer;  // the backbone optimizer of the cf-* methods, the ICNN optimizer
    IcnnSpec icnn;
    std::vector<MethodSpec> methods;
    int batch_size = 32;
    int steps = 2000;
    std::vector<std::uint64_t> seeds = {0};
    int log_every = 20;
    // Also log the test metrics of the untrained models at step 0, so that every curve starts
    // at its beginning (the window sets it; a method that cannot be evaluated before its first
    // step has no step-0 point).
    bool log_initial = false;
    int threads = 2;  // LibTorch intra-op threads; results are deterministic for a fixed count
    // Compute device (core/device.h): cpu, cuda or auto (cuda when available). The ICNN family
    // runs on cpu only.
    std::string device = "cpu";
    // backbone-first (default): θ step at W_{t-1}, then W_t on φ_{θ_t}(X_B); w-first: the reverse.
    std::string step_order = "backbone-first";
    // Stop a method as diverged when its loss exceeds this multiple of its first logged loss.
    double divergence_factor = 1e6;
    // Write each method's trained model as TorchScript (models/<label>_seed<k>.pt) and the test
    // split (models/test_data.pt, when at most 16 MB) where the model has an export.
    bool export_models = true;
    // Save every unit's state at each log point (resume/unit<k>.state), so that
    // `liftlab-cli run --resume DIR` can continue the run after a kill (training/resume.h).
    bool save_state = true;
    // At most one saved state per unit every this many seconds of training (a state holds every
    // parameter and optimizer moment: saving one at each log point cost 30 % of a lifter run);
    // 0: at every log point. A resume repeats at most this much training.
    double save_state_seconds = 30.0;
    // Forking (issue 40, `liftlab-cli run --fork`): every unit also keeps its state at every k-th
    // log point (states/unit<u>_step<s>.state, never overwritten), the steps a child run can
    // start from; 0: none kept. Needs save_state.
    int fork_state_every = 0;
    // Live-setting changes, in the order given (RunEvent).
    std::vector<RunEvent> events;
    // A forked run: its parent run folder (absolute) and the parent's saved step it starts from
    // (step fork_step + 1 is its first); "" for a run from scratch.
    std::string parent;
    int fork_step = 0;
    // A fork's method whose label the parent did not run starts from the parent's method of
    // this label (same family; `--fork-from-method`); "" when the parent ran one method (that
    // one) or every child label is the parent's. Recorded as resolved.
    std::string fork_source;
    // A user's TorchScript file (backbone.script, icnn.script) is loaded, checked and run on its
    // probe batch in a child process (training/model_probe.h) that is stopped after this many
    // seconds and may use at most probe_memory_gib GiB of address space (0: half the machine's
    // memory).
    double probe_timeout_seconds = 60.0;
    double probe_memory_gib = 0.0;
    SweepSpec sweep;
    DiagnosticsSpec diagnostics;
};

// The sub-specs of a sweep: (suffix for labels, spec with the value applied). Without a sweep,
// one element with an empty suffix.
std::vector<std::pair<std::string, ExperimentSpec>> expand_sweep(const ExperimentSpec& spec);

// Whether backbone.freeze names any parameter (true, a list or a regular expression).
bool freezes_backbone(const BackboneSpec& backbone);
// True for the ICNN family's task kinds (icnn-ebm-1d, icnn-ebm-nd, cpflow-toy, cpflow-tabular).
bool is_icnn_task(const std::string& kind);
bool is_positivity_method(const std::string& name);
// Whether `task`'s target is one the engine can draw fresh samples from (its task kind's
// sampled_targets; false: a data set).
bool samples_its_target(const TaskSpec& task);

// Parses and validates. Throws SpecError naming the dotted key on any problem.
ExperimentSpec parse_spec(const nlohmann::json& j);
// The resolved spec.json of a run folder, possibly written by an earlier version: without
// "schema_version" (version 1), keys this build does not know are dropped (listed in `dropped`)
// instead of being errors; a folder from a newer version is a SpecError on "schema_version".
ExperimentSpec parse_recorded_spec(nlohmann::json j, std::vector<std::string>* dropped = nullptr);
// The fully resolved spec (every default written out); parse_spec(to_json(s)) == s.
nlohmann::json to_json(const ExperimentSpec& spec);

// The settings of `method` that an event may change mid-run: "lr" (its optimizer's step size:
// gradient, closed-form and ICNN methods), "beta" (cf-ridge, cf-full), "lambda" (cf-prox),
// "rho" (cf-rls). Empty for the DFIV methods and the published CP-Flow.
std::vector<std::string> live_setting_keys(const ExperimentSpec& spec, const MethodSpec& method);
// `STEP:LABEL.KEY=VALUE` (--event; the key after the last '.' of LABEL.KEY), numbers by C rules.
// Throws SpecError (key "--event") naming what is wrong; the label and key are checked by
// parse_spec.
RunEvent parse_event_text(const std::string& text);
nlohmann::json to_json(const RunEvent& e);

// Applies `key=value` to a spec in JSON form before parsing. The key is a dotted path; inside
// `methods` a component may be an index or a method label (methods.cf-prox.lambda=10). The value
// is read as JSON when it parses as JSON, else as a string. Throws SpecError for a bad path.
void apply_override(nlohmann::json& spec, const std::string& assignment);

// `--methods adam,cf-prox`: the spec's methods narrowed to `names` (comma-separated), in that
// order. A name that is the label or name of methods of the spec picks them with their settings;
// any other registered method comes with the registry's defaults. Throws std::invalid_argument
// ("--methods: …") for an unknown or repeated name (listing the valid ones) or an empty list.
void select_methods(nlohmann::json& spec, const std::string& names);

}  // namespace liftlab
