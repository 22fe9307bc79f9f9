// One reader (and, for the CSV files, one row writer) per file of a run folder (DESIGN.md "Run
// store"): spec.json, summary.json, metrics.csv, spectra.csv, traces.csv, dwells.csv and
// events.csv. The run store writes the rows with the format_* functions; the window, the widgets'
// run history, the CLI's report, summary and merge, the claims and resume read with the read_*
// ones. Torch-free and Qt-free (CMake target liftlab_run_schema, which the widgets link too); JSON
// through nlohmann only, CSV through run/csv_rows.h, numbers through core/c_numbers.h.
//
// Hostile input: every read is bounded (regular file, size limit, JSON nesting limit) and every
// error is a DataError naming the file and, for a CSV row or a JSON syntax error, the line.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/errors.h"
#include "run/csv_rows.h"
#include "run/run_folder_schema.h"
#include "run/run_records.h"

namespace liftlab {

// ---- CSV files ------------------------------------------------------------------------------
// Each read_*_csv throws DataError when the file is missing, not a regular file or too large.
// A row whose step or seed is not an integer is a DataError thrown in any case (the row cannot be
// placed: the file is not one LiftLab wrote). Any other malformed row — a wrong header, another
// number of cells, a value that is not a number — is thrown when `issues` is null, otherwise
// recorded there (naming file and line) and left out. The last line without its newline (a row
// cut by a killed writer) is not read.

// metrics.csv: step,method,seed,metric,value.
using MetricRow = MetricPoint;
std::string format_metrics_rows(const std::vector<MetricPoint>& points);
std::vector<MetricRow> read_metrics_csv(const std::string& path,
                                        std::vector<DataError>* issues = nullptr);

// spectra.csv: step,method,seed,index,sigma — one row per singular value.
struct SpectrumRow {
    int step = 0;
    std::string method;
    std::uint64_t seed = 0;
    int index = 0;
    double sigma = 0;
};
std::string format_spectra_rows(const std::vector<SpectrumPoint>& spectra);
std::vector<SpectrumRow> read_spectra_csv(const std::string& path,
                                          std::vector<DataError>* issues = nullptr);

// traces.csv: step,method,seed,coordinate,value.
std::string format_traces_rows(const std::vector<TracePoint>& traces);
std::vector<TracePoint> read_traces_csv(const std::string& path,
                                        std::vector<DataError>* issues = nullptr);

// dwells.csv: method,seed,dwell — a completed readout-shoulder dwell, in steps (≥ 0).
struct DwellRow {
    std::string method;
    std::uint64_t seed = 0;
    std::int64_t dwell = 0;
};
std::string format_dwells_rows(const std::string& method, std::uint64_t seed,
                               const std::vector<std::int64_t>& dwells);
std::vector<DwellRow> read_dwells_csv(const std::string& path,
                                      std::vector<DataError>* issues = nullptr);

// events.csv: step,method,seed,key,old,new.
std::string format_events_rows(const std::vector<EventRow>& events);
std::vector<EventRow> read_events_csv(const std::string& path,
                                      std::vector<DataError>* issues = nullptr);

// ---- JSON files -----------------------------------------------------------------------------

// A JSON file of the run folder that must hold an object: bounded (core/bounded_input.h).
// Throws DataError when it is missing, not a regular file, too large, nested too deep, not JSON
// ("invalid JSON", with its line) or not an object ("not a JSON object").
nlohmann::json read_json_object(const std::string& path);

// spec.json: the resolved spec as recorded, and the fields the readers of a run folder need,
// each type-checked (a field of another type reads as absent: a hand-edited or damaged spec.json
// never throws past read_spec_json). The engine's own spec parser (spec/) reads `json` to re-run.
struct SpecRecord {
    struct Method {
        std::string name;   // registered method name ("" when absent)
        std::string label;  // "label", else the name
    };
    nlohmann::json json;                       // the file as written (an object)
    std::string name;                          // "name" ("" when absent)
    std::optional<long long> schema_version;   // "schema_version" when an integer
    bool schema_version_bad = false;           // present but not an integer
    std::string task_kind;                     // "task"."kind"
    std::string task_target;                   // "task"."target"
    std::optional<long long> task_resolution;  // "task"."resolution"
    long long output_dim = 0;                  // "data"."output_dim"
    long long batch_size = 0;                  // "batch_size"
    long long steps = 0;                       // "steps"
    std::size_t seed_count = 0;                // entries of "seeds" (1 for a single number)
    std::vector<std::uint64_t> seeds;          // its non-negative integer entries, in order
    std::vector<Method> methods;  // "methods" entries (an object, or a bare name), in order
    std::string sweep_key;        // "sweep"."key" ("" without a sweep)
    nlohmann::json sweep_values = nlohmann::json::array();  // "sweep"."values" (an array)
    std::string model_file;  // backbone.script (kind torchscript), else icnn.script, else ""
    std::optional<long long> shard_index, shard_count;  // "shard" of `run --shard K/N`
};
SpecRecord read_spec_json(const std::string& path);
SpecRecord spec_record_of(nlohmann::json spec);  // `spec` an object; never throws

// summary.json: the run's status and one entry per (method, seed[, sweep value]) run.
struct RunRecord {
    nlohmann::json json;  // the entry as written (not necessarily an object)
    std::string method;   // "method" ("" when absent)
    std::string name;     // "name" (older summaries), "" when absent
    std::optional<std::uint64_t> seed;
    std::string status;  // as written ("" when absent)
    std::optional<RunStatus> run_status() const { return parse_run_status(status); }
    long long step = 0;
    std::string reason;
    std::map<std::string, double>
        final;                          // "final": its numeric entries (null = non-finite: absent)
    bool has_final = false;             // "final" is an object
    std::vector<std::string> warnings;  // "warnings": its strings
    std::optional<nlohmann::json> sweep_value;   // "sweep_value" when present
    std::optional<double> sweep_number() const;  // the sweep value when it is a number
};
struct SummaryRecord {
    nlohmann::json json;  // the file as written (an object)
    std::string status;   // "status" as written ("" when absent)
    std::optional<RunStatus> run_status() const { return parse_run_status(status); }
    bool has_runs = false;   // "runs" is present
    bool runs_list = false;  // … and a list
    std::vector<RunRecord> runs;
};
SummaryRecord read_summary_json(const std::string& path);
SummaryRecord summary_record_of(nlohmann::json summary);  // never throws

}  // namespace liftlab
