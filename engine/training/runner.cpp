#include "training/runner.h"

#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "core/version.h"
#include "data/batch_sampler.h"
#include "data/dataset.h"
#include "diagnostics/feature_spectrum.h"
#include "diagnostics/one_step_gain.h"
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
};

void record_checkpoint(Slot& s, int step) {
    auto c = s.trainer->checkpoint();
    if (c.empty()) return;
    s.checkpoint_steps.push_back(step);
    for (auto& [space, v] : c) s.checkpoints[space].push_back(v.detach().clone());
}

// trajectories/<label>_seed<k>.pt: torch::save of {steps (T, int64), theta (T × P), lifted
// (T × Q)}; written through a temporary file and a rename.
void write_trajectory(const RunStore& store, const Slot& s) {
    if (s.checkpoint_steps.empty()) return;
    const std::string dir = store.path("trajectories");
    std::filesystem::create_directories(dir);
    const std::string file =
        dir + "/" + s.summary.method + "_seed" + std::to_string(s.summary.seed) + ".pt";
    std::vector<torch::Tensor> tensors = {
        torch::tensor(s.checkpoint_steps, torch::kInt64),
        torch::stack(s.checkpoints.at("theta")),
        torch::stack(s.checkpoints.at("lifted")),
    };
    torch::save(tensors, file + ".tmp");
    std::filesystem::rename(file + ".tmp", file);
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

nlohmann::json summary_json(const std::string& status, const std::vector<MethodRunSummary>& runs) {
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
    return {{"status", status}, {"runs", arr}};
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

}  // namespace

RunResult run_experiment(const ExperimentSpec& top_spec, const RunOptions& options,
                         const ProgressCallback& on_progress) {
    torch::set_num_threads(top_spec.threads);
    const auto sub_specs = expand_sweep(top_spec);

    std::optional<RunStore> store;
    RunResult result;
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
    };
    try {
        load_data(sub_specs.front().second);  // bad data fails before a run folder exists
    } catch (const DataCancelled&) {
        result.status = "cancelled";
        return result;
    }

    if (!options.out_dir.empty()) {
        store.emplace(RunStore::create(options.out_dir, top_spec.name));
        result.run_dir = store->dir();
        nlohmann::json resolved = to_json(top_spec);
        resolved["versions"] = version_info();
        resolved["data"] = {{"n_train", data->n_train()},
                            {"n_test", data->n_test()},
                            {"output_dim", data->output_dim()},
                            {"num_classes", data->num_classes}};
        store->write_json("spec.json", resolved);
        store->write_json("summary.json", summary_json("running", {}));
    }

    bool cancelled = false;
    const int num_seeds = static_cast<int>(top_spec.seeds.size());
    const int num_sub = static_cast<int>(sub_specs.size());
    const double total_units = static_cast<double>(num_sub) * num_seeds * top_spec.steps;
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

        for (int si = 0; si < num_seeds && !cancelled; ++si) {
            const std::uint64_t seed = spec.seeds[si];
            std::vector<Slot> slots;
            for (const auto& m : spec.methods) {
                Slot s;
                s.trainer = make_trainer(spec, m, *data, seed);
                s.summary.method = m.label + suffix;
                s.summary.name = m.name;
                s.summary.sweep_value = sweep_value;
                s.summary.seed = seed;
                s.summary.batch_size = spec.batch_size;
                s.summary.status = "running";
                if (spec.diagnostics.checkpoint_every > 0) record_checkpoint(s, 0);
                slots.push_back(std::move(s));
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

            for (int step = 1; step <= spec.steps; ++step) {
                if (options.before_step) options.before_step();
                if (options.stop && options.stop->load()) {
                    cancelled = true;
                    break;
                }
                for (auto& s : slots) {
                    if (!s.active) continue;
                    double loss;
                    try {
                        loss = s.trainer->step();
                    } catch (const std::exception& e) {
                        finish_slot(s, "failed", step, e.what());
                        continue;
                    }
                    if (s.first_loss < 0 && std::isfinite(loss))
                        s.first_loss = std::max(loss, 1e-12);
                    if (!std::isfinite(loss) ||
                        (s.first_loss > 0 && loss > spec.divergence_factor * s.first_loss)) {
                        finish_slot(s, "diverged", step,
                                    "training loss " + std::to_string(loss) + " at step " +
                                        std::to_string(step));
                        continue;
                    }
                    s.loss_sum += loss;
                    ++s.loss_count;
                }

                const bool log_now = step % spec.log_every == 0 || step == spec.steps;
                const bool spectrum_now =
                    every(step, spec.diagnostics.spectrum_every) ||
                    (step == spec.steps && spec.diagnostics.spectrum_every > 0);
                const bool gain_now = every(step, spec.diagnostics.one_step_every);
                if (every(step, spec.diagnostics.checkpoint_every) ||
                    (step == spec.steps && spec.diagnostics.checkpoint_every > 0))
                    for (auto& s : slots)
                        if (s.active) record_checkpoint(s, step);
                if (!log_now && !spectrum_now && !gain_now) {
                    // A divergence is reported at once, not at the next log point.
                    if (!update.statuses.empty() && on_progress) {
                        update.step = step;
                        if (!on_progress(update)) cancelled = true;
                        update.statuses.clear();
                        if (cancelled) break;
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
                            emit("solve_fraction", s.trainer->solve_seconds() /
                                                       std::max(1e-12, s.trainer->step_seconds()));
                        s.summary.steps_done = step;
                    }
                    try {
                        const bool has_head = s.trainer->last_layer().defined();
                        if (spectrum_now && has_head) {
                            const auto sp =
                                feature_spectrum(s.trainer->flat_features(probes.spectrum_x));
                            emit("kappa", sp.kappa);
                            emit("eff_rank", sp.effective_rank);
                            update.spectra.push_back({step, label, seed, sp.singular_values});
                        }
                        if (gain_now && has_head) {
                            // From the method's current W, with its own λ (a tiny ridge for
                            // gradient heads so that the problem is well posed).
                            const auto phi =
                                with_bias_column(s.trainer->flat_features(probes.batch_x));
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
                update.fraction =
                    ((vi * num_seeds + si) * static_cast<double>(spec.steps) + step) / total_units;
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
                if (store) {
                    store->append_metrics(update.points);
                    store->append_spectra(update.spectra);
                    store->append_traces(update.traces);
                }
                if (on_progress && !on_progress(update)) cancelled = true;
                update.points.clear();
                update.spectra.clear();
                update.traces.clear();
                update.statuses.clear();
                if (cancelled) break;
            }

            for (auto& s : slots) {
                if (s.active) {
                    s.summary.status = cancelled ? "cancelled" : "ok";
                    update.statuses.push_back(
                        {s.summary.method, seed, s.summary.status, s.summary.steps_done, ""});
                }
                result.runs.push_back(s.summary);
                if (store) {
                    write_trajectory(*store, s);
                    store->append_dwells(s.summary.method, seed, s.trainer->dwell_times());
                }
            }
            if (on_progress && !update.statuses.empty()) on_progress(update);
            if (store)
                store->write_json("summary.json",
                                  summary_json(cancelled ? "cancelled" : "running", result.runs));
        }
    }

    bool any_ok = false;
    for (const auto& r : result.runs)
        any_ok = any_ok || r.status == "ok" || r.status == "cancelled";
    result.status = cancelled ? "cancelled" : (any_ok ? "ok" : "diverged");
    if (store) store->write_json("summary.json", summary_json(result.status, result.runs));
    return result;
}

}  // namespace liftlab
