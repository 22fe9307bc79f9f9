#include "training/seed_run.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/activity.h"
#include "core/c_numbers.h"
#include "core/compute_threads.h"
#include "core/error_text.h"
#include "core/errors.h"
#include "core/path_component.h"
#include "data/batch_sampler.h"
#include "diagnostics/feature_spectrum.h"
#include "diagnostics/one_step_gain.h"
#include "distributed/communication_error.h"
#include "lastlayer/proximal_solve.h"
#include "run/state_archive.h"
#include "run/trajectory_file.h"
#include "training/live_events.h"
#include "training/method_trainer.h"
#include "training/resume.h"

namespace liftlab {

namespace {

bool every(int step, int n) {
    return n > 0 && step % n == 0;
}

// The label under which a named feature set's spectrum is stored: "dfiv-prox/instrument", before
// any sweep suffix ("dfiv-prox/instrument@batch_size=16"); the method label for unnamed features.
std::string spectrum_label(const std::string& method, const std::string& features) {
    if (features.empty()) return method;
    const auto at = method.find('@');
    if (at == std::string::npos) return method + "/" + features;
    return method.substr(0, at) + "/" + features + method.substr(at);
}

// trajectories/<label>_seed<k>.pt (run/trajectory_file.h): the checkpoints from `from` on. The
// file is begun whole (through a temporary file and a rename) when `from` is 0 — a new method, a
// resumed or forked one — and otherwise the new checkpoints are appended as one record, so a log
// point costs its own checkpoints, not the whole trajectory again; a killed run keeps every
// checkpoint but those since the last log point (and at most a cut record the reader leaves out).
void write_trajectory(const RunStore& store, const std::string& label, std::uint64_t seed,
                      const std::vector<int64_t>& steps,
                      const std::map<std::string, std::vector<torch::Tensor>>& checkpoints,
                      size_t from) {
    const std::string dir = store.path(run_folder::kTrajectories);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw WriteError(dir, ec.message());
    const auto tail = [from](const auto& v) {
        return std::vector(v.begin() + static_cast<std::ptrdiff_t>(from), v.end());
    };
    const std::string path = trajectory_path(store.dir(), label, seed);
    const auto& theta = checkpoints.at("theta");
    const auto& lifted = checkpoints.at("lifted");
    if (from == 0)
        write_file_atomic(path, trajectory_bytes(steps, theta, lifted), /*durable=*/false);
    else
        append_file(path, trajectory_record_bytes(tail(steps), tail(theta), tail(lifted)));
}

}  // namespace

Probes make_probes(const ExperimentSpec& spec, const Dataset& data) {
    Probes p;
    const int64_t n = std::min<int64_t>(spec.diagnostics.probe_size, data.n_test());
    p.spectrum_x = data.x_test.narrow(0, 0, n);
    BatchSampler sampler(data.n_train(), spec.batch_size, /*seed=*/0x5eed);
    const auto idx = sampler.next().to(data.x_train.device());
    p.batch_x = data.x_train.index_select(0, idx);
    p.batch_y = data.y_train.index_select(0, idx);
    return p;
}

SeedRun::SeedRun(const ExperimentSpec& spec, const SeedUnit& where, const Dataset& data,
                 const Probes& probes, const RunOptions& options, RunReporter& reporter,
                 std::atomic<bool>& cancelled)
    : spec_(spec),
      where_(where),
      seed_(spec.seeds[where.seed_index]),
      data_(data),
      probes_(probes),
      options_(options),
      reporter_(reporter),
      cancelled_(cancelled) {
    update_.seed = seed_;
    update_.seed_index = where.seed_index;
    update_.num_seeds = where.num_seeds;
    update_.total_steps = spec.steps;
    update_.sweep_label = where.suffix;
}

void SeedRun::build_slots() {
    std::lock_guard<std::mutex> lock(trainer_construction_mutex());
    for (const auto& m : spec_.methods) {
        Slot s;
        s.trainer = make_trainer(spec_, m, data_, seed_);
        s.probe = dynamic_cast<FeatureProbe*>(s.trainer.get());
        s.head = dynamic_cast<LastLayerAccess*>(s.trainer.get());
        s.density = dynamic_cast<DensityDiagnostics*>(s.trainer.get());
        s.live = dynamic_cast<LiveSettings*>(s.trainer.get());
        s.label = m.label;
        if (s.live) s.spec_settings = s.live->live_settings();
        auto* parallel = dynamic_cast<DataParallel*>(s.trainer.get());
        if (options_.communicator &&
            !(parallel && parallel->attach_communicator(options_.communicator)))
            throw std::runtime_error(
                "data-parallel runs support the backbone + last-layer methods; '" + m.name +
                "' runs in one process only");
        s.summary.method = m.label + where_.suffix;
        s.summary.name = m.name;
        s.summary.sweep_value = where_.sweep_value;
        s.summary.seed = seed_;
        s.summary.batch_size = spec_.batch_size;
        s.summary.status = RunStatus::Running;
        if (spec_.diagnostics.checkpoint_every > 0) record_checkpoint(s, 0);
        if (resume_blocker_.empty()) {
            auto* r = dynamic_cast<Resumable*>(s.trainer.get());
            const std::string why = r ? r->resume_blocker() : "its trainer has no saved state";
            if (!why.empty()) resume_blocker_ = "method " + m.label + ": " + why;
        }
        slots_.push_back(std::move(s));
    }
}

// A fully frozen backbone is the same fixed map for every method of the unit (the same file, or
// the same seeded initialisation): its features of both splits are computed once, here, and
// every method's steps and evaluations read them.
void SeedRun::share_fixed_features() {
    std::shared_ptr<const FixedFeatures> shared;
    bool computed = false;
    for (auto& s : slots_) {
        auto* m = dynamic_cast<MethodTrainer*>(s.trainer.get());
        if (!m || !m->linear_probe()) continue;
        if (!computed) {
            shared = m->compute_fixed_features(options_.stop);
            computed = true;
        }
        if (shared) m->use_fixed_features(shared);
    }
}

void SeedRun::save_unit_state(int step, bool finished, const std::vector<MethodRunSummary>& runs,
                              bool keep_for_fork) {
    if (!spec_.save_state || options_.out_dir.empty()) return;
    last_state_save_ = std::chrono::steady_clock::now();
    auto a = std::make_shared<StateArchive>();
    a->put_int("unit", where_.unit);
    a->put_int("step", step);
    a->put_int("finished", finished ? 1 : 0);
    if (finished) {
        a->put_int("runs", static_cast<int64_t>(runs.size()));
        for (size_t i = 0; i < runs.size(); ++i)
            put_run_summary(*a, "run" + std::to_string(i) + ".", runs[i]);
    } else if (!resume_blocker_.empty()) {
        a->put_text("blocked", resume_blocker_);  // its start only: resumed from step 0
    } else {
        for (size_t i = 0; i < slots_.size(); ++i) {
            auto& s = slots_[i];
            const std::string p = "s" + std::to_string(i) + ".";
            put_run_summary(*a, p + "summary.", s.summary);  // status, final metrics so far
            a->put_int(p + "active", s.active ? 1 : 0);
            a->put_real(p + "loss_sum", s.loss_sum);
            a->put_int(p + "loss_count", s.loss_count);
            a->put_real(p + "first_loss", s.first_loss);
            a->put_int(p + "dwells_written", static_cast<int64_t>(s.dwells_written));
            a->put_int(p + "checkpoints", static_cast<int64_t>(s.checkpoint_steps.size()));
            if (s.active) dynamic_cast<Resumable&>(*s.trainer).save_state(*a, p + "t.");
        }
    }
    int seq;
    {
        std::lock_guard<std::mutex> lock(pending_state_->mutex);
        seq = ++pending_state_->seq;
        pending_state_->archive = a;
    }
    reporter_.write_state(where_.unit, [pending = pending_state_, seq, unit = where_.unit,
                                        fork_copy = keep_for_fork ? a : nullptr,
                                        step](const RunReporter::StateTarget& to) {
        std::lock_guard<std::mutex> lock(pending->mutex);
        // What the files of its rows hold now (the run's, or its own aside while an earlier
        // unit runs: "held"): every row up to this state, nothing after it.
        auto record = [&](StateArchive& state) {
            const auto sizes = to.rows.shared_sizes();
            state.put("sizes", torch::tensor(std::vector<int64_t>(sizes.begin(), sizes.end()),
                                             torch::kInt64));
            if (to.held) state.put_int("held", 1);
            if (const auto digest = to.run.spec_sha256(); !digest.empty())
                state.put_text("spec_sha256", digest);
        };
        if (fork_copy) {
            // Kept whatever later state replaces the resume one (a fork point).
            record(*fork_copy);
            const std::string dir = to.run.path(run_folder::kForkStates);
            std::error_code ec;
            std::filesystem::create_directories(dir, ec);
            if (ec) throw WriteError(dir, ec.message());
            write_file_atomic(fork_state_path(to.run.dir(), unit, step), fork_copy->serialize(),
                              /*durable=*/false);
        }
        if (pending->seq != seq || !pending->archive) return;  // a later state replaced it
        record(*pending->archive);
        write_file_atomic(unit_state_path(to.run.dir(), unit), pending->archive->serialize(),
                          /*durable=*/false);
        pending->archive.reset();
    });
}

void SeedRun::restore(const StateArchive& a, int step, const std::string& dir,
                      const std::string& file, bool fork) {
    for (size_t i = 0; i < slots_.size(); ++i) {
        auto& s = slots_[i];
        // A fork takes the parent's method of the same label, or its fork source (ForkPlan): its
        // slot may be elsewhere.
        size_t j = i;
        std::string label = s.summary.method;  // the source's, with the sweep suffix
        const MethodSpec* source = nullptr;
        if (fork) {
            const auto it = options_.fork->sources.find(s.label);
            if (it == options_.fork->sources.end())
                throw DataError(file, 0, "the fork plan has no source for method " + s.label);
            source = &it->second;
            label = source->label + where_.suffix;
            for (j = 0; a.has("s" + std::to_string(j) + ".summary.method"); ++j)
                if (a.text("s" + std::to_string(j) + ".summary.method") == label) break;
            if (!a.has("s" + std::to_string(j) + ".summary.method"))
                throw DataError(file, 0, "holds no state of method " + label);
        }
        const std::string p = "s" + std::to_string(j) + ".";
        const std::string name = s.summary.name;
        if (source && source->name != name) {
            start_from_other(s, *source, a, p, step, file);
            continue;
        }
        auto saved = get_run_summary(a, p + "summary.");
        if (fork) saved.method = s.summary.method;  // the same method under another label
        if (saved.method != s.summary.method || saved.seed != s.summary.seed)
            throw DataError(file, 0,
                            "holds method " + saved.method + ", seed " +
                                std::to_string(saved.seed) + " where the spec has " +
                                s.summary.method + ", seed " + std::to_string(s.summary.seed));
        s.summary = saved;
        s.active = a.integer(p + "active") != 0;
        s.loss_sum = a.real(p + "loss_sum");
        s.loss_count = static_cast<int>(a.integer(p + "loss_count"));
        s.first_loss = a.real(p + "first_loss");
        s.dwells_written = static_cast<size_t>(a.integer(p + "dwells_written"));
        if (s.active) {
            try {
                dynamic_cast<Resumable&>(*s.trainer).load_state(a, p + "t.");
            } catch (const std::exception& e) {
                if (!fork) throw;
                throw DataError(file, 0,
                                "method " + s.summary.method + " (" + name +
                                    ") cannot start from the parent's state: " + e.what());
            }
        }
        // The trajectory file holds at least the state's checkpoints (it is written first).
        const auto n = a.integer(p + "checkpoints");
        s.checkpoint_steps.clear();
        s.checkpoints.clear();
        s.checkpoints_written = 0;  // its own file is begun again with these at the next log point
        if (n > 0) {
            const std::string file = trajectory_path(dir, label, seed_);
            const TrajectoryRecord t = read_trajectory(file);  // bounded: no unpickler
            if (static_cast<int64_t>(t.steps.size()) < n)
                throw DataError(file, 0, "holds fewer checkpoints than the saved state");
            for (int64_t k = 0; k < n; ++k) {
                s.checkpoint_steps.push_back(t.steps[k]);
                s.checkpoints["theta"].push_back(t.theta[k].clone());
                s.checkpoints["lifted"].push_back(t.lifted[k].clone());
            }
        }
    }
    replay_settings(step);
}

void SeedRun::start_from_other(Slot& s, const MethodSpec& source, const StateArchive& a,
                               const std::string& p, int step, const std::string& file) {
    const auto saved = get_run_summary(a, p + "summary.");
    const std::string what = "method " + s.summary.method + " (" + s.summary.name + ")";
    if (saved.seed != s.summary.seed)
        throw DataError(file, 0,
                        "holds seed " + std::to_string(saved.seed) + " where the spec has " +
                            std::to_string(s.summary.seed));
    if (a.integer(p + "active") == 0)
        throw DataError(file, 0,
                        what + " cannot start from " + saved.method + ": it had stopped (" +
                            to_string(saved.status) + ") by step " + std::to_string(step));
    // The source as the parent trained it: built for this seed (the global generator as it was,
    // so that nothing drawn later changes) and restored to the fork step.
    std::unique_ptr<Trainer> from;
    {
        std::lock_guard<std::mutex> lock(trainer_construction_mutex());
        auto gen = at::detail::getDefaultCPUGenerator();
        torch::Tensor generator_state;
        {
            std::lock_guard<std::mutex> g(gen.mutex());
            generator_state = gen.get_state();
        }
        auto put_back = [&] {
            std::lock_guard<std::mutex> g(gen.mutex());
            gen.set_state(generator_state);
        };
        try {
            from = make_trainer(spec_, source, data_, seed_);
        } catch (...) {
            put_back();
            throw;
        }
        put_back();
    }
    try {
        dynamic_cast<Resumable&>(*from).load_state(a, p + "t.");
        auto* start = dynamic_cast<ForkStart*>(s.trainer.get());
        if (!start) throw std::invalid_argument("its trainer cannot start from another method");
        start->start_from_method(*from);
    } catch (const std::exception& e) {
        throw DataError(file, 0,
                        what + " cannot start from the parent's " + saved.method + " (" +
                            source.name + "): " + e.what());
    }
    s.transferred = true;
    s.active = true;
    s.summary.status = RunStatus::Running;
    s.summary.steps_done = step;
    s.summary.final_metrics.clear();
    s.loss_sum = a.real(p + "loss_sum");
    s.loss_count = static_cast<int>(a.integer(p + "loss_count"));
    s.first_loss = a.real(p + "first_loss");  // the divergence test's reference: the same loss
    s.dwells_written = 0;                     // its shoulder statistics start at the fork
    s.checkpoint_steps.clear();
    s.checkpoints.clear();
    s.checkpoints_written = 0;
    if (spec_.diagnostics.checkpoint_every > 0) record_checkpoint(s, step);
}

void SeedRun::replay_settings(int step) {
    for (auto& s : slots_) {
        if (!s.live || !s.active) continue;
        for (const auto& [key, value] : s.spec_settings) s.live->set_live_setting(key, value);
        for (const auto& e : spec_.events)
            if (e.step < step && e.method == s.label && e.method != "push")
                s.live->set_live_setting(e.key, e.value);
    }
}

bool SeedRun::has_event_at(int step) const {
    for (const auto& e : spec_.events)
        if (e.step == step) return true;
    return false;
}

void SeedRun::apply_events(int step, const std::vector<RunEvent>& live) {
    std::vector<RunEvent> now;
    for (const auto& e : spec_.events)
        if (e.step == step) now.push_back(e);
    now.insert(now.end(), live.begin(), live.end());
    std::vector<RunStore::EventRow> rows;
    for (const auto& e : now) {
        if (e.method == "push") {
            // The same coordinates for every method of this seed (and this step).
            const std::uint64_t draw = seed_ ^ 0x9054'0000ULL ^ static_cast<std::uint64_t>(step);
            for (auto& s : slots_) {
                if (!s.active) continue;
                auto* p = dynamic_cast<ShoulderPush*>(s.trainer.get());
                if (!p)
                    throw std::runtime_error("method " + s.summary.method +
                                             " cannot be pushed into the shoulder");
                const auto [before, after] = p->push_into_shoulder(e.key, e.value, e.depth, draw);
                rows.push_back({step, s.summary.method, seed_, "push." + e.key, before, after});
            }
            continue;
        }
        for (auto& s : slots_) {
            if (s.label != e.method || !s.active) continue;
            if (!s.live)
                throw std::runtime_error("method " + s.summary.method +
                                         " cannot change its settings while it trains");
            const auto now = s.live->live_settings();
            const auto it = now.find(e.key);
            if (it == now.end())
                throw std::runtime_error("method " + s.summary.method + " has no live setting '" +
                                         e.key + "'");
            s.live->set_live_setting(e.key, e.value);
            rows.push_back({step, s.summary.method, seed_, e.key, it->second, e.value});
            if (options_.live_events)
                options_.live_events->report_settings(s.label, s.live->live_settings());
        }
    }
    if (rows.empty()) return;
    if (options_.live_events) {
        std::vector<AppliedEvent> applied;
        for (const auto& r : rows)
            applied.push_back({r.step, r.method, r.seed, r.key, r.old_value, r.new_value});
        options_.live_events->applied(applied);
    }
    if (options_.out_dir.empty()) return;
    reporter_.write_ordered(
        where_.unit, [rows = std::move(rows)](RunStore& store) { store.append_events(rows); });
}

void SeedRun::run() {
    // However the unit ends, it takes no more live events (training/live_events.h).
    struct LiveUnitDone {
        LiveEvents* live;
        int unit;
        ~LiveUnitDone() {
            if (live) live->unit_done(unit);
        }
    } live_done{options_.live_events.get(), where_.unit};
    const UnitResumeState* resumed = options_.resume ? options_.resume->find(where_.unit) : nullptr;
    if (resumed && resumed->restart) resumed = nullptr;  // from its start, as if new
    if (resumed && resumed->finished) {
        // Done before the kill: its results stand as saved.
        reporter_.started(where_.unit,
                          {where_.seed_index, seed_, where_.suffix, spec_.steps, spec_.steps},
                          resumed->runs);
        reporter_.finished(where_.unit, resumed->runs);
        return;
    }
    // Long loops below (evaluation chunks, the spectrum, log Z, a flow fit) poll the run's stop
    // flag and throw Stopped (core/activity.h) — not in a data-parallel run, whose ranks must
    // stop at the same step (their collectives in the same order).
    const StopScope stop_scope(mid_phase_stop());
    const Activity activity("training seed " + std::to_string(seed_) +
                            (where_.suffix.empty() ? "" : " (" + where_.suffix + ")"));
    try {
        build_slots();  // may fit a flow proposal: stopped like any other phase
        share_fixed_features();
    } catch (const Stopped&) {
        cancelled_ = true;
        reporter_.finished(where_.unit, {});
        return;
    }
    int first_step = 1;
    if (resumed) {
        restore(*resumed->archive, resumed->step, options_.resume->dir,
                unit_state_path(options_.resume->dir, where_.unit), /*fork=*/false);
        first_step = resumed->step + 1;
        // The fixed features' one spectrum, if any, is in the folder already.
        const int first_spectrum = std::min(spec_.diagnostics.spectrum_every, spec_.steps);
        fixed_spectrum_logged_ = first_spectrum > 0 && resumed->step >= first_spectrum;
    } else if (options_.fork) {
        // A forked run: from the parent's state of this unit at the fork step.
        const auto& fork = *options_.fork;
        const auto it = fork.units.find(where_.unit);
        if (it == fork.units.end())
            throw DataError(fork.parent, 0,
                            "kept no state of unit " + std::to_string(where_.unit) + " at step " +
                                std::to_string(fork.step));
        restore(*it->second, fork.step, fork.parent,
                fork_state_path(fork.parent, where_.unit, fork.step), /*fork=*/true);
        first_step = fork.step + 1;
        const int first_spectrum = std::min(spec_.diagnostics.spectrum_every, spec_.steps);
        fixed_spectrum_logged_ = first_spectrum > 0 && fork.step >= first_spectrum;
    }
    if (options_.live_events)
        for (const auto& s : slots_)
            if (s.live) options_.live_events->report_settings(s.label, s.live->live_settings());
    std::vector<MethodRunSummary> starting;
    for (const auto& s : slots_) starting.push_back(s.summary);
    reporter_.started(where_.unit,
                      {where_.seed_index, seed_, where_.suffix, first_step - 1, spec_.steps},
                      std::move(starting));
    // A unit whose trainers keep no state is resumed from its start: a small marker says where
    // its rows begin. (Others need none: without a state of its own a unit starts afresh after
    // the last unit that saved one.)
    last_state_save_ = std::chrono::steady_clock::now();
    if (!resumed && !options_.fork && !resume_blocker_.empty()) save_unit_state(0, false);
    if (!resumed && !options_.fork && spec_.log_initial && !log_initial_metrics()) {
        cancelled_ = true;
        finish();
        return;
    }
    // A method a fork started from another method: its metrics at the fork step, to set beside
    // the source's there (the same model: the same numbers, docs/cli.md "Forks").
    bool transferred = false;
    for (const auto& s : slots_) transferred = transferred || s.transferred;
    if (transferred && !log_initial_metrics(first_step - 1, /*transferred_only=*/true)) {
        cancelled_ = true;
        finish();
        return;
    }
    // Methods on several threads: between two sync steps every method trains on its own (see
    // train_chunk).
    groups_ = std::min<int>(where_.method_threads, static_cast<int>(slots_.size()));
    caller_threads_ = torch::get_num_threads();
    if (groups_ > 1) set_compute_threads(1);
    for (int step = first_step; step <= spec_.steps; ++step) {
        int last = step;
        if (options_.live_events) {
            // Events sent in while the run trains get their step here (training/live_events.h).
            const auto live = options_.live_events->at_boundary(
                where_.unit, step - 1, [&](const std::function<bool(int)>& live_event_at) {
                    if (groups_ > 1) last = next_sync_step(step, live_event_at);
                    return last;
                });
            apply_events(step - 1, live);  // an event at step N acts on steps N+1…
        } else {
            apply_events(step - 1);
            if (groups_ > 1) last = next_sync_step(step);
        }
        if (!train_steps(step, last)) {
            cancelled_ = true;
            break;
        }
        step = last;
        if (!observe(step)) break;
    }
    finish();
}

void SeedRun::finish_slot(Slot& s, RunStatus status, int step, const std::string& reason) {
    s.active = false;
    s.summary.status = status;
    s.summary.steps_done = step;
    s.summary.reason = reason;
    update_.statuses.push_back({s.summary.method, seed_, status, step, reason});
}

SeedRun::Ending SeedRun::train_slot(Slot& s, int step) {
    double loss;
    try {
        loss = s.trainer->step();
    } catch (const Stopped&) {
        return std::nullopt;  // a stop inside the step (a flow refit): the run stops next
    } catch (const CommunicationError&) {
        throw;  // every rank must stop, not just this method
    } catch (const std::exception& e) {
        return std::make_pair(RunStatus::Failed, failure_text("the training step", e));
    }
    if (s.first_loss < 0 && std::isfinite(loss)) s.first_loss = std::max(loss, 1e-12);
    if (!std::isfinite(loss) || (s.first_loss > 0 && loss > spec_.divergence_factor * s.first_loss))
        return std::make_pair(RunStatus::Diverged, "training loss " + c_shortest(loss) +
                                                       " at step " + std::to_string(step));
    s.loss_sum += loss;
    ++s.loss_count;
    return std::nullopt;
}

const std::atomic<bool>* SeedRun::mid_phase_stop() const {
    return options_.communicator ? nullptr : options_.stop;
}

bool SeedRun::stop_requested() const {
    return (options_.stop && options_.stop->load()) || cancelled_.load();
}

bool SeedRun::train_steps(int first, int last) {
    if (groups_ > 1) return train_chunk(first, last);
    if (options_.before_step) options_.before_step();
    if (stop_requested()) return false;
    for (auto& s : slots_) {
        if (!s.active) continue;
        if (const auto ending = train_slot(s, first))
            finish_slot(s, ending->first, first, ending->second);
    }
    return true;
}

int SeedRun::next_sync_step(int step, const std::function<bool(int)>& live_event_at) const {
    // The next step at which every method is looked at (log, diagnostics, checkpoint).
    const auto& d = spec_.diagnostics;
    for (;; ++step)
        if (step % spec_.log_every == 0 || step == spec_.steps || every(step, d.spectrum_every) ||
            every(step, d.one_step_every) || every(step, d.checkpoint_every) ||
            has_event_at(step) || (live_event_at && live_event_at(step)))
            return step;
}

// Between two sync steps every method trains on its own (they share nothing but the read-only
// data), shared out by balance_methods, each thread single-threaded; statuses are applied
// afterwards in method order, so everything the runner records is what the one-thread run
// records.
// Methods → `groups` threads, longest first to the least loaded (by each method's step time so
// far; before any is measured, round robin). Which thread runs a method never changes its
// results: every thread is single-threaded.
std::vector<std::vector<size_t>> SeedRun::balance_methods() const {
    std::vector<size_t> order(slots_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    // The index tie-break keeps the unmeasured first chunk round robin.
    auto cost = [&](size_t i) {
        return slots_[i].trainer->step_seconds() + 1e-9 * static_cast<double>(order.size() - i);
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return cost(a) > cost(b); });
    std::vector<std::vector<size_t>> out(groups_);
    std::vector<double> load(groups_, 0.0);
    for (size_t i : order) {
        const auto g =
            static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
        out[g].push_back(i);
        load[g] += cost(i);
    }
    return out;
}

bool SeedRun::train_chunk(int first, int last) {
    const auto assignment = balance_methods();
    std::vector<Ending> ended(slots_.size());
    std::vector<int> ended_at(slots_.size(), 0);
    std::atomic<bool> stopped{false};
    auto run_group = [&](int g) {
        for (int t = first; t <= last && !stopped; ++t) {
            if (options_.before_step) options_.before_step();
            if (stop_requested()) {
                stopped = true;
                break;
            }
            for (size_t i : assignment[g]) {
                if (!slots_[i].active || ended[i]) continue;
                if ((ended[i] = train_slot(slots_[i], t))) ended_at[i] = t;
            }
        }
    };
    std::vector<std::thread> pool;
    for (int g = 1; g < groups_; ++g)
        pool.emplace_back([&, g] {
            torch::set_num_threads(1);
            const StopScope stop_scope(mid_phase_stop());
            run_group(g);
        });
    run_group(0);
    for (auto& t : pool) t.join();
    for (size_t i = 0; i < slots_.size(); ++i)
        if (ended[i]) finish_slot(slots_[i], ended[i]->first, ended_at[i], ended[i]->second);
    return !stopped.load();
}

bool SeedRun::observe(int step) {
    const auto& d = spec_.diagnostics;
    const bool last = step == spec_.steps;
    const bool log_now = step % spec_.log_every == 0 || last;
    const bool spectrum_now = every(step, d.spectrum_every) || (last && d.spectrum_every > 0);
    const bool gain_now = every(step, d.one_step_every);
    if (every(step, d.checkpoint_every) || (last && d.checkpoint_every > 0))
        for (auto& s : slots_)
            if (s.active) record_checkpoint(s, step);
    if (!log_now && !spectrum_now && !gain_now) {
        // A divergence is reported at once, not at the next log point.
        if (update_.statuses.empty()) return true;
        update_.step = step;
        const bool go_on = reporter_.report(where_.unit, update_);
        update_.statuses.clear();
        return go_on;
    }
    // A stop during the log point (a long evaluation, log Z, the spectrum) drops it whole: its
    // rows are not written and the final metrics stay those of the previous log point.
    std::vector<std::map<std::string, double>> finals;
    for (const auto& s : slots_) finals.push_back(s.summary.final_metrics);
    try {
        const Activity activity("the log point at step " + std::to_string(step) +
                                " (test metrics and diagnostics)");
        for (auto& s : slots_) {
            if (!s.active) continue;
            if (log_now && !log_metrics(s, step)) continue;
            log_diagnostics(s, step, spectrum_now, gain_now);
        }
        if (last) log_final_diagnostics(step);
    } catch (const Stopped&) {
        for (size_t i = 0; i < slots_.size(); ++i) slots_[i].summary.final_metrics = finals[i];
        update_.points.clear();
        update_.spectra.clear();
        update_.traces.clear();
        cancelled_ = true;
        return false;
    }
    if (spectrum_now && !fixed_spectrum_logged_) log_fixed_spectrum(step);
    update_.step = step;
    // ICNN checkpoints and dwells go to disk before this log point's rows, so a kill between
    // the two never leaves metrics ahead of the trajectory by more than one log interval.
    if (log_now && !options_.out_dir.empty())
        for (auto& s : slots_) persist_slot(s);
    const bool go_on = reporter_.report(where_.unit, update_);
    update_.points.clear();
    update_.spectra.clear();
    update_.traces.clear();
    update_.statuses.clear();
    if (log_now && !options_.out_dir.empty()) {
        // After this log point's rows, at most every save_state_seconds (the finished state
        // follows the last step anyway); a unit that cannot be resumed mid-way saves none.
        // Every fork_state_every-th log point the state is kept too (a fork point).
        const auto now = std::chrono::steady_clock::now();
        const bool fork_point = spec_.fork_state_every > 0 && !last &&
                                step % (spec_.log_every * spec_.fork_state_every) == 0;
        if (resume_blocker_.empty() && !last &&
            (fork_point || std::chrono::duration<double>(now - last_state_save_).count() >=
                               spec_.save_state_seconds))
            save_unit_state(step, false, {}, fork_point);
    }
    return go_on;
}

void SeedRun::emit(Slot& s, int step, const std::string& metric, double value) {
    s.summary.final_metrics[metric] = value;
    update_.points.push_back({step, s.summary.method, seed_, metric, value});
}

bool SeedRun::log_metrics(Slot& s, int step) {
    if (!s.trainer->parameters_finite()) {
        finish_slot(s, RunStatus::Diverged, step, "non-finite parameters");
        return false;
    }
    const auto test = s.trainer->evaluate_test();
    if (!std::isfinite(test.at("test_loss"))) {
        finish_slot(s, RunStatus::Diverged, step, "non-finite test loss");
        return false;
    }
    emit(s, step, "train_loss", s.loss_count ? s.loss_sum / s.loss_count : NAN);
    s.loss_sum = 0;
    s.loss_count = 0;
    for (const auto& [k, v] : test) emit(s, step, k, v);
    if (spec_.diagnostics.train_set_loss)
        emit(s, step, "train_set_loss", s.trainer->train_set_loss());
    emit(s, step, "time_s", s.trainer->step_seconds());
    if (s.density)
        for (const auto& t : s.density->drain_traces())
            update_.traces.push_back({t.step, s.summary.method, seed_, t.coordinate, t.value});
    if (s.trainer->closed_form())
        emit(s, step, "solve_fraction",
             s.trainer->solve_seconds() / std::max(1e-12, s.trainer->step_seconds()));
    s.summary.steps_done = step;
    return true;
}

void SeedRun::log_fixed_spectrum(int step) {
    // A fully frozen backbone: every method of this unit sees the same fixed features (same
    // file or same seeded initialisation, evaluation mode), so their spectrum is computed once,
    // at the first spectrum point, and stored once under kFrozenSpectrumLabel; each method gets
    // its κ and effective rank at that step.
    fixed_spectrum_logged_ = true;
    SpectrumSummary sp;
    bool found = false;
    for (auto& s : slots_) {
        if (!s.active || !s.probe || !s.probe->fixed_features()) continue;
        if (!found) {
            try {
                sp = feature_spectrum(s.probe->probe_features(probes_.spectrum_x).front().features);
            } catch (const std::exception&) {
                return;  // a diagnostic that cannot be computed does not stop training
            }
            found = true;
            update_.spectra.push_back(
                {step, kFrozenSpectrumLabel + where_.suffix, seed_, sp.singular_values});
        }
        emit(s, step, "kappa", sp.kappa);
        emit(s, step, "eff_rank", sp.effective_rank);
    }
}

bool SeedRun::log_initial_metrics(int step, bool transferred_only) {
    for (auto& s : slots_) {
        if (!s.active || (transferred_only && !s.transferred)) continue;
        // A method whose test metrics need a first step (nothing fitted yet) has no step-0
        // point; it is not a failure of the run.
        std::map<std::string, double> test;
        try {
            test = s.trainer->evaluate_test();
        } catch (const std::exception&) {
            continue;
        }
        if (!std::isfinite(test.count("test_loss") ? test.at("test_loss") : NAN)) continue;
        for (const auto& [k, v] : test) emit(s, step, k, v);
        if (spec_.diagnostics.train_set_loss)
            emit(s, step, "train_set_loss", s.trainer->train_set_loss());
    }
    update_.step = step;
    const bool go_on = reporter_.report(where_.unit, update_);
    update_.points.clear();
    update_.traces.clear();
    return go_on && !stop_requested();
}

void SeedRun::log_diagnostics(Slot& s, int step, bool spectrum_now, bool gain_now) {
    try {
        if (spectrum_now && s.probe && !s.probe->fixed_features())
            for (const auto& f : s.probe->probe_features(probes_.spectrum_x)) {
                std::ostringstream what;
                what << "the feature spectrum of " << s.summary.method << " (" << f.features.size(0)
                     << " × " << (f.features.dim() > 1 ? f.features.size(-1) : 1) << " features)";
                const Activity activity(what.str());
                const auto sp = feature_spectrum(spectrum_rows(f.features), [this] {
                    return mid_phase_stop() && stop_requested();
                });
                const std::string tag = f.name.empty() ? "" : "_" + f.name;
                emit(s, step, "kappa" + tag, sp.kappa);
                emit(s, step, "eff_rank" + tag, sp.effective_rank);
                update_.spectra.push_back(
                    {step, spectrum_label(s.summary.method, f.name), seed_, sp.singular_values});
            }
        if (gain_now && s.head) {
            // From the method's current W, with its own λ (a tiny ridge for gradient heads so
            // that the problem is well posed).
            const auto phi = with_bias_column(s.head->flat_features(probes_.batch_x));
            const double lam = std::max(s.head->regulariser(), 1e-6);
            const auto g =
                one_step_gain(phi, flatten_rows(probes_.batch_y), s.head->last_layer(), lam);
            emit(s, step, "one_step_gain", g.gain);
            emit(s, step, "one_step_kappa", g.kappa);
        }
    } catch (const Stopped&) {
        throw;  // observe drops the log point
    } catch (const std::exception&) {
        // A diagnostic that cannot be computed does not stop training.
    }
}

void SeedRun::log_final_diagnostics(int step) {
    // The problem's known values (the Bayes ceiling) beside each method's final metrics.
    for (auto& s : slots_)
        if (s.active)
            for (const auto& [k, v] : data_.reference) s.summary.final_metrics[k] = v;
    // Diagnostics of the final iterate (σ²_Jac, dwell statistics).
    for (auto& s : slots_) {
        if (!s.active || !s.density) continue;
        try {
            for (const auto& [k, v] : s.density->final_diagnostics()) {
                s.summary.final_metrics[k] = v;
                update_.points.push_back({step, s.summary.method, seed_, k, v});
            }
        } catch (const Stopped&) {
            throw;  // observe drops the log point
        } catch (const std::exception&) {
            // A diagnostic that cannot be computed does not fail the run.
        }
    }
}

void SeedRun::record_checkpoint(Slot& s, int step) {
    if (!s.density) return;
    auto c = s.density->checkpoint();
    if (c.empty()) return;
    s.checkpoint_steps.push_back(step);
    for (auto& [space, v] : c) s.checkpoints[space].push_back(v.detach().clone());
}

std::vector<int64_t> SeedRun::take_new_dwells(Slot& s) {
    if (!s.density) return {};
    const auto dwells = s.density->dwell_times();
    if (dwells.size() <= s.dwells_written) return {};
    std::vector<int64_t> out(dwells.begin() + static_cast<std::ptrdiff_t>(s.dwells_written),
                             dwells.end());
    s.dwells_written = dwells.size();
    return out;
}

// Own file per method and seed: written at once; dwells.csv is shared: in unit order.
void SeedRun::persist_slot(Slot& s) {
    reporter_.write_now([&s](RunStore& store) {
        if (s.checkpoint_steps.size() <= s.checkpoints_written) return;
        write_trajectory(store, s.summary.method, s.summary.seed, s.checkpoint_steps, s.checkpoints,
                         s.checkpoints_written);
        s.checkpoints_written = s.checkpoint_steps.size();
    });
    reporter_.write_ordered(where_.unit, [label = s.summary.method, seed = seed_,
                                          dwells = take_new_dwells(s)](RunStore& store) {
        if (!dwells.empty()) store.append_dwells(label, seed, dwells);
    });
}

// models/<label>_seed<k>.pt: the trained model as TorchScript, for a method that trained to the
// end or was stopped by the user (not a diverged or failed one).
void SeedRun::export_slot(Slot& s) {
    auto* exporter = dynamic_cast<ModelExport*>(s.trainer.get());
    const bool trained =
        s.summary.status == RunStatus::Ok || s.summary.status == RunStatus::Cancelled;
    if (!spec_.export_models || !exporter || !trained || s.summary.steps_done == 0) return;
    const std::string file = std::string(run_folder::kModels) + "/" +
                             to_safe_path_component(s.summary.method) + "_seed" +
                             std::to_string(seed_) + ".pt";
    reporter_.write_now([&](RunStore& store) {
        try {
            if (exporter->export_model(store.path(file))) s.summary.model = file;
        } catch (const WriteError&) {
            throw;  // a failed write is a failed run
        } catch (const std::exception& e) {
            // The run's numbers are recorded; a model that cannot be exported does not undo them.
            s.summary.model_error = error_message(e);
        }
    });
}

void SeedRun::finish() {
    std::vector<MethodRunSummary> runs;
    for (auto& s : slots_) {
        if (s.active) {
            s.summary.status = cancelled_ ? RunStatus::Cancelled : RunStatus::Ok;
            update_.statuses.push_back(
                {s.summary.method, seed_, s.summary.status, s.summary.steps_done, ""});
        }
        if (!options_.out_dir.empty()) export_slot(s);
        runs.push_back(s.summary);
        if (!options_.out_dir.empty()) persist_slot(s);
    }
    if (groups_ > 1) set_compute_threads(caller_threads_);
    if (!update_.statuses.empty()) reporter_.report_statuses(where_.unit, update_);
    if (!cancelled_) save_unit_state(spec_.steps, true, runs);
    reporter_.finished(where_.unit, std::move(runs));
}

}  // namespace liftlab
