// Loss landscapes of a finished ICNN run (docs/methods.md §7): the test NLL on a
// plane through the final checkpoint of one method, in θ-space (the effective ICNN weights: the
// constrained θ, then the free tensors — emitted by the lifter, the ICNN's own otherwise — then
// any model parameter outside the ICNN) or in the lifted space (every trainable parameter: the
// lifter's body, readouts and slack; θ̃ and the free tensors for softplus, θ itself for pgd), with
// the checkpoint trajectories projected onto that plane: every method of the same θ dimension in
// θ-space, the centre method alone in its own lifted space.
//
// Reads the run folder the runner wrote: spec.json (rebuilds the data and the model) and
// trajectories/<label>_seed<k>.pt (diagnostics.checkpoint_every > 0). The grid is computed in
// batches of cells with progress and cancel (compute_landscape) and cached as JSON in
// <run>/landscapes/, keyed by centre, directions, range, grid and evaluation set, so re-opening is
// instant and a changed checkpoint or grid is recomputed.
//
// θ-space cells: a θ with negative entries (the plane leaves the constraint set) is clamped to
// θ ≥ 0 before evaluation, so every cell is a convex model; the lifted space needs no clamp (its
// readout is non-negative by construction). That asymmetry is the point of the comparison.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "diagnostics/landscape_types.h"

namespace liftlab {

struct RunLandscapeOptions {
    std::string space = "theta";     // "theta" | "lifted"
    std::string directions = "pca";  // "random" | "pca" | "delta-pca"
    std::string method;              // label whose final checkpoint is the centre; "" = first
    int64_t seed = -1;               // run seed; -1 = the spec's first seed
    int grid = 0;                    // cells per side; 0 = 41 (θ-space) or 25 (lifted space)
    uint64_t direction_seed = 0;     // "random" directions
    int64_t eval_samples = 4096;     // test rows the loss is averaged over (the first ones)
    int cells_per_batch = 16;
    // Cells of a batch are split across this many workers, each with its own copy of the model
    // and single-threaded, so the grid is the same for any worker count; 0 = one per core.
    int workers = 0;
    double margin = 0.25;  // range_covering margin around the trajectories
    bool use_cache = true;
    bool cache_only = false;  // never compute: a cache miss returns an empty grid (n_alpha = 0)
};

struct RunLandscape {
    LandscapeGrid grid;
    std::string space, kind, method, cache_path;
    uint64_t seed = 0;
    PlaneTrajectories trajectories;  // label → (α, β) per checkpoint
    std::map<std::string, std::vector<int64_t>> trajectory_steps;
    // Largest relative residual ‖r − c − αd1 − βd2‖/‖r − c‖ of a projected checkpoint, per label:
    // how far the trajectory is from the plane (0 when it lies in it).
    std::map<std::string, double> max_residual;
    // Trajectory files that ended in a cut record (a run killed while appending, or one still
    // training), label → file: their complete checkpoints are drawn, the cut one left out.
    std::map<std::string, std::string> cut_trajectories;
    double center_loss = 0;  // the loss at α = β = 0 (the centre method's final test NLL)
    bool from_cache = false;
    double seconds = 0;  // compute time (0 from the cache)
    int64_t parameters = 0;
};

// Throws std::invalid_argument for a bad option (space, directions, grid < 2, unknown method or
// seed), DataError for a folder that is
// not an ICNN run with trajectories, LandscapeCancelled when `progress` returns false (no cache
// file is written then).
RunLandscape run_landscape(const std::string& run_dir, const RunLandscapeOptions& options,
                           const LandscapeProgress& progress = {});

// The trajectory labels of `seed` present in <run>/trajectories (spec order).
std::vector<std::string> trajectory_labels(const std::string& run_dir, uint64_t seed);

}  // namespace liftlab
