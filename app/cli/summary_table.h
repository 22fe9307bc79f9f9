// The final-metric table of a run (summary.json): one row per method (and sweep value), mean ± sd
// over the seeds that finished (cancelled and diverged seeds are counted, not averaged), written as
// Markdown and CSV. For cf-batch-sweep this is the batch-size table.
#pragma once
#include <string>
#include <vector>

namespace liftlab::cli {

struct SummaryTable {
    std::vector<std::string> metrics;  // columns, in a fixed order of relevance
    struct Row {
        std::string method;           // label without the sweep suffix
        std::string sweep_value;      // "" without a sweep
        int seeds = 0, diverged = 0;  // diverged counts failed seeds too
        int cancelled = 0;            // stopped early (cancelled, or still running)
        // Per metric, over the seeds that finished (status ok) only; NaN where none has it.
        std::vector<double> mean, sd;
    };
    std::string sweep_key;
    std::vector<Row> rows;
    // summary.json's warnings, each "<method> (seed <k>): <warning>", in run order.
    std::vector<std::string> warnings;
};

// Throws DataError when summary.json is missing or malformed.
SummaryTable read_summary_table(const std::string& run_dir);
std::string to_markdown(const SummaryTable& t);
std::string to_csv(const SummaryTable& t);

}  // namespace liftlab::cli
