// Runs an experiment spec synchronously and deterministically (given seeds and thread count).
// Torch-free interface: front ends include this without LibTorch headers.
#pragma once
#include "spec/experiment_spec.h"
#include "training/progress.h"
#include "training/run_types.h"

namespace liftlab {

// Loads the data, writes the run folder (options.out_dir) and trains every method of every
// (sweep value, seed) unit (training/seed_run.h), reporting through `on_progress`. A run folder
// that exists when something throws is closed as `failed` with the reason, then it rethrows.
RunResult run_experiment(const ExperimentSpec& spec, const RunOptions& options,
                         const ProgressCallback& on_progress = {});

}  // namespace liftlab
