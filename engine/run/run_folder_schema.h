// The run folder's schema (DESIGN.md "Run store"), in one place: its file names, the columns of
// its CSV files and the statuses summary.json records, as a typed enum with its spelling.
// The writer (run/run_store, training/runner), the CLI report, the GUI feed and the run history
// all read these names. Header-only and dependency-free (no torch, no Qt, no JSON library), so
// the widgets' history browser includes it too (CMake target liftlab_run_schema).
#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace liftlab {

namespace run_folder {

// Files (and folders) of a run folder.
inline constexpr const char* kSpec = "spec.json";        // the resolved spec, with versions
inline constexpr const char* kSummary = "summary.json";  // statuses and final metrics
inline constexpr const char* kMetrics = "metrics.csv";   // long format, appended per log point
inline constexpr const char* kSpectra = "spectra.csv";   // singular values of the features
inline constexpr const char* kTraces = "traces.csv";     // θ̃ coordinate traces (ICNN family)
inline constexpr const char* kDwells = "dwells.csv";     // readout-shoulder dwells (ICNN family)
inline constexpr const char* kEvents = "events.csv";     // live-setting changes (--event)
inline constexpr const char* kTrajectories = "trajectories";  // <label>_seed<k>.pt checkpoints
inline constexpr const char* kFigures = "figures";            // the report's figures
inline constexpr const char* kModels =
    "models";  // <label>_seed<k>.pt: trained models (TorchScript)
inline constexpr const char* kTestData = "models/test_data.pt";  // the test split (x, y, labels)
inline constexpr const char* kResume = "resume";      // unit<k>.state: what run --resume continues
inline constexpr const char* kForkStates = "states";  // unit<k>_step<s>.state: fork points
inline constexpr const char* kResumeLock = "resume/lock";  // held while a process writes the run

// The header line of each CSV file (without its newline).
inline constexpr const char* kMetricsColumns = "step,method,seed,metric,value";
inline constexpr const char* kSpectraColumns = "step,method,seed,index,sigma";
inline constexpr const char* kTracesColumns = "step,method,seed,coordinate,value";
inline constexpr const char* kDwellsColumns = "method,seed,dwell";
// One row per (event, unit) applied: after step `step`, method's `key` went from old to new.
inline constexpr const char* kEventsColumns = "step,method,seed,key,old,new";

}  // namespace run_folder

// The status of a run (summary.json "status") and of each (method, seed) run in it.
enum class RunStatus {
    Running,    // still going (or its process was killed: see the history's "stalled")
    Ok,         // finished every step
    Diverged,   // stopped on a non-finite or exploding loss; for a run: every method did
    Failed,     // an error ended it (the summary's "reason" says which)
    Cancelled,  // stopped by the user
};

// The spelling in summary.json: "running", "ok", "diverged", "failed", "cancelled".
constexpr const char* to_string(RunStatus s) {
    switch (s) {
        case RunStatus::Running:
            return "running";
        case RunStatus::Ok:
            return "ok";
        case RunStatus::Diverged:
            return "diverged";
        case RunStatus::Failed:
            return "failed";
        case RunStatus::Cancelled:
            return "cancelled";
    }
    return "failed";
}

// The status spelled `text`; nothing for any other text (a folder of another tool, or damage).
inline std::optional<RunStatus> parse_run_status(std::string_view text) {
    for (const auto s : {RunStatus::Running, RunStatus::Ok, RunStatus::Diverged, RunStatus::Failed,
                         RunStatus::Cancelled})
        if (text == to_string(s)) return s;
    return std::nullopt;
}

// A run that stopped early: a method's curve gets a note ("diverged at step 12").
constexpr bool stopped_early(RunStatus s) {
    return s == RunStatus::Diverged || s == RunStatus::Failed;
}

// Comparisons with the spelling, for tests and logs ("ok" == status).
inline bool operator==(RunStatus s, std::string_view text) {
    return text == to_string(s);
}
inline bool operator!=(RunStatus s, std::string_view text) {
    return !(s == text);
}
inline bool operator==(std::string_view text, RunStatus s) {
    return s == text;
}
inline bool operator!=(std::string_view text, RunStatus s) {
    return !(s == text);
}
inline std::ostream& operator<<(std::ostream& out, RunStatus s) {
    return out << to_string(s);
}

}  // namespace liftlab
