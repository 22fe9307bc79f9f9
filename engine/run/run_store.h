// The run folder (DESIGN.md "Run store"): spec.json, metrics.csv, summary.json, figures.
// JSON files are replaced atomically (temp file + rename); metrics.csv is appended and flushed
// at every log point, so a killed process leaves a log that is readable up to its last full row.
#pragma once
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run/run_files.h"
#include "run/run_folder_schema.h"
#include "run/run_records.h"

namespace liftlab {

// Writes `content` to `path` through a temporary file in the same folder, fsync and a rename
// (then fsync of the folder). Throws WriteError on any failure; `path` is then unchanged.
// durable = false skips the fsyncs: still all-or-nothing when the process dies (the rename is
// atomic), not across a power loss — for the run's resume state, rewritten at every log point.
void write_file_atomic(const std::string& path, const std::string& content, bool durable = true);
// Appends `content` to `path` (created if missing) and closes it: no fsync, as metrics.csv. A
// process killed during the write may leave a cut tail, which the file's reader must allow.
// Throws WriteError.
void append_file(const std::string& path, const std::string& content);

class RunStore {
public:
    // Creates a fresh folder `<parent>/<name>-YYYYmmdd-HHMMSS[-N]` (and `parent` if needed).
    static RunStore create(const std::string& parent, const std::string& name);
    // The same folder, first made hidden (`.<name>-….partial-<pid>`) so that a process killed while
    // it writes spec.json and summary.json leaves no half-made run folder: publish() then gives it
    // its name (atomically, never over an existing folder).
    static RunStore create_staged(const std::string& parent, const std::string& name);
    void publish();
    // Opens an existing folder to append metrics (used by tests and tools).
    explicit RunStore(std::string dir);
    ~RunStore();
    RunStore(RunStore&& other) noexcept;
    RunStore& operator=(RunStore&&) = delete;
    RunStore(const RunStore&) = delete;

    const std::string& dir() const { return dir_; }
    std::string path(const std::string& file) const { return dir_ + "/" + file; }

    // Every write, flush and close below is checked: a failure throws WriteError naming the file.
    void write_json(const std::string& file, const nlohmann::json& j) const;
    void append_metrics(const std::vector<MetricPoint>& points);  // appends rows, then flushes
    // spectra.csv (step,method,seed,index,sigma), created on first use.
    void append_spectra(const std::vector<SpectrumPoint>& spectra);
    // traces.csv (step,method,seed,coordinate,value), created on first use.
    void append_traces(const std::vector<TracePoint>& traces);
    // dwells.csv (method,seed,dwell): completed readout-shoulder dwells in steps, created on first
    // use.
    void append_dwells(const std::string& method, uint64_t seed,
                       const std::vector<int64_t>& dwells);

    // events.csv (step,method,seed,key,old,new): live-setting changes as applied, created on
    // first use.
    using EventRow = liftlab::EventRow;  // run/run_records.h
    void append_events(const std::vector<EventRow>& events);

    // Flushes, fsyncs and closes the CSV files; throws WriteError if any of that fails.
    void close();

    // The byte sizes of the shared CSV files (metrics, spectra, traces, dwells, events; 0 for one
    // not yet written), every row so far flushed: what a resume truncates them back to.
    std::vector<std::uint64_t> shared_sizes() const;
    // The same, of the shared files in another folder (0 for one missing).
    static std::vector<std::uint64_t> shared_sizes_in(const std::string& dir);
    static const std::vector<const char*>& shared_files();
    // Appends the rows of the shared files in `held_dir` (the same files of a unit that wrote
    // aside while an earlier unit ran, training/run_reporter.h) after this folder's, file by file,
    // their headers dropped; a file missing there adds nothing.
    void append_rows_of(const std::string& held_dir);

    // spec_file_sha256 of the folder's spec.json (read once), or "" when it cannot be read: each
    // resume state records it, and --resume refuses a spec.json edited since.
    std::string spec_sha256() const;
    // Rewrites spec.json with `live_events` (the events sent into the running run,
    // training/live_events.h) under "live_events", beside what it holds; its spec_sha256 stays.
    void record_live_events(const nlohmann::json& live_events) const;

private:
    // Appends whole `rows` to the folder's CSV file `name`, opening it on first use (a new or
    // empty file gets the header `columns`), then flushes. The rows come from run/run_files.h's
    // format_* (cells through run/csv_rows.h, numbers through core/c_numbers.h).
    void append_csv(std::FILE*& stream, const char* name, const char* columns,
                    const std::string& rows);
    // Shared file i (shared_files' order): its stream and header.
    std::pair<std::FILE**, const char*> shared_stream(size_t i);

    std::string dir_;
    std::string staged_name_;  // create_staged: the name publish() gives the folder
    std::FILE* metrics_ = nullptr;
    std::FILE* spectra_ = nullptr;
    std::FILE* traces_ = nullptr;
    std::FILE* dwells_ = nullptr;
    std::FILE* events_ = nullptr;
    mutable std::string spec_sha256_;
};

// The readers of these files (read_metrics_csv, read_spectra_csv, …, read_summary_json) are in
// run/run_files.h.

// The digest a run's states carry of its spec.json `text`: SHA-256 of the bytes as the run wrote
// them at its start. Events sent in while it ran ("live_events", RunStore::record_live_events)
// are left out — the file as written without that key — so a state saved before one was added
// still continues the same run; they only add steps at or after every saved state's.
std::string spec_file_sha256(const std::string& text);

}  // namespace liftlab
