// The rows a run reports and the run folder stores (metrics.csv, spectra.csv, traces.csv,
// events.csv and the per-method statuses of summary.json): plain structs, no tensors, so they can
// be copied across threads and into any front end. The runner's progress (training/progress.h)
// carries them; the run store (run/run_store.h) writes them. The metric names are listed in
// training/progress.h.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "run/run_folder_schema.h"

namespace liftlab {

struct MetricPoint {
    int step = 0;
    std::string method;  // the method's label
    std::uint64_t seed = 0;
    std::string metric;
    double value = 0;
};

// Singular values of the probe-set features of one method at one step.
struct SpectrumPoint {
    int step = 0;
    std::string method;
    std::uint64_t seed = 0;
    std::vector<double> singular_values;  // descending
};

// One sample of a traced coordinate (ICNN family: θ̃ coordinates for the escape dynamics).
struct TracePoint {
    int step = 0;
    std::string method;
    std::uint64_t seed = 0;
    int coordinate = 0;
    double value = 0;
};

// One live-setting change as applied (events.csv): after step `step`, the method's `key` went
// from old_value to new_value.
struct EventRow {
    int step = 0;
    std::string method;
    std::uint64_t seed = 0;
    std::string key;
    double old_value = 0, new_value = 0;
};

struct MethodStatus {
    std::string method;
    std::uint64_t seed = 0;
    RunStatus status = RunStatus::Running;
    int step = 0;        // step at which the status was reached
    std::string reason;  // human-readable detail for diverged/failed
};

}  // namespace liftlab
