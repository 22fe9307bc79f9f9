// The subcommands of liftlab-cli (DESIGN.md "Command line"). Each returns the process exit code.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "distributed_args.h"

namespace liftlab::cli {

struct RunArgs {
    std::string source;  // PRESET or SPEC.json
    std::string out_dir = "runs";
    std::string methods;            // "adam,cf-prox": only these methods (select_methods)
    std::vector<std::string> sets;  // key=value overrides, applied in order
    // STEP:LABEL.KEY=VALUE live-setting changes (parse_event_text), after the spec's own events.
    std::vector<std::string> events;
    // --fork RUN_DIR --from-step N: a child of that run from its kept state at or before N
    // (the parent's spec.json with the overrides above in place of PRESET|SPEC.json).
    std::string fork_dir;
    int from_step = -1;
    // --fork-from-method LABEL: spec key fork_source (the parent's method a new one starts from).
    std::string fork_source;
    int seeds = 0;  // > 0: seeds = 0..N-1
    int steps = 0;  // > 0: overrides steps
    // Top-level numeric spec keys set by options (--probe-timeout, --probe-memory), after --set.
    std::vector<std::pair<std::string, double>> numbers;
    std::string figure_format = "png";
    DistributedArgs distributed;  // data-parallel rank and sweep shard
    // Continue this killed run folder (training/resume.h) instead of starting one.
    std::string resume_dir;
};

int command_list();
int command_run(const RunArgs& args);
int command_report(const std::string& run_dir, const std::string& format);

}  // namespace liftlab::cli
