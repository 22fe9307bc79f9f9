#include "training/run_reporter.h"

#include <cmath>

namespace liftlab {

nlohmann::json summary_json(RunStatus status, const std::vector<MethodRunSummary>& runs,
                            const std::string& reason) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& r : runs) {
        nlohmann::json fin = nlohmann::json::object();
        for (const auto& [k, v] : r.final_metrics)
            fin[k] = std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
        nlohmann::json e = {{"method", r.method},
                            {"name", r.name},
                            {"seed", r.seed},
                            {"batch_size", r.batch_size},
                            {"status", to_string(r.status)},
                            {"steps_done", r.steps_done},
                            {"final", fin}};
        if (!r.sweep_value.empty()) e["sweep_value"] = nlohmann::json::parse(r.sweep_value);
        if (!r.reason.empty()) e["reason"] = r.reason;
        if (!r.model.empty()) e["model"] = r.model;
        if (!r.model_error.empty()) e["model_error"] = r.model_error;
        const auto warnings = final_metric_warnings(r.final_metrics);
        if (!warnings.empty()) e["warnings"] = warnings;
        arr.push_back(e);
    }
    nlohmann::json out = {{"status", to_string(status)}, {"runs", arr}};
    if (!reason.empty()) out["reason"] = reason;
    return out;
}

void RunReporter::begin_units(int first_unit, int count) {
    std::lock_guard<std::mutex> lock(mutex_);
    next_to_commit_ = first_unit;
    for (int u = first_unit; u < first_unit + count; ++u) pending_[u];
}

void RunReporter::started(int unit, const WorkerProgress& w, std::vector<MethodRunSummary> runs) {
    std::lock_guard<std::mutex> lock(mutex_);
    // A unit that starts past its step 0 (resumed, or finished before a kill, or forked) has those
    // steps done already: a resumed run's progress starts where it stands, not at 0 %.
    done_steps_ += w.step;
    running_[unit] = w;
    in_progress_[unit] = std::move(runs);
}

bool RunReporter::report(int unit, ProgressUpdate& u) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = running_.find(unit);
    if (it != running_.end()) {
        done_steps_ += u.step - it->second.step;
        it->second.step = u.step;
    }
    if (store_ && (!u.points.empty() || !u.spectra.empty() || !u.traces.empty())) {
        auto points = u.points;
        auto spectra = u.spectra;
        auto traces = u.traces;
        write_in_order(unit, [points = std::move(points), spectra = std::move(spectra),
                              traces = std::move(traces)](RunStore& store) {
            store.append_metrics(points);
            store.append_spectra(spectra);
            store.append_traces(traces);
        });
    }
    u.fraction = done_steps_ / total_;
    u.workers.clear();
    for (const auto& [k, w] : running_) u.workers.push_back(w);
    if (on_progress_ && !on_progress_(u)) cancelled_ = true;
    return !cancelled_.load();
}

void RunReporter::report_statuses(int unit, ProgressUpdate& u) {
    std::lock_guard<std::mutex> lock(mutex_);
    u.workers.clear();
    for (const auto& [k, w] : running_) u.workers.push_back(w);
    if (on_progress_) on_progress_(u);
}

void RunReporter::write_now(const std::function<void(RunStore&)>& write) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (store_) write(*store_);
}

void RunReporter::write_in_order(int unit, std::function<void(RunStore&)> write) {
    if (!store_) return;
    if (unit == next_to_commit_)
        write(*store_);
    else
        pending_[unit].writes.push_back(std::move(write));
}

void RunReporter::write_ordered(int unit, std::function<void(RunStore&)> write) {
    std::lock_guard<std::mutex> lock(mutex_);
    write_in_order(unit, std::move(write));
}

void RunReporter::write_state(int unit, std::function<void(RunStore&, bool)> write) {
    std::lock_guard<std::mutex> lock(mutex_);
    // Decided when the write goes out (a waiting one may go out after an earlier unit stopped).
    write_in_order(unit, [this, unit, write = std::move(write)](RunStore& store) {
        write(store, first_stopped_ < 0 || unit <= first_stopped_);
    });
}

void RunReporter::finished(int unit, std::vector<MethodRunSummary> runs) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cancelled_ && (first_stopped_ < 0 || unit < first_stopped_)) first_stopped_ = unit;
    auto it_run = running_.find(unit);
    if (it_run != running_.end()) {
        done_steps_ += it_run->second.total_steps - it_run->second.step;
        running_.erase(it_run);
    }
    in_progress_.erase(unit);
    pending_[unit].done = true;
    pending_[unit].runs = std::move(runs);
    while (true) {
        auto it = pending_.find(next_to_commit_);
        if (it == pending_.end() || !it->second.done) break;
        for (auto& r : it->second.runs) runs_.push_back(std::move(r));
        pending_.erase(it);
        ++next_to_commit_;
        auto next = pending_.find(next_to_commit_);
        if (next == pending_.end() || !store_) continue;
        for (auto& w : next->second.writes) w(*store_);
        next->second.writes.clear();
    }
    if (store_)
        store_->write_json(
            run_folder::kSummary,
            summary_json(cancelled_ ? RunStatus::Cancelled : RunStatus::Running, runs_));
}

std::vector<MethodRunSummary> RunReporter::take_all_runs() {
    std::lock_guard<std::mutex> lock(mutex_);
    auto out = std::move(runs_);
    for (auto& [unit, runs] : in_progress_)
        for (auto& r : runs) out.push_back(std::move(r));
    in_progress_.clear();
    return out;
}

}  // namespace liftlab
