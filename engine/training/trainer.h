// What the runner steps: one method on one seed. MethodTrainer covers backbone + last layer
// (regression, operator learning, classification); DfivTrainer the two-stage IV regression.
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

    // Data-parallel training (DESIGN.md "Scale"): from now on each step uses this rank's share
    // of every global batch and all-reduces what the update needs. False when the trainer does
    // not support it (the runner then refuses the run).
    virtual bool attach_communicator(std::shared_ptr<Communicator> comm) { return false; }

    // Diagnostics of the last layer; trainers without one return undefined tensors.
    virtual torch::Tensor flat_features(const torch::Tensor& x) { return {}; }  // N × d
    virtual torch::Tensor last_layer() const { return {}; }  // (d+1) × k, float64
    virtual double regulariser() const { return 0.0; }
    // Named feature matrices (N × d) whose spectra, κ and effective rank are logged
    // (diagnostics.spectrum_every) on the probe rows x. The default is the last layer's input,
    // unnamed; trainers with several feature nets (DFIV) name each one. Empty: no spectrum.
    struct NamedFeatures {
        std::string name;  // "" for the last layer's features
        torch::Tensor features;
    };
    virtual std::vector<NamedFeatures> probe_features(const torch::Tensor& x) {
        if (!last_layer().defined()) return {};
        return {{"", flat_features(x)}};
    }

    // ICNN family. Metrics computed once at the end of a run (σ²_Jac and its p-value, shoulder
    // dwell statistics); empty for the other trainers.
    virtual std::map<std::string, double> final_diagnostics() { return {}; }
    // Coordinate traces recorded since the last call: (step, coordinate, value).
    struct TraceSample {
        int step = 0;
        int coordinate = 0;
        double value = 0;
    };
    virtual std::vector<TraceSample> drain_traces() { return {}; }
    // Completed readout-shoulder dwell lengths in steps (ShoulderTracker::completed_dwells), for
    // dwell-time histograms; empty when the trainer tracks none.
    virtual std::vector<int64_t> dwell_times() const { return {}; }
    // Flat float32 parameter vectors for landscapes, by space ("theta", "lifted"); empty when
    // the trainer has none.
    virtual std::map<std::string, torch::Tensor> checkpoint() { return {}; }
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
