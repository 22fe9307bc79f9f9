#include "distributed_args.h"

#include <cstdio>
#include <stdexcept>

#include "run/merge_runs.h"
#include "spec/experiment_spec.h"

namespace liftlab::cli {

LaunchConfig resolve_launch(const DistributedArgs& args) {
    const bool explicit_rank = args.rank >= 0 || args.world_size > 0;
    if (explicit_rank && (args.rank < 0 || args.world_size <= 0))
        throw std::invalid_argument("--rank and --world-size go together");
    LaunchConfig c;
    if (explicit_rank) {
        c.rank = args.rank;
        c.world_size = args.world_size;
        c.source = "command line";
        if (c.rank >= c.world_size)
            throw std::invalid_argument("--rank " + std::to_string(c.rank) +
                                        " is not below --world-size " +
                                        std::to_string(c.world_size));
    } else if (auto env = launch_config_from_environment()) {
        c = *env;
    }
    if (!args.master.empty()) parse_master_address(args.master, c);
    if (args.timeout_seconds > 0) c.timeout_seconds = args.timeout_seconds;
    return c;
}

int command_merge(const std::vector<std::string>& dirs, const std::string& out_parent) {
    try {
        // Shards are compared as the spec reader resolves them (a sweep may change binaries
        // between shards: keys added since, at their defaults, do not make them differ).
        const std::string dir = merge_shard_runs(dirs, out_parent, [](const nlohmann::json& spec) {
            return liftlab::to_json(liftlab::parse_recorded_spec(spec));
        });
        std::fprintf(stderr, "liftlab-cli: merged %zu shard(s)\n", dirs.size());
        std::printf("%s\n", dir.c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "liftlab-cli: %s\n", e.what());
        return 2;
    }
    return 0;
}

}  // namespace liftlab::cli
