#include "training/run_reporter.h"

#include <cmath>
#include <filesystem>

#include "core/errors.h"
#include "run/state_archive.h"
#include "training/resume.h"

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
    units_begin_ = first_unit;
    units_end_ = first_unit + count;
    for (int u = first_unit; u < first_unit + count; ++u) pending_[u];
    if (store_ && !aside_dir_.empty() && !stopped_before(first_unit)) commit_aside(first_unit);
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

bool RunReporter::writes_through(int unit) const {
    // After a stop, a unit behind the stopped one keeps its rows aside whatever its turn.
    return unit == next_to_commit_ && (aside_dir_.empty() || !stopped_before(unit));
}

void RunReporter::write_in_order(int unit, std::function<void(RunStore&)> write) {
    if (!store_) return;
    if (writes_through(unit))
        write(*store_);
    else if (!aside_dir_.empty())
        write(aside(unit));
    else
        pending_[unit].writes.push_back(std::move(write));
}

void RunReporter::write_ordered(int unit, std::function<void(RunStore&)> write) {
    std::lock_guard<std::mutex> lock(mutex_);
    write_in_order(unit, std::move(write));
}

void RunReporter::write_state(int unit, std::function<void(const StateTarget&)> write) {
    std::lock_guard<std::mutex> lock(mutex_);
    write_in_order(unit, [this, write = std::move(write)](RunStore& rows) {
        write({*store_, rows, &rows != store_});
    });
}

void RunReporter::keep_waiting_rows_aside(std::string run_dir) {
    std::lock_guard<std::mutex> lock(mutex_);
    aside_dir_ = std::move(run_dir);
}

RunStore& RunReporter::aside(int unit) {
    auto& store = aside_[unit];
    if (!store) {
        const std::string dir = unit_rows_aside_path(aside_dir_, unit);
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        if (ec) throw WriteError(dir, ec.message());
        store = std::make_unique<RunStore>(dir);  // a resumed unit's files continue as cut
    }
    return *store;
}

void RunReporter::commit_aside(int unit) {
    const std::string dir = unit_rows_aside_path(aside_dir_, unit);
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec)) return;
    aside_.erase(unit);  // closes its files (every row was flushed)
    const auto before = store_->shared_sizes();
    const auto kept = RunStore::shared_sizes_in(dir);
    store_->append_rows_of(dir);
    const auto after = store_->shared_sizes();
    // Its state saw its rows aside: make it see them here. (A kill before this leaves the state
    // as it was and the files aside: the resume cuts the run's files back to the earlier unit's
    // state and appends them again.)
    const std::string file = unit_state_path(aside_dir_, unit);
    if (std::filesystem::exists(file, ec)) {
        auto state = StateArchive::read_file(file);
        if (state.has("held") && state.integer("held") != 0) {
            const auto seen = state.tensor("sizes");
            std::vector<int64_t> sizes(before.size());
            for (size_t i = 0; i < sizes.size(); ++i) {
                const auto at = i < static_cast<size_t>(seen.numel())
                                    ? seen[static_cast<int64_t>(i)].item<int64_t>()
                                    : int64_t{0};
                // Rows it had not seen are the last (kept − at) bytes appended.
                sizes[i] =
                    at == 0 ? static_cast<int64_t>(before[i])
                            : static_cast<int64_t>(after[i]) - (static_cast<int64_t>(kept[i]) - at);
            }
            state.put("sizes", torch::tensor(sizes, torch::kInt64));
            state.put_int("held", 0);
            write_file_atomic(file, state.serialize(), /*durable=*/false);
        }
    }
    std::filesystem::remove_all(dir, ec);
    if (ec) throw WriteError(dir, ec.message());
}

void RunReporter::show_rows_kept_aside() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!store_ || aside_dir_.empty()) return;
    aside_.clear();  // closed: every row was flushed
    // Every unit of the sub-spec with rows aside, in order (one resumed as done before a kill
    // has them without having written in this process).
    for (int unit = units_begin_; unit < units_end_; ++unit) {
        const std::string dir = unit_rows_aside_path(aside_dir_, unit);
        std::error_code ec;
        if (std::filesystem::exists(dir, ec)) store_->append_rows_of(dir);
    }
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
        if (!aside_dir_.empty()) {
            if (!stopped_before(next_to_commit_)) commit_aside(next_to_commit_);
            continue;
        }
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
