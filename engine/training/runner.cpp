#include "training/runner.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "core/compute_threads.h"
#include "core/errors.h"
#include "core/path_component.h"
#include "core/version.h"
#include "data/batch_sampler.h"
#include "data/dataset.h"
#include "diagnostics/feature_spectrum.h"
#include "diagnostics/one_step_gain.h"
#include "distributed/communicator.h"
#include "distributed/data_parallel_checks.h"
#include "lastlayer/proximal_solve.h"
#include "run/run_store.h"
#include "training/method_trainer.h"
#include "training/trainer.h"

namespace liftlab {

namespace {

struct Slot {
    std::unique_ptr<Trainer> trainer;
    MethodRunSummary summary;
    bool active = true;
    double loss_sum = 0;  // batch losses since the last log point
    int loss_count = 0;
    double first_loss = -1;
    // Landscape trajectory (diagnostics.checkpoint_every): steps and one vector per space.
    std::vector<int64_t> checkpoint_steps;
    std::map<std::string, std::vector<torch::Tensor>> checkpoints;
    bool trajectory_dirty = false;  // checkpoints not yet on disk
    size_t dwells_written = 0;      // dwell_times() already in dwells.csv
    double step_seconds = 0;        // wall time of this method's steps so far (thread balance)
};

// Methods → `groups` threads, longest first to the least loaded (by each method's step time so
// far; before any is measured, round robin). Which thread runs a method never changes its
// results: every thread is single-threaded.
std::vector<std::vector<size_t>> balance_methods(const std::vector<Slot>& slots, int groups) {
    std::vector<size_t> order(slots.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    // The index tie-break keeps the unmeasured first chunk round robin.
    auto cost = [&](size_t i) { return slots[i].step_seconds + 1e-9 * (order.size() - i); };
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return cost(a) > cost(b); });
    std::vector<std::vector<size_t>> out(groups);
    std::vector<double> load(groups, 0.0);
    for (size_t i : order) {
        const auto g =
            static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
        out[g].push_back(i);
        load[g] += cost(i);
    }
    return out;
}

void record_checkpoint(Slot& s, int step) {
    auto c = s.trainer->checkpoint();
    if (c.empty()) return;
    s.checkpoint_steps.push_back(step);
    for (auto& [space, v] : c) s.checkpoints[space].push_back(v.detach().clone());
    s.trajectory_dirty = true;
}

// trajectories/<label>_seed<k>.pt: torch::save of {steps (T, int64), theta (T × P), lifted
// (T × Q)}, rewritten through a temporary file and a rename whenever a checkpoint was added, so a
// killed run keeps every checkpoint but those since the last log point.
void write_trajectory(const RunStore& store, Slot& s) {
    if (s.checkpoint_steps.empty() || !s.trajectory_dirty) return;
    const std::string dir = store.path("trajectories");
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw WriteError(dir, ec.message());
    // The label is a safe path component (parse_spec); a sweep suffix may hold any text.
    const std::string file = dir + "/" + to_safe_path_component(s.summary.method) + "_seed" +
                             std::to_string(s.summary.seed) + ".pt";
    std::vector<torch::Tensor> tensors = {
        torch::tensor(s.checkpoint_steps, torch::kInt64),
        torch::stack(s.checkpoints.at("theta")),
        torch::stack(s.checkpoints.at("lifted")),
    };
    try {
        torch::save(tensors, file + ".tmp");
    } catch (const c10::Error& e) {
        std::filesystem::remove(file + ".tmp", ec);
        throw WriteError(file + ".tmp", e.what_without_backtrace());
    }
    std::filesystem::rename(file + ".tmp", file, ec);
    if (ec) throw WriteError(file, "rename: " + ec.message());
    s.trajectory_dirty = false;
}

}  // namespace

std::vector<std::string> final_metric_warnings(const std::map<std::string, double>& fin) {
    std::vector<std::string> out;
    // Below 1 % of the draws (METHODS.md n-D EBMs) the importance log Z rests on a handful of
    // weights: biased low and with an unreliable standard error, and so is test_loss.
    constexpr double kMinEssFraction = 0.01;
    if (const auto it = fin.find("ess_fraction"); it != fin.end() && it->second < kMinEssFraction) {
        char text[200];
        std::snprintf(text, sizeof text,
                      "importance-sampling ESS fraction %.3g < 1 %%: log_z and test_loss are "
                      "unreliable (try icnn.proposal=flow)",
                      it->second);
        out.emplace_back(text);
    }
    return out;
}

namespace {

// The dwells completed since the last call (they go to dwells.csv, in unit order).
std::vector<int64_t> take_new_dwells(Slot& s) {
    const auto dwells = s.trainer->dwell_times();
    if (dwells.size() <= s.dwells_written) return {};
    std::vector<int64_t> out(dwells.begin() + static_cast<std::ptrdiff_t>(s.dwells_written),
                             dwells.end());
    s.dwells_written = dwells.size();
    return out;
}

nlohmann::json summary_json(const std::string& status, const std::vector<MethodRunSummary>& runs,
                            const std::string& reason = "") {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& r : runs) {
        nlohmann::json fin = nlohmann::json::object();
        for (const auto& [k, v] : r.final_metrics)
            fin[k] = std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
        nlohmann::json e = {{"method", r.method}, {"name", r.name},
                            {"seed", r.seed},     {"batch_size", r.batch_size},
                            {"status", r.status}, {"steps_done", r.steps_done},
                            {"final", fin}};
        if (!r.sweep_value.empty()) e["sweep_value"] = nlohmann::json::parse(r.sweep_value);
        if (!r.reason.empty()) e["reason"] = r.reason;
        const auto warnings = final_metric_warnings(r.final_metrics);
        if (!warnings.empty()) e["warnings"] = warnings;
        arr.push_back(e);
    }
    nlohmann::json out = {{"status", status}, {"runs", arr}};
    if (!reason.empty()) out["reason"] = reason;
    return out;
}

// The fixed probe sets of the diagnostics: held-out samples for the spectrum, one training batch
// for the one-step analysis.
struct Probes {
    torch::Tensor spectrum_x;
    torch::Tensor batch_x, batch_y;
};

Probes make_probes(const ExperimentSpec& spec, const Dataset& data) {
    Probes p;
    const int64_t n = std::min<int64_t>(spec.diagnostics.probe_size, data.n_test());
    p.spectrum_x = data.x_test.narrow(0, 0, n);
    BatchSampler sampler(data.n_train(), spec.batch_size, /*seed=*/0x5eed);
    const auto idx = sampler.next();
    p.batch_x = data.x_train.index_select(0, idx);
    p.batch_y = data.y_train.index_select(0, idx);
    return p;
}

// The label under which a named feature set's spectrum is stored: "dfiv-prox/instrument", before
// any sweep suffix ("dfiv-prox/instrument@batch_size=16"); the method label for unnamed features.
std::string spectrum_label(const std::string& method, const std::string& features) {
    if (features.empty()) return method;
    const auto at = method.find('@');
    if (at == std::string::npos) return method + "/" + features;
    return method.substr(0, at) + "/" + features + method.substr(at);
}

// Where the runs of one sub-spec (one sweep value) send their output. Seeds may run on several
// workers at once; each (sweep value, seed) is a unit, numbered in the sequential order. Progress
// goes out at once from any worker, one call at a time; run-folder writes go out in unit order
// (a later unit's rows wait until the earlier units are done), so metrics.csv, dwells.csv and
// summary.json come out byte for byte as a sequential run writes them.
class RunReporter {
public:
    RunReporter(RunStore* store, const ProgressCallback& on_progress, std::atomic<bool>& cancelled,
                double total_units)
        : store_(store), on_progress_(on_progress), cancelled_(cancelled), total_(total_units) {}

    // Units first_unit … first_unit + count − 1 are about to run (each `steps` long).
    void begin_units(int first_unit, int count) {
        std::lock_guard<std::mutex> lock(mutex_);
        next_to_commit_ = first_unit;
        for (int u = first_unit; u < first_unit + count; ++u) pending_[u];
    }

    // `runs`: the unit's methods as they start (status running), listed as failed if the run
    // ends with an exception before the unit finishes.
    void started(int unit, const WorkerProgress& w, std::vector<MethodRunSummary> runs) {
        std::lock_guard<std::mutex> lock(mutex_);
        running_[unit] = w;
        in_progress_[unit] = std::move(runs);
    }

    // Reports one update of `unit`: store writes (in unit order) and the progress callback.
    // Returns false when the run is cancelled.
    bool report(int unit, ProgressUpdate& u) {
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

    // The final statuses of a unit: no rows, and the callback cannot cancel any more.
    void report_statuses(int unit, ProgressUpdate& u) {
        std::lock_guard<std::mutex> lock(mutex_);
        u.workers.clear();
        for (const auto& [k, w] : running_) u.workers.push_back(w);
        if (on_progress_) on_progress_(u);
    }

    // A store write to a file of its own: at once (one writer at a time).
    void write_now(const std::function<void(RunStore&)>& write) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (store_) write(*store_);
    }

    // A store write that must keep the sequential order (e.g. appending to a shared file).
    void write_in_order(int unit, std::function<void(RunStore&)> write) {
        if (!store_) return;
        if (unit == next_to_commit_)
            write(*store_);
        else
            pending_[unit].writes.push_back(std::move(write));
    }

    void write_ordered(int unit, std::function<void(RunStore&)> write) {
        std::lock_guard<std::mutex> lock(mutex_);
        write_in_order(unit, std::move(write));
    }

    // The unit is finished: its runs join the summary, and the next units' waiting writes go out.
    void finished(int unit, std::vector<MethodRunSummary> runs) {
        std::lock_guard<std::mutex> lock(mutex_);
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
            store_->write_json("summary.json",
                               summary_json(cancelled_ ? "cancelled" : "running", runs_));
    }

    std::vector<MethodRunSummary> take_runs() { return std::move(runs_); }
    // The finished runs, then those of units still in progress (for a failed run's summary).
    std::vector<MethodRunSummary> take_all_runs() {
        std::lock_guard<std::mutex> lock(mutex_);
        auto out = std::move(runs_);
        for (auto& [unit, runs] : in_progress_)
            for (auto& r : runs) out.push_back(std::move(r));
        in_progress_.clear();
        return out;
    }

private:
    struct Pending {
        std::vector<std::function<void(RunStore&)>> writes;
        bool done = false;
        std::vector<MethodRunSummary> runs;
    };
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
    std::vector<MethodRunSummary> runs_;
};

// One seed of one sub-spec: every method of the spec on identical data and seed, step by step.
// `method_threads` > 1: the methods train on that many threads (see train_chunk).
void run_seed(const ExperimentSpec& spec, const std::string& suffix, const std::string& sweep_value,
              int unit, int si, int num_seeds, int method_threads, const Dataset& data,
              const Probes& probes, const RunOptions& options, RunReporter& reporter,
              std::atomic<bool>& cancelled) {
    const std::uint64_t seed = spec.seeds[si];
    std::vector<Slot> slots;
    {
        std::lock_guard<std::mutex> lock(trainer_construction_mutex());
        for (const auto& m : spec.methods) {
            Slot s;
            s.trainer = make_trainer(spec, m, data, seed);
            if (options.communicator && !s.trainer->attach_communicator(options.communicator))
                throw std::runtime_error(
                    "data-parallel runs support the backbone + last-layer methods; '" + m.name +
                    "' runs in one process only");
            s.summary.method = m.label + suffix;
            s.summary.name = m.name;
            s.summary.sweep_value = sweep_value;
            s.summary.seed = seed;
            s.summary.batch_size = spec.batch_size;
            s.summary.status = "running";
            if (spec.diagnostics.checkpoint_every > 0) record_checkpoint(s, 0);
            slots.push_back(std::move(s));
        }
    }
    {
        std::vector<MethodRunSummary> starting;
        for (const auto& s : slots) starting.push_back(s.summary);
        reporter.started(unit, {si, seed, suffix, 0, spec.steps}, std::move(starting));
    }

    ProgressUpdate update;
    update.seed = seed;
    update.seed_index = si;
    update.num_seeds = num_seeds;
    update.total_steps = spec.steps;
    update.sweep_label = suffix;

    auto finish_slot = [&](Slot& s, const std::string& status, int step,
                           const std::string& reason) {
        s.active = false;
        s.summary.status = status;
        s.summary.steps_done = step;
        s.summary.reason = reason;
        update.statuses.push_back({s.summary.method, seed, status, step, reason});
    };
    auto every = [](int step, int n) { return n > 0 && step % n == 0; };

    // One training step of one method; a failure or divergence comes back as (status, reason).
    using Ending = std::optional<std::pair<std::string, std::string>>;
    auto train_slot = [&](Slot& s, int step) -> Ending {
        double loss;
        const auto t0 = std::chrono::steady_clock::now();
        try {
            loss = s.trainer->step();
            s.step_seconds +=
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        } catch (const CommunicationError&) {
            throw;  // every rank must stop, not just this method
        } catch (const std::exception& e) {
            return std::make_pair(std::string("failed"), std::string(e.what()));
        }
        if (s.first_loss < 0 && std::isfinite(loss)) s.first_loss = std::max(loss, 1e-12);
        if (!std::isfinite(loss) ||
            (s.first_loss > 0 && loss > spec.divergence_factor * s.first_loss))
            return std::make_pair(std::string("diverged"), "training loss " + std::to_string(loss) +
                                                               " at step " + std::to_string(step));
        s.loss_sum += loss;
        ++s.loss_count;
        return std::nullopt;
    };
    // The next step at which the runner looks at every method (log, diagnostics, checkpoint).
    auto next_sync_step = [&](int step) {
        for (;; ++step)
            if (step % spec.log_every == 0 || step == spec.steps ||
                every(step, spec.diagnostics.spectrum_every) ||
                every(step, spec.diagnostics.one_step_every) ||
                every(step, spec.diagnostics.checkpoint_every))
                return step;
    };
    // Methods on several threads: between two sync steps every method trains on its own (they
    // share nothing but the read-only data), shared out by balance_methods, each thread
    // single-threaded; statuses are applied afterwards in method order, so everything the runner
    // records is what the one-thread run records.
    const int groups = std::min<int>(method_threads, static_cast<int>(slots.size()));
    const int caller_threads = torch::get_num_threads();
    if (groups > 1) set_compute_threads(1);
    auto train_chunk = [&](int first, int last) {
        const auto assignment = balance_methods(slots, groups);
        std::vector<Ending> ended(slots.size());
        std::vector<int> ended_at(slots.size(), 0);
        std::atomic<bool> stopped{false};
        auto run_group = [&](int g) {
            for (int t = first; t <= last && !stopped; ++t) {
                if (options.before_step) options.before_step();
                if ((options.stop && options.stop->load()) || cancelled.load()) {
                    stopped = true;
                    break;
                }
                for (size_t i : assignment[g]) {
                    if (!slots[i].active || ended[i]) continue;
                    if ((ended[i] = train_slot(slots[i], t))) ended_at[i] = t;
                }
            }
        };
        std::vector<std::thread> pool;
        for (int g = 1; g < groups; ++g)
            pool.emplace_back([&, g] {
                torch::set_num_threads(1);
                run_group(g);
            });
        run_group(0);
        for (auto& t : pool) t.join();
        for (size_t i = 0; i < slots.size(); ++i)
            if (ended[i]) finish_slot(slots[i], ended[i]->first, ended_at[i], ended[i]->second);
        return !stopped.load();
    };

    for (int step = 1; step <= spec.steps; ++step) {
        if (groups > 1) {
            const int last = next_sync_step(step);
            if (!train_chunk(step, last)) {
                cancelled = true;
                break;
            }
            step = last;
        } else {
            if (options.before_step) options.before_step();
            if ((options.stop && options.stop->load()) || cancelled.load()) {
                cancelled = true;
                break;
            }
            for (auto& s : slots) {
                if (!s.active) continue;
                if (const auto ending = train_slot(s, step))
                    finish_slot(s, ending->first, step, ending->second);
            }
        }

        const bool log_now = step % spec.log_every == 0 || step == spec.steps;
        const bool spectrum_now = every(step, spec.diagnostics.spectrum_every) ||
                                  (step == spec.steps && spec.diagnostics.spectrum_every > 0);
        const bool gain_now = every(step, spec.diagnostics.one_step_every);
        if (every(step, spec.diagnostics.checkpoint_every) ||
            (step == spec.steps && spec.diagnostics.checkpoint_every > 0))
            for (auto& s : slots)
                if (s.active) record_checkpoint(s, step);
        if (!log_now && !spectrum_now && !gain_now) {
            // A divergence is reported at once, not at the next log point.
            if (!update.statuses.empty()) {
                update.step = step;
                const bool go_on = reporter.report(unit, update);
                update.statuses.clear();
                if (!go_on) break;
            }
            continue;
        }
        for (auto& s : slots) {
            if (!s.active) continue;
            const std::string& label = s.summary.method;
            auto& fm = s.summary.final_metrics;
            auto emit = [&](const std::string& metric, double value) {
                fm[metric] = value;
                update.points.push_back({step, label, seed, metric, value});
            };
            if (log_now) {
                if (!s.trainer->parameters_finite()) {
                    finish_slot(s, "diverged", step, "non-finite parameters");
                    continue;
                }
                const auto test = s.trainer->evaluate_test();
                if (!std::isfinite(test.at("test_loss"))) {
                    finish_slot(s, "diverged", step, "non-finite test loss");
                    continue;
                }
                emit("train_loss", s.loss_count ? s.loss_sum / s.loss_count : NAN);
                s.loss_sum = 0;
                s.loss_count = 0;
                for (const auto& [k, v] : test) emit(k, v);
                if (spec.diagnostics.train_set_loss)
                    emit("train_set_loss", s.trainer->train_set_loss());
                emit("time_s", s.trainer->step_seconds());
                for (const auto& t : s.trainer->drain_traces())
                    update.traces.push_back({t.step, label, seed, t.coordinate, t.value});
                if (s.trainer->closed_form())
                    emit("solve_fraction",
                         s.trainer->solve_seconds() / std::max(1e-12, s.trainer->step_seconds()));
                s.summary.steps_done = step;
            }
            try {
                const bool has_head = s.trainer->last_layer().defined();
                if (spectrum_now)
                    for (const auto& f : s.trainer->probe_features(probes.spectrum_x)) {
                        const auto sp = feature_spectrum(f.features);
                        const std::string tag = f.name.empty() ? "" : "_" + f.name;
                        emit("kappa" + tag, sp.kappa);
                        emit("eff_rank" + tag, sp.effective_rank);
                        update.spectra.push_back(
                            {step, spectrum_label(label, f.name), seed, sp.singular_values});
                    }
                if (gain_now && has_head) {
                    // From the method's current W, with its own λ (a tiny ridge for gradient
                    // heads so that the problem is well posed).
                    const auto phi = with_bias_column(s.trainer->flat_features(probes.batch_x));
                    const double lam = std::max(s.trainer->regulariser(), 1e-6);
                    const auto g = one_step_gain(phi, flatten_rows(probes.batch_y),
                                                 s.trainer->last_layer(), lam);
                    emit("one_step_gain", g.gain);
                    emit("one_step_kappa", g.kappa);
                }
            } catch (const std::exception& e) {
                // A diagnostic that cannot be computed does not stop training.
            }
        }
        update.step = step;
        if (step == spec.steps) {
            // Diagnostics of the final iterate (σ²_Jac, dwell statistics).
            for (auto& s : slots) {
                if (!s.active) continue;
                try {
                    for (const auto& [k, v] : s.trainer->final_diagnostics()) {
                        s.summary.final_metrics[k] = v;
                        update.points.push_back({step, s.summary.method, seed, k, v});
                    }
                } catch (const std::exception&) {
                    // A diagnostic that cannot be computed does not fail the run.
                }
            }
        }
        const bool go_on = reporter.report(unit, update);
        update.points.clear();
        update.spectra.clear();
        update.traces.clear();
        update.statuses.clear();
        if (log_now && !options.out_dir.empty())  // ICNN checkpoints and dwells: lost at most
            for (auto& s : slots) {               // one log interval on a kill
                reporter.write_now([&s](RunStore& store) { write_trajectory(store, s); });
                reporter.write_ordered(unit, [label = s.summary.method, seed,
                                              dwells = take_new_dwells(s)](RunStore& store) {
                    if (!dwells.empty()) store.append_dwells(label, seed, dwells);
                });
            }
        if (!go_on) break;
    }

    std::vector<MethodRunSummary> runs;
    for (auto& s : slots) {
        if (s.active) {
            s.summary.status = cancelled ? "cancelled" : "ok";
            update.statuses.push_back(
                {s.summary.method, seed, s.summary.status, s.summary.steps_done, ""});
        }
        runs.push_back(s.summary);
        if (!options.out_dir.empty()) {
            // Own file per method and seed: written at once; dwells.csv is shared: in order.
            reporter.write_now([&s](RunStore& store) { write_trajectory(store, s); });
            reporter.write_ordered(unit, [label = s.summary.method, seed,
                                          dwells = take_new_dwells(s)](RunStore& store) {
                if (!dwells.empty()) store.append_dwells(label, seed, dwells);
            });
        }
    }
    if (groups > 1) set_compute_threads(caller_threads);
    if (!update.statuses.empty()) reporter.report_statuses(unit, update);
    reporter.finished(unit, std::move(runs));
}

// What outlives run_in_folder when it throws, so that run_experiment can close the run folder as
// `failed`: the store and the runs finished so far.
struct RunState {
    std::optional<RunStore> store;  // set once the run folder exists
    RunResult result;
};

RunResult run_in_folder(const ExperimentSpec& top_spec, const RunOptions& options,
                        const ProgressCallback& on_progress, RunState& state);

}  // namespace

RunResult run_experiment(const ExperimentSpec& spec, const RunOptions& options,
                         const ProgressCallback& on_progress) {
    RunState state;
    try {
        return run_in_folder(spec, options, on_progress, state);
    } catch (const std::exception& e) {
        // Once a run folder exists, whatever goes wrong (a write error, a model that cannot be
        // built, out of memory) ends it as `failed` with the reason, never leaves it `running`.
        if (!state.store) throw;
        for (auto& r : state.result.runs)
            if (r.status == "running") {
                r.status = "failed";
                r.reason = e.what();
            }
        try {
            state.store->write_json("summary.json",
                                    summary_json("failed", state.result.runs, e.what()));
        } catch (const std::exception&) {
            // The folder cannot take even the summary; the caller reports the first error.
        }
        throw;
    }
}

namespace {

RunResult run_in_folder(const ExperimentSpec& top_spec, const RunOptions& options,
                        const ProgressCallback& on_progress, RunState& state) {
    set_compute_threads(top_spec.threads);
    const auto sub_specs = expand_sweep(top_spec);

    std::optional<RunStore>& store = state.store;
    RunResult& result = state.result;
    std::optional<Dataset> data;
    nlohmann::json data_task;  // the task the loaded data belongs to
    // Slow data preparation reports progress (phase "data") and honours the stop flag.
    int last_percent = -1;
    const DataProgress data_progress = [&](double fraction) {
        if (options.stop && options.stop->load()) return false;
        const int percent = static_cast<int>(fraction * 100);
        if (!on_progress || percent == last_percent) return true;
        last_percent = percent;
        ProgressUpdate u;
        u.phase = "data";
        u.fraction = fraction;
        u.num_seeds = static_cast<int>(top_spec.seeds.size());
        u.total_steps = top_spec.steps;
        return on_progress(u);
    };
    auto load_data = [&](const ExperimentSpec& spec) {
        const auto task = to_json(spec)["task"];
        if (!data || task != data_task) {
            last_percent = -1;
            data = make_dataset(spec.task, data_progress);
            data_task = task;
        }
        // A batch larger than the data would silently shrink to the data (the summary would
        // still claim the requested size).
        if (spec.batch_size > data->n_train())
            throw SpecError("batch_size", std::to_string(spec.batch_size) + " is larger than the " +
                                              std::to_string(data->n_train()) +
                                              " training samples of the data");
        // Images too small for the cnn backbone's blocks (each halves the side; a 1 × 1 IDX or
        // CIFAR file) are a data/spec mismatch, named before training, not a failed run.
        const auto& x = data->x_train;
        const auto blocks = static_cast<int64_t>(spec.backbone.channels.size());
        if (spec.backbone.kind == "cnn" && x.dim() == 4 && blocks > 0 &&
            (std::min(x.size(2), x.size(3)) >> blocks) < 1) {
            const std::string where = spec.task.data_dir.empty() ? "" : " in " + spec.task.data_dir;
            throw SpecError("backbone.channels",
                            std::to_string(blocks) + " cnn blocks need images of at least " +
                                std::to_string(int64_t{1} << blocks) + " × " +
                                std::to_string(int64_t{1} << blocks) + " pixels; the images" +
                                where + " are " + std::to_string(x.size(2)) + " × " +
                                std::to_string(x.size(3)));
        }
    };
    const auto& comm = options.communicator;
    if (comm) check_data_parallel_spec(top_spec, *comm);
    try {
        // Bad data fails before a run folder exists (every sub-spec on the same data).
        for (const auto& sub : sub_specs)
            if (to_json(sub.second)["task"] == to_json(sub_specs.front().second)["task"])
                load_data(sub.second);
    } catch (const DataCancelled&) {
        result.status = "cancelled";
        return result;
    }

    const bool writer = !comm || comm->rank() == 0;  // data-parallel: rank 0 writes
    if (!options.out_dir.empty() && writer) {
        const std::string shard_suffix = options.shard.sharded()
                                             ? "-shard" + std::to_string(options.shard.index) +
                                                   "of" + std::to_string(options.shard.count)
                                             : "";
        store.emplace(RunStore::create(options.out_dir, top_spec.name + shard_suffix));
        result.run_dir = store->dir();
        nlohmann::json resolved = to_json(top_spec);
        resolved["versions"] = version_info();
        resolved["data"] = {{"n_train", data->n_train()},
                            {"n_test", data->n_test()},
                            {"output_dim", data->output_dim()},
                            {"num_classes", data->num_classes}};
        resolved["world_size"] = comm ? comm->world_size() : 1;
        if (options.shard.sharded())
            resolved["shard"] = {{"index", options.shard.index}, {"count", options.shard.count}};
        store->write_json("spec.json", resolved);
        store->write_json("summary.json", summary_json("running", {}));
    }

    std::atomic<bool> cancelled{false};
    const int num_seeds = static_cast<int>(top_spec.seeds.size());
    const int num_sub = static_cast<int>(sub_specs.size());
    const double total_units = static_cast<double>(num_sub) * num_seeds * top_spec.steps;
    RunReporter reporter(store ? &*store : nullptr, on_progress, cancelled, total_units);
    try {
        for (int vi = 0; vi < num_sub && !cancelled; ++vi) {
            const auto& [suffix, spec] = sub_specs[vi];
            try {
                load_data(spec);
            } catch (const DataCancelled&) {
                cancelled = true;
                break;
            }
            const Probes probes = make_probes(spec, *data);
            const std::string sweep_value =
                top_spec.sweep.key.empty() ? "" : top_spec.sweep.values[vi].dump();
            reporter.begin_units(vi * num_seeds, num_seeds);
            // Seeds on the available cores, each worker single-threaded: a seed's results do not
            // depend on which worker runs it, so they match a `threads: 1` run bit for bit. Seeds
            // that do not fill a round (3 seeds on 2 cores: the third) share the cores among
            // their methods instead (same guarantee), so no core idles through a lone seed.
            // Data-parallel ranks must issue their collectives in the same order: one worker.
            const int threads = comm ? 1 : top_spec.threads;
            const int workers = std::min(threads, num_seeds);
            const int tail = num_seeds > workers ? num_seeds % workers : 0;
            auto run_unit = [&](int si, int method_threads) {
                const int unit = vi * num_seeds + si;
                if (!options.shard.owns(unit)) {  // another shard's: nothing to run or write
                    reporter.finished(unit, {});
                    return;
                }
                run_seed(spec, suffix, sweep_value, unit, si, num_seeds, method_threads, *data,
                         probes, options, reporter, cancelled);
            };
            // Seeds [first, last) on `pool_size` workers, each with `method_threads` threads.
            auto run_seeds = [&](int first, int last, int pool_size, int method_threads) {
                if (pool_size <= 1) {
                    for (int si = first; si < last && !cancelled; ++si)
                        run_unit(si, method_threads);
                    return;
                }
                set_compute_threads(1);
                std::atomic<int> next_seed{first};
                std::exception_ptr error;
                std::mutex error_mutex;
                std::vector<std::thread> pool;
                for (int w = 0; w < pool_size; ++w)
                    pool.emplace_back([&] {
                        torch::set_num_threads(1);  // this thread's intra-op pool
                        for (int si = next_seed++; si < last && !cancelled; si = next_seed++) {
                            try {
                                run_unit(si, method_threads);
                            } catch (...) {
                                std::lock_guard<std::mutex> lock(error_mutex);
                                if (!error) error = std::current_exception();
                                cancelled = true;
                            }
                        }
                    });
                for (auto& t : pool) t.join();
                set_compute_threads(top_spec.threads);
                if (error) std::rethrow_exception(error);
            };
            if (workers <= 1) {
                run_seeds(0, num_seeds, 1, num_seeds == 1 ? threads : 1);
                continue;
            }
            run_seeds(0, num_seeds - tail, workers, std::max(1, threads / num_seeds));
            if (tail > 0 && !cancelled)
                run_seeds(num_seeds - tail, num_seeds, tail, threads / tail);
        }

    } catch (...) {
        result.runs = reporter.take_all_runs();  // the failed summary lists every run
        throw;
    }
    result.runs = reporter.take_runs();
    bool any_ok = false, any_diverged = false;
    for (const auto& r : result.runs) {
        any_ok = any_ok || r.status == "ok" || r.status == "cancelled";
        any_diverged = any_diverged || r.status == "diverged";
    }
    // No method finished: `diverged` only if one did; methods that threw make the run `failed`.
    result.status = cancelled ? "cancelled" : any_ok ? "ok" : any_diverged ? "diverged" : "failed";
    if (store) {
        store->close();  // checked: a failed final flush is a failed run
        store->write_json("summary.json", summary_json(result.status, result.runs));
    }
    return result;
}

}  // namespace

}  // namespace liftlab
