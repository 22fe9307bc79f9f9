// The values a run takes and gives: its options and its result (per method and seed).
// Torch-free: front ends include it without LibTorch headers.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "run/run_folder_schema.h"
#include "run/shard.h"

namespace liftlab {

class Communicator;

struct RunOptions {
    std::string out_dir;                      // parent of the run folder; empty: nothing is written
    const std::atomic<bool>* stop = nullptr;  // checked every step; true cancels
    // Called on the running thread before every training step (after the stop check); it may
    // block, which is how a front end pauses a run. `stop` is checked again when it returns.
    std::function<void()> before_step;
    // Data-parallel (distributed/launch_config.h): every rank calls run_experiment with the same
    // spec; each step uses the rank's share of the global batch. Rank 0 alone writes the run
    // folder. Null: one process.
    std::shared_ptr<Communicator> communicator;
    // Only this slice of the (sweep value × seed) grid (run/shard.h).
    Shard shard;
    // Continue the killed run in plan->dir instead of creating a folder (training/resume.h).
    std::shared_ptr<const struct ResumePlan> resume;
    // A forked run (spec.parent): the parent's states it starts from (training/resume.h). Set by
    // run_experiment from the spec when null.
    std::shared_ptr<const struct ForkPlan> fork;
    // Settings changed and pushes sent while the run trains (a front end submits them;
    // training/live_events.h): applied at a step every unit can still take, recorded in spec.json
    // ("live_events") and events.csv. Null: the spec's events only.
    std::shared_ptr<class LiveEvents> live_events;
};

struct MethodRunSummary {
    std::string method;       // label (with the sweep suffix when sweeping)
    std::string name;         // the method (its registry name)
    std::string sweep_value;  // JSON text of the swept value ("" without a sweep)
    std::uint64_t seed = 0;
    int batch_size = 0;
    RunStatus status = RunStatus::Running;  // then ok | diverged | failed | cancelled
    int steps_done = 0;
    std::string reason;
    // The trained model as TorchScript, relative to the run folder (models/<label>_seed<k>.pt);
    // empty when the method's model has no export or export_models is off.
    std::string model;
    std::string model_error;  // why the export failed (the run's numbers stand)
    std::map<std::string, double> final_metrics;
};

struct RunResult {
    RunStatus status = RunStatus::Ok;  // ok | cancelled | diverged (every method diverged/failed)
    std::string run_dir;               // empty when out_dir was empty
    std::vector<MethodRunSummary> runs;
};

// Warnings about final metrics that cannot be trusted as reported (summary.json "warnings" of a
// run): an importance-sampling ESS fraction below 1 % (log_z and test_loss unreliable), an ICNN
// that the chord check finds not convex (the fraction of chords and the largest gap).
std::vector<std::string> final_metric_warnings(const std::map<std::string, double>& final_metrics);

}  // namespace liftlab
