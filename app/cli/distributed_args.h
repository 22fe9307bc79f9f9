// liftlab-cli's scale-out options (docs/scale-out.md): where this process sits in a
// data-parallel job, which slice of a sweep it runs, and the merge subcommand.
#pragma once
#include <string>
#include <vector>

#include "distributed/launch_config.h"

namespace liftlab::cli {

struct DistributedArgs {
    int rank = -1;               // --rank; -1: from the environment
    int world_size = 0;          // --world-size; 0: from the environment
    std::string master;          // --master HOST[:PORT]; empty: from the environment
    double timeout_seconds = 0;  // --dist-timeout; 0: the default
    std::string shard;           // --shard K/N; empty: the whole grid
};

// Explicit options win over torchrun's and Slurm's variables; --rank and --world-size come
// together. Throws std::invalid_argument naming the option or variable.
LaunchConfig resolve_launch(const DistributedArgs& args);

// liftlab-cli merge DIR… [--out DIR]: prints the merged run folder.
int command_merge(const std::vector<std::string>& dirs, const std::string& out_parent);

}  // namespace liftlab::cli
