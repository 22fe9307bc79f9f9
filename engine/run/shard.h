// Sweeps over a cluster: `liftlab-cli run PRESET --shard K/N` runs the K-th of N deterministic
// slices of the (sweep value × seed) grid. Cells are dealt round-robin in grid order (cell
// c = value_index · seeds + seed_index goes to shard c mod N), so a slice mixes cheap and costly
// sweep values. merge_runs.h joins the shard folders again. Torch-free.
#pragma once
#include <string>

namespace liftlab {

struct Shard {
    int index = 0;  // K, 0-based: Slurm's SLURM_ARRAY_TASK_ID with --array=0-(N-1)
    int count = 1;  // N

    bool sharded() const { return count > 1; }
    bool owns(int cell) const { return cell % count == index; }
    std::string label() const { return std::to_string(index) + "/" + std::to_string(count); }
};

// "K/N" with 0 ≤ K < N. Throws std::invalid_argument with the expected form.
Shard parse_shard(const std::string& text);

}  // namespace liftlab
