// Where the runs of one sub-spec (one sweep value) send their output. Seeds may run on several
// workers at once; each (sweep value, seed) is a unit, numbered in the sequential order. Progress
// goes out at once from any worker, one call at a time; run-folder writes go out in unit order
// (a later unit's rows wait until the earlier units are done), so metrics.csv, dwells.csv and
// summary.json come out byte for byte as a sequential run writes them.
#pragma once
#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "run/run_store.h"
#include "training/progress.h"
#include "training/run_types.h"

namespace liftlab {

// summary.json of a run: its status, every (method, seed) run, and the reason of a failure.
nlohmann::json summary_json(RunStatus status, const std::vector<MethodRunSummary>& runs,
                            const std::string& reason = "");

class RunReporter {
public:
    // `store` null: nothing is written. Thread-safe: every member function takes the lock.
    RunReporter(RunStore* store, const ProgressCallback& on_progress, std::atomic<bool>& cancelled,
                double total_units)
        : store_(store), on_progress_(on_progress), cancelled_(cancelled), total_(total_units) {}

    // Units first_unit … first_unit + count − 1 are about to run (each `steps` long).
    void begin_units(int first_unit, int count);
    // `runs`: the unit's methods as they start (status running), listed as failed if the run
    // ends with an exception before the unit finishes.
    void started(int unit, const WorkerProgress& w, std::vector<MethodRunSummary> runs);
    // Reports one update of `unit`: store writes (in unit order) and the progress callback.
    // Returns false when the run is cancelled.
    bool report(int unit, ProgressUpdate& u);
    // The final statuses of a unit: no rows, and the callback cannot cancel any more.
    void report_statuses(int unit, ProgressUpdate& u);
    // A store write to a file of its own: at once (one writer at a time).
    void write_now(const std::function<void(RunStore&)>& write);
    // A store write that must keep the sequential order (e.g. appending to a shared file).
    void write_ordered(int unit, std::function<void(RunStore&)> write);
    // Where a unit's resume state (training/resume.h) goes: `rows` is the store its rows went to
    // (the run's, or its own aside: `held`), whose sizes the state records. (States are written
    // only with save_state, which keeps waiting rows aside: never from memory.)
    struct StateTarget {
        RunStore& run;
        RunStore& rows;
        bool held;
    };
    // A unit's resume state, in the same order as its rows.
    void write_state(int unit, std::function<void(const StateTarget&)> write);
    // With a resumable run (save_state): a unit that must wait for an earlier one writes its rows
    // into its own files (resume/unit<k>.rows/, training/resume.h), and its states record their
    // sizes there; when its turn comes the rows are appended to the run's files, its state is
    // made to record those, and the files aside go. So a kill or a stop keeps every unit's
    // progress, not only the first unfinished one's. Without it the waiting rows wait in memory.
    void keep_waiting_rows_aside(std::string run_dir);
    // A stopped run's rows still aside go into the run's files (after the others, in unit
    // order), for the folder to show all that ran; they stay aside too, with their states, for
    // a resume (which cuts the run's files back to the last state that saw them).
    void show_rows_kept_aside();
    // The unit is finished: its runs join the summary, and the next units' waiting writes go out.
    // A unit that ends while the run is cancelled counts as stopped unfinished: the units after
    // it keep their rows aside.
    void finished(int unit, std::vector<MethodRunSummary> runs);

    std::vector<MethodRunSummary> take_runs() { return std::move(runs_); }
    // The finished runs, then those of units still in progress (for a failed run's summary).
    std::vector<MethodRunSummary> take_all_runs();

private:
    struct Pending {
        std::vector<std::function<void(RunStore&)>> writes;
        bool done = false;
        std::vector<MethodRunSummary> runs;
    };
    // write_ordered with the lock held.
    void write_in_order(int unit, std::function<void(RunStore&)> write);
    // Whether `unit`'s rows go to the run's files now.
    bool writes_through(int unit) const;
    bool stopped_before(int unit) const { return first_stopped_ >= 0 && first_stopped_ < unit; }
    RunStore& aside(int unit);
    // `unit`'s turn: its rows kept aside join the run's files, its state follows them.
    void commit_aside(int unit);

    std::mutex mutex_;  // every member below is guarded by it
    RunStore* store_;
    const ProgressCallback& on_progress_;
    std::atomic<bool>& cancelled_;
    double total_;
    double done_steps_ = 0;
    int next_to_commit_ = 0;
    int units_begin_ = 0, units_end_ = 0;  // the units of the last begin_units
    std::map<int, Pending> pending_;
    std::map<int, WorkerProgress> running_;
    std::map<int, std::vector<MethodRunSummary>> in_progress_;
    int first_stopped_ = -1;  // the first unit that ended while the run was cancelled, or −1
    std::string aside_dir_;   // the run folder when waiting rows are kept aside, else empty
    std::map<int, std::unique_ptr<RunStore>> aside_;  // open stores of the units' rows aside
    std::vector<MethodRunSummary> runs_;
};

}  // namespace liftlab
