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
    // A unit's resume state (training/resume.h), in the same order. `resumable` is false once an
    // earlier unit has stopped unfinished (a stop with seeds side by side): a resume continues
    // that unit and runs the later ones again from their start, so their states must not be
    // written (rows are: the stopped folder shows all that ran).
    void write_state(int unit, std::function<void(RunStore&, bool resumable)> write);
    // The unit is finished: its runs join the summary, and the next units' waiting writes go out.
    // A unit that ends while the run is cancelled counts as stopped unfinished (write_state).
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

    std::mutex mutex_;  // every member below is guarded by it
    RunStore* store_;
    const ProgressCallback& on_progress_;
    std::atomic<bool>& cancelled_;
    double total_;
    double done_steps_ = 0;
    int next_to_commit_ = 0;
    std::map<int, Pending> pending_;
    std::map<int, WorkerProgress> running_;
    std::map<int, std::vector<MethodRunSummary>> in_progress_;
    int first_stopped_ = -1;  // the first unit that ended while the run was cancelled, or −1
    std::vector<MethodRunSummary> runs_;
};

}  // namespace liftlab
