// A claim's verdict from its runs' final metrics (summary.json) and curves (metrics.csv): the
// statistic with its spread, the test with its p-value and interval, the verdict at kAlpha and,
// when the test cannot decide, the seeds it would need. Torch-free and Qt-free.
#pragma once
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "claims/claim_registry.h"

namespace liftlab::claims {

// One run folder's final metrics, read from its summary.json.
struct RunTable {
    struct Row {
        std::string label;  // with the sweep suffix ("cf-prox@batch_size=4")
        std::string base;   // without it ("cf-prox")
        std::string at;     // the sweep value as label text ("4"), "" without a sweep
        std::uint64_t seed = 0;
        std::string status;
        std::map<std::string, double> final;  // null (non-finite) metrics are absent
        std::string dir;                      // the run folder it was read from
    };
    std::string dir;
    std::string preset;     // spec.json "name"
    std::string blas_core;  // spec.json versions.blas_core ("" when not recorded)
    std::vector<Row> rows;

    // seed → value of `metric` for method `base` at sweep value `at`, over rows that ended "ok"
    // with a finite value.
    std::map<std::uint64_t, double> values(const std::string& metric, const std::string& base,
                                           const std::string& at) const;
    // The label of `base` at `at` (for its curves), "" when absent.
    std::string label_of(const std::string& base, const std::string& at) const;
    // Every row's status for `base` at `at`: counts by status.
    std::map<std::string, int> statuses(const std::string& base, const std::string& at) const;
};
// Throws DataError when the folder has no readable summary.json.
RunTable read_run_table(const std::string& run_dir);
// Several folders' rows as one table (each method's rows from the first folder that has it).
RunTable merge_tables(const std::vector<RunTable>& tables);

struct Verdict {
    std::string verdict = "inconclusive";  // holds | refuted | inconclusive
    std::string ours;                      // the statistic with its spread
    std::string seeds;                     // seeds per compared method
    std::string test;                      // the test, its alternative and level
    double p = std::numeric_limits<double>::quiet_NaN();
    std::string interval;            // confidence interval, or "" when none
    std::string needed;              // inconclusive: the seeds a decision would need
    std::string time_to_target;      // the comparison's curves: steps (s) to a common target
    std::vector<std::string> notes;  // anything the reader must know (failed runs, …)
};

// The verdict of `claim` from `table` (its metrics.csv read for time to target when `curves`).
Verdict evaluate_claim(const Claim& claim, const RunTable& table, bool curves = true);

// Time to target: for each compared method, the mean over seeds of the first logged step (and
// its time_s) at which `metric` reaches `target` (≤ when lower is better); seeds that never reach
// it are counted apart. Read from <dir>/metrics.csv.
struct TimeToTarget {
    double mean_steps = std::numeric_limits<double>::quiet_NaN();
    double mean_seconds = std::numeric_limits<double>::quiet_NaN();
    int reached = 0, seeds = 0;
};
TimeToTarget time_to_target(const std::string& run_dir, const std::string& label,
                            const std::string& metric, double target, bool lower_is_better);

}  // namespace liftlab::claims
