// One unit of a run: every method of one (sub-)spec on one seed, step by step, on identical data
// and initialisation so the methods are comparable. It logs metrics and diagnostics at the spec's
// cadence, stops a diverging method (the others go on), records landscape checkpoints and hands
// everything to the RunReporter.
#pragma once
#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "data/dataset.h"
#include "spec/experiment_spec.h"
#include "training/run_reporter.h"
#include "training/run_types.h"
#include "training/trainer.h"

namespace liftlab {

class StateArchive;

// spectra.csv's label for the one spectrum of a fully frozen backbone's fixed features (shared by
// every method of the unit; a sweep suffix follows it).
inline const std::string kFrozenSpectrumLabel = "frozen-backbone";

// The fixed probe sets of the diagnostics: held-out samples for the spectrum, one training batch
// for the one-step analysis.
struct Probes {
    torch::Tensor spectrum_x;
    torch::Tensor batch_x, batch_y;
};
Probes make_probes(const ExperimentSpec& spec, const Dataset& data);

// Where one unit's runs stand in the run: the sub-spec's sweep suffix and value, the unit's
// number and its seed's index.
struct SeedUnit {
    std::string suffix;       // "@batch_size=8", "" without a sweep
    std::string sweep_value;  // JSON text of the value, "" without a sweep
    int unit = 0;
    int seed_index = 0;
    int num_seeds = 1;
    // > 1: the methods train on that many threads between two sync steps (one seed per run).
    int method_threads = 1;
};

class SeedRun {
public:
    SeedRun(const ExperimentSpec& spec, const SeedUnit& where, const Dataset& data,
            const Probes& probes, const RunOptions& options, RunReporter& reporter,
            std::atomic<bool>& cancelled);
    // Trains every method to the end (or a stop), then reports the unit as finished.
    void run();

private:
    // One method on this seed, with the capabilities its trainer has (null: none).
    struct Slot {
        std::unique_ptr<Trainer> trainer;
        FeatureProbe* probe = nullptr;
        LastLayerAccess* head = nullptr;
        DensityDiagnostics* density = nullptr;
        LiveSettings* live = nullptr;
        std::string label;  // the spec's method label (events name it), without a sweep suffix
        // Its live settings as the spec sets them (before any event).
        std::map<std::string, double> spec_settings;
        MethodRunSummary summary;
        bool active = true;
        double loss_sum = 0;  // batch losses since the last log point
        int loss_count = 0;
        double first_loss = -1;
        // Landscape trajectory (diagnostics.checkpoint_every): steps and one vector per space.
        std::vector<int64_t> checkpoint_steps;
        std::map<std::string, std::vector<torch::Tensor>> checkpoints;
        // Checkpoints already in its trajectory file; 0 = the file is (re)written whole next.
        size_t checkpoints_written = 0;
        size_t dwells_written = 0;  // dwell_times() already in dwells.csv
        // A fork started it from another method's state (ForkStart): its test metrics are logged
        // at the fork step, where the source's were.
        bool transferred = false;
    };
    // A method's training ended at a step: (status, reason).
    using Ending = std::optional<std::pair<RunStatus, std::string>>;

    void build_slots();
    void share_fixed_features();
    // resume/unit<k>.state (training/resume.h) through the ordered writes, after this log
    // point's rows: only the latest pending state is kept and written.
    // keep_for_fork: also states/unit<k>_step<s>.state, never overwritten (fork_state_every).
    void save_unit_state(int step, bool finished, const std::vector<MethodRunSummary>& runs = {},
                         bool keep_for_fork = false);
    // A saved state of this unit (run --resume) or, fork = true, of the parent's unit (its
    // methods found by label): `dir` holds its trajectories, `file` names it in errors.
    void restore(const StateArchive& a, int step, const std::string& dir, const std::string& file,
                 bool fork);
    // A fork: slot `s` starts from the parent's method `source` (another method of its family),
    // whose state is under `p` in `a` (ForkStart).
    void start_from_other(Slot& s, const MethodSpec& source, const StateArchive& a,
                          const std::string& p, int step, const std::string& file);
    // After a restore to `step`: the live settings the spec and the events before `step` give.
    void replay_settings(int step);
    // The events at `step` — the spec's, then `live` (sent into the running run,
    // training/live_events.h) — applied to the trainers (after that step, before the next) and
    // written to events.csv.
    void apply_events(int step, const std::vector<RunEvent>& live = {});
    bool has_event_at(int step) const;  // a spec event
    void finish_slot(Slot& s, RunStatus status, int step, const std::string& reason);
    Ending train_slot(Slot& s, int step);
    bool stop_requested() const;
    // The flag long phases poll inside a step or a log point (core/activity.h): the run's stop
    // flag, or null in a data-parallel run (its ranks stop together, between steps).
    const std::atomic<bool>* mid_phase_stop() const;
    // Trains steps first…last; false when the run was stopped.
    bool train_steps(int first, int last);
    bool train_chunk(int first, int last);
    std::vector<std::vector<size_t>> balance_methods() const;
    // `live_event_at`: whether a live event is scheduled at a step (null: none).
    int next_sync_step(int step, const std::function<bool(int)>& live_event_at = nullptr) const;
    // Log point, diagnostics and final metrics of `step`; false when the run is cancelled.
    bool observe(int step);
    void emit(Slot& s, int step, const std::string& metric, double value);
    bool log_metrics(Slot& s, int step);
    // spec log_initial: the untrained models' test metrics as step 0; transferred_only: those of
    // the methods a fork started from another method (Slot::transferred), at the fork step.
    // False when cancelled.
    bool log_initial_metrics(int step = 0, bool transferred_only = false);
    void log_diagnostics(Slot& s, int step, bool spectrum_now, bool gain_now);
    // The spectrum of fixed features (FeatureProbe::fixed_features), once per unit.
    void log_fixed_spectrum(int step);
    void log_final_diagnostics(int step);
    void persist_slot(Slot& s);
    void export_slot(Slot& s);
    void finish();
    void record_checkpoint(Slot& s, int step);
    // The dwells completed since the last call (they go to dwells.csv, in unit order).
    std::vector<int64_t> take_new_dwells(Slot& s);

    const ExperimentSpec& spec_;
    SeedUnit where_;
    std::uint64_t seed_;
    const Dataset& data_;
    const Probes& probes_;
    const RunOptions& options_;
    RunReporter& reporter_;
    std::atomic<bool>& cancelled_;
    std::vector<Slot> slots_;
    ProgressUpdate update_;
    // Why this unit's state is not saved ("" when it is): a method without a resumable trainer.
    std::string resume_blocker_;
    struct PendingState {
        std::mutex mutex;
        int seq = 0;
        std::shared_ptr<StateArchive> archive;
    };
    std::shared_ptr<PendingState> pending_state_ = std::make_shared<PendingState>();
    std::chrono::steady_clock::time_point last_state_save_;  // spec.save_state_seconds apart
    bool fixed_spectrum_logged_ = false;  // log_fixed_spectrum has run (or ran before a resume)
    int groups_ = 1;                      // method threads actually used
    int caller_threads_ = 1;              // the caller's intra-op threads, restored at the end
};

}  // namespace liftlab
