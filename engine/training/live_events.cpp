#include "training/live_events.h"

#include <algorithm>
#include <climits>

#include "core/errors.h"

namespace liftlab {

void LiveEvents::on_outcome(OutcomeCallback f) {
    std::lock_guard<std::mutex> lock(mutex_);
    outcome_ = std::move(f);
}

void LiveEvents::on_applied(AppliedCallback f) {
    std::lock_guard<std::mutex> lock(mutex_);
    applied_ = std::move(f);
}

int LiveEvents::submit(RunEvent e) {
    std::lock_guard<std::mutex> lock(mutex_);
    const int id = next_id_++;
    pending_.emplace_back(id, std::move(e));
    return id;
}

std::vector<RunEvent> LiveEvents::scheduled() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return scheduled_;
}

std::map<std::string, std::map<std::string, double>> LiveEvents::settings() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return settings_;
}

void LiveEvents::report_settings(const std::string& label,
                                 const std::map<std::string, double>& values) {
    std::lock_guard<std::mutex> lock(mutex_);
    settings_[label] = values;
}

std::string LiveEvents::run_dir() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return run_dir_;
}

void LiveEvents::begin_run(int steps, RecordCallback record, const std::string& run_dir) {
    std::lock_guard<std::mutex> lock(mutex_);
    steps_ = steps;
    run_dir_ = run_dir;
    record_ = std::move(record);
    next_.clear();
    settings_.clear();
}

void LiveEvents::schedule_pending(int floor) {
    if (pending_.empty()) return;
    // The largest boundary any unit in progress can still take (this unit: `floor`).
    int step = floor;
    bool finished = false;
    for (const auto& [unit, next] : next_) {
        if (next == INT_MAX)
            finished = true;
        else
            step = std::max(step, next);
    }
    std::vector<Outcome> outcomes;
    bool recorded = false;
    for (auto& [id, e] : pending_) {
        Outcome o{id, e, ""};
        if (finished)
            o.error =
                "a unit of this run has finished, so the change could not apply to every "
                "seed alike (fork the run from a saved step instead)";
        else if (step >= steps_)
            o.error = "the run is past its last step (" + std::to_string(steps_) + ")";
        if (o.error.empty()) {
            o.event.step = step;
            scheduled_.push_back(o.event);
            recorded = true;
        }
        outcomes.push_back(std::move(o));
    }
    pending_.clear();
    // On the disk before any unit applies it: a state saved after it must find it in spec.json.
    if (recorded && record_) {
        try {
            record_(scheduled_);
        } catch (...) {
            // Not recorded, not applied: the run would not be repeatable.
            for (auto& o : outcomes)
                if (o.error.empty()) {
                    scheduled_.pop_back();
                    o.error = "spec.json could not be rewritten with the change";
                }
            if (outcome_)
                for (const auto& o : outcomes) outcome_(o);
            throw;
        }
    }
    if (outcome_)
        for (const auto& o : outcomes) outcome_(o);
}

std::vector<RunEvent> LiveEvents::at_boundary(
    int unit, int b, const std::function<int(const std::function<bool(int)>&)>& next_stop) {
    std::lock_guard<std::mutex> lock(mutex_);
    next_[unit] = b;
    schedule_pending(b);
    std::vector<RunEvent> now;
    for (const auto& e : scheduled_)
        if (e.step == b) now.push_back(e);
    const auto is_event_at = [this](int step) {
        return std::any_of(scheduled_.begin(), scheduled_.end(),
                           [step](const RunEvent& e) { return e.step == step; });
    };
    next_[unit] = next_stop ? next_stop(is_event_at) : b + 1;
    return now;
}

void LiveEvents::end_run() {
    std::vector<Outcome> refused;
    OutcomeCallback f;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (auto& [id, e] : pending_)
            refused.push_back({id, e, "the run ended before the change could apply"});
        pending_.clear();
        record_ = nullptr;
        steps_ = 0;
        f = outcome_;
    }
    if (f)
        for (const auto& o : refused) f(o);
}

bool LiveEvents::has_event_at(int step) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::any_of(scheduled_.begin(), scheduled_.end(),
                       [step](const RunEvent& e) { return e.step == step; });
}

void LiveEvents::unit_done(int unit) {
    std::lock_guard<std::mutex> lock(mutex_);
    next_[unit] = INT_MAX;
}

void LiveEvents::applied(const std::vector<AppliedEvent>& rows) {
    AppliedCallback f;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        f = applied_;
    }
    if (f && !rows.empty()) f(rows);
}

void check_live_event(const ExperimentSpec& spec, const RunEvent& e) {
    // parse_spec's own check of an event, on the spec with this one event at step 0.
    ExperimentSpec probe = spec;
    probe.events = {e};
    probe.events.front().step = 0;
    probe.parent.clear();
    probe.fork_step = 0;
    try {
        parse_spec(to_json(probe));
    } catch (const SpecError& err) {
        const std::string prefix = "events[0]";
        if (err.key().rfind(prefix, 0) != 0) throw;
        const std::string what = err.what();
        const auto colon = what.find("': ");
        throw SpecError("event" + err.key().substr(prefix.size()),
                        colon == std::string::npos ? what : what.substr(colon + 3));
    }
}

}  // namespace liftlab
