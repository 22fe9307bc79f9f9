// Values the runner reports while it works. Plain structs (no tensors) so they can be copied
// across threads and into any front end. Metric names used by the regression task:
//   train_loss  mean squared error of the mini-batches since the last log point (θ-step batch)
//   test_loss   mean squared error on the test split (mean over samples and outputs)
//   time_s      wall-clock seconds this method has spent in its training steps
//   solve_fraction  cf-* only: share of step time spent in the closed-form solve
//   test_accuracy (classification), test_rel_l2 (operator learning: mean relative L2 error)
//   kappa, eff_rank  condition number and effective rank of the probe-set features
//   one_step_gain, one_step_kappa  closed-form vs best fixed gradient step on a batch
//   train_set_loss  the loss over the whole training set (diagnostics.train_set_loss)
// ICNN family (docs/methods.md §4, §5): test_loss = test NLL (nats per sample); tv (1-D
//   quadrature or Monte-Carlo), log_z; shoulder_occupancy, exits, exit_rate, median_dwell
//   (shoulder statistics); final only: sigma2_jac, p_value (permutation test), sigma2_jac_theta.
// With a sweep, the method label carries the swept value: "cf-prox@batch_size=8".
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "run/run_records.h"

namespace liftlab {

// Where one parallel worker is (runs of several seeds go on the available cores at once).
struct WorkerProgress {
    int seed_index = 0;
    std::uint64_t seed = 0;
    std::string sweep_label;
    int step = 0;  // steps done of total_steps
    int total_steps = 0;
};

struct ProgressUpdate {
    // "data" while the data set is prepared (only `fraction` is meaningful), then "train".
    std::string phase = "train";
    int step = 0;  // step within the current seed
    int total_steps = 0;
    std::uint64_t seed = 0;
    int seed_index = 0;
    int num_seeds = 1;
    std::string sweep_label;             // the current sweep value ("" without a sweep)
    double fraction = 0;                 // of the whole run, in [0, 1]
    std::vector<MetricPoint> points;     // new since the previous update
    std::vector<SpectrumPoint> spectra;  // new since the previous update
    std::vector<TracePoint> traces;      // new since the previous update
    std::vector<MethodStatus> statuses;  // changes since the previous update
    // Every seed in progress at the time of the update, one per worker (one entry when the seeds
    // run one after another). step/seed/seed_index above are the reporting worker's.
    std::vector<WorkerProgress> workers;
};

// Return false to cancel the run (it stops at the next step; the run folder stays readable).
using ProgressCallback = std::function<bool(const ProgressUpdate&)>;

}  // namespace liftlab
