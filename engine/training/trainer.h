// What the runner steps: one method on one seed. MethodTrainer covers backbone + last layer
// (regression, operator learning, classification); DfivTrainer the two-stage IV regression;
// IcnnTrainer and PublishedCpFlowTrainer the ICNN family.
#pragma once
#include <torch/torch.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace liftlab {

struct ExperimentSpec;
struct MethodSpec;
struct Dataset;
class Communicator;

// What every trainer does. The rest are capabilities a trainer may add (below), which the
// runner asks for with dynamic_cast: a trainer implements only what it has.
class Trainer {
public:
    virtual ~Trainer() = default;
    // One optimisation step; returns the training loss of that step.
    virtual double step() = 0;
    // Test metrics; always has "test_loss".
    virtual std::map<std::string, double> evaluate_test() = 0;
    // The loss over the whole training set (diagnostics.train_set_loss).
    virtual double train_set_loss() = 0;
    virtual bool parameters_finite() = 0;
    virtual bool closed_form() const = 0;
    virtual double step_seconds() const = 0;
    virtual double solve_seconds() const = 0;
};

// Named feature matrices (N × d) whose spectra, κ and effective rank are logged
// (diagnostics.spectrum_every) on the probe rows x: the last layer's input, unnamed, or — for
// trainers with several feature nets (DFIV) — each one by name.
class FeatureProbe {
public:
    virtual ~FeatureProbe() = default;
    struct NamedFeatures {
        std::string name;  // "" for the last layer's features
        torch::Tensor features;
    };
    virtual std::vector<NamedFeatures> probe_features(const torch::Tensor& x) = 0;
    // The features never change (a fully frozen backbone): their spectrum is logged once.
    virtual bool fixed_features() const { return false; }
};

// A linear last layer on features (the one-step gain diagnostic).
class LastLayerAccess {
public:
    virtual ~LastLayerAccess() = default;
    virtual torch::Tensor flat_features(const torch::Tensor& x) = 0;  // N × d, no grad
    virtual torch::Tensor last_layer() const = 0;                     // (d+1) × k, float64
    // The ridge/proximal strength of its closed form (0 for gradient heads).
    virtual double regulariser() const = 0;
};

// The ICNN family's diagnostics (docs/methods.md §4).
class DensityDiagnostics {
public:
    virtual ~DensityDiagnostics() = default;
    // Metrics computed once at the end of a run (σ²_Jac and its p-value, shoulder dwell
    // statistics).
    virtual std::map<std::string, double> final_diagnostics() = 0;
    // Coordinate traces recorded since the last call: (step, coordinate, value).
    struct TraceSample {
        int step = 0;
        int coordinate = 0;
        double value = 0;
    };
    virtual std::vector<TraceSample> drain_traces() = 0;
    // Completed readout-shoulder dwell lengths in steps (ShoulderTracker::completed_dwells), for
    // dwell-time histograms.
    virtual std::vector<int64_t> dwell_times() const = 0;
    // Flat float32 parameter vectors for landscapes, by space ("theta", "lifted"); empty when
    // there are none.
    virtual std::map<std::string, torch::Tensor> checkpoint() = 0;
};

// Everything that decides a trainer's next steps — parameters, optimizer moments, sampler
// positions, random engines, carried closed-form statistics, diagnostics so far — saved at a log
// point and restored into a freshly built trainer of the same spec and seed, so that
// `liftlab-cli run --resume` continues a killed run to the numbers an uninterrupted run gives.
class StateArchive;
class Resumable {
public:
    virtual ~Resumable() = default;
    // Why this trainer cannot be resumed ("" when it can).
    virtual std::string resume_blocker() const { return ""; }
    virtual void save_state(StateArchive& a, const std::string& prefix) = 0;
    virtual void load_state(const StateArchive& a, const std::string& prefix) = 0;
};

// A fork to another method of the same family (issue 40, docs/cli.md "Forks"): a freshly built
// trainer starts from `source`'s iterate — another method of its family on the same seed, restored
// to the fork step — so that its model computes what the source's computed there (the closed-form
// family: the backbone and, between heads of the same loss, W; the ICNN family: the same θ at the
// reference set, docs/methods.md §4.5). Throws std::invalid_argument naming what cannot be carried.
class ForkStart {
public:
    virtual ~ForkStart() = default;
    virtual void start_from_method(Trainer& source) = 0;
};

// Settings a running trainer can change between two steps (issue 40: `--event`, events.csv):
// its optimizer's step size "lr" and its closed form's "beta", "lambda" or "rho" — the keys of
// live_setting_keys() (spec/experiment_spec.h) for its method.
class LiveSettings {
public:
    virtual ~LiveSettings() = default;
    // Every live setting with its value now.
    virtual std::map<std::string, double> live_settings() const = 0;
    // From the next step on; throws std::invalid_argument for a key it does not have.
    virtual void set_live_setting(const std::string& key, double value) = 0;
};

// The push into the readout shoulder (issue 40: `--event STEP:push.LAYERS=FRACTION`): a seeded
// fraction of the constrained coordinates of the chosen layers ("readout": the last constrained
// tensor, "hidden": the others, "all"), the same coordinates for every strategy of a seed, is set
// into the shoulder (PositivityStrategy::push). Returns the fraction of those layers' coordinates
// in the shoulder (at the reference iterate) before and after.
class ShoulderPush {
public:
    virtual ~ShoulderPush() = default;
    virtual std::pair<double, double> push_into_shoulder(const std::string& layers, double fraction,
                                                         double depth, std::uint64_t seed) = 0;
};

// The trained model as a TorchScript file a PyTorch user loads with torch.jit.load
// (export/model_export.h). False when this trainer's model has no export.
class ModelExport {
public:
    virtual ~ModelExport() = default;
    virtual bool export_model(const std::string& path) = 0;
};

// Data-parallel training (DESIGN.md "Scale"): from now on each step uses this rank's share of
// every global batch and all-reduces what the update needs. A trainer without it runs in one
// process only (the runner refuses a data-parallel run of it).
class DataParallel {
public:
    virtual ~DataParallel() = default;
    virtual bool attach_communicator(std::shared_ptr<Communicator> comm) = 0;
};

// Picks the trainer for the spec's task and method. All trainers of one seed see the same data
// order and the same initialisation, so methods are comparable.
std::unique_ptr<Trainer> make_trainer(const ExperimentSpec& spec, const MethodSpec& method,
                                      const Dataset& data, std::uint64_t seed);

// Trainers seed LibTorch's global generator and draw their initial weights from it. Whoever builds
// trainers while other threads may do the same (parallel seeds, a landscape beside a run) holds
// this lock, so every initialisation is the one a single-threaded program gets.
std::mutex& trainer_construction_mutex();

}  // namespace liftlab
