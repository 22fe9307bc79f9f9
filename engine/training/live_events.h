// Events sent into a run while it trains (issue 40: the window's "Change setting…" and "Push into
// the shoulder…"), thread-safe and Torch-free: a front end submits a RunEvent from its own thread;
// the run gives it a step at the next point where every unit can still take it, applies it as
// it applies a spec's --event, and records it in spec.json ("live_events"), so that `--resume`
// and a re-run of spec.json replay it.
//
// The step S: a unit between two boundaries (a boundary b: steps 1…b trained and observed, step
// b+1 not begun) can still take any event at its next boundary or later. S is the largest such
// boundary over the units in progress (the submitting moment's "next step" of the unit furthest
// on), so every unit applies the event after the same step S, exactly as a spec event at S. A
// unit that has finished (or a run past its last step) cannot: the event is refused (a change
// that one seed saw and another did not could not be repeated from spec.json; fork instead).
#pragma once
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "spec/experiment_spec.h"

namespace liftlab {

// One application of an event to one method of one unit: a row of events.csv.
struct AppliedEvent {
    int step = 0;
    std::string method;  // with the sweep suffix
    std::uint64_t seed = 0;
    std::string key;  // "lambda", "lr", …; "push.readout" for a push
    double old_value = 0, new_value = 0;
};

class LiveEvents {
public:
    // What became of a submitted event: given step `event.step`, or refused with `error`.
    struct Outcome {
        int id = 0;
        RunEvent event;
        std::string error;  // "" when scheduled
    };
    using OutcomeCallback = std::function<void(const Outcome&)>;
    using AppliedCallback = std::function<void(const std::vector<AppliedEvent>&)>;
    // Rewrites the run's record with every live event so far (spec.json "live_events").
    using RecordCallback = std::function<void(const std::vector<RunEvent>&)>;

    // Front end: set before the run starts. Both are called on a worker thread.
    void on_outcome(OutcomeCallback f);
    void on_applied(AppliedCallback f);

    // Front end, any thread, never blocks on training: queues `e` (its step is chosen by the
    // run) and returns its id. The event must have passed check_live_event.
    int submit(RunEvent e);
    // The live events scheduled so far, in order.
    std::vector<RunEvent> scheduled() const;
    // Each method's live settings (by label) as its trainer holds them now: what a front end
    // shows as the current value (the unit that reported last; units differ only in a sweep of
    // that very setting).
    std::map<std::string, std::map<std::string, double>> settings() const;

    // ---- the runner's side ----
    // The run starts: `steps` per unit, `record` writes the record (null: nothing written),
    // `run_dir` its folder ("" when nothing is written).
    void begin_run(int steps, RecordCallback record, const std::string& run_dir = "");
    // The running run's folder ("" before it exists or when nothing is written): a front end
    // reads its files meanwhile (the landscape at the latest checkpoint).
    std::string run_dir() const;
    // Unit `unit` stands at boundary b: pending events get their step; returns the live events at
    // b (to apply now, after the spec's). Then `next_stop(is_event_at)` — the next boundary the
    // unit stops at, given the events so far — is asked under the same lock and recorded as the
    // earliest step the unit can still take an event at, so no event is ever scheduled where a
    // unit has already passed.
    std::vector<RunEvent> at_boundary(
        int unit, int b, const std::function<int(const std::function<bool(int)>&)>& next_stop);
    // The run has ended: events still pending are refused, the record callback is dropped.
    void end_run();
    // Whether a live event is scheduled at `step` (any unit).
    bool has_event_at(int step) const;
    // Unit `unit` has ended (finished, stopped or failed): it takes no more events.
    void unit_done(int unit);
    // The rows a unit applied (events.csv), for the front end.
    void applied(const std::vector<AppliedEvent>& rows);
    void report_settings(const std::string& label, const std::map<std::string, double>& values);

private:
    void schedule_pending(int floor);  // holds mutex_

    mutable std::mutex mutex_;
    std::vector<std::pair<int, RunEvent>> pending_;  // (id, event)
    std::vector<RunEvent> scheduled_;
    std::map<std::string, std::map<std::string, double>> settings_;
    std::map<int, int> next_;  // unit → the earliest boundary it can still take an event at
    int steps_ = 0;
    int next_id_ = 1;
    std::string run_dir_;
    RecordCallback record_;
    OutcomeCallback outcome_;
    AppliedCallback applied_;
};

// Throws SpecError when `e` (its step ignored) cannot be sent into a run of `spec`: the method
// label, the key (live_setting_keys) and the value are checked as parse_spec checks an --event.
void check_live_event(const ExperimentSpec& spec, const RunEvent& e);

}  // namespace liftlab
