#include "training/runner.h"

#include <torch/torch.h>

#include <cmath>
#include <memory>
#include <optional>

#include "core/version.h"
#include "data/dataset.h"
#include "run/run_store.h"
#include "training/method_trainer.h"

namespace liftlab {

namespace {

struct Slot {
    std::unique_ptr<MethodTrainer> trainer;
    MethodRunSummary summary;
    bool active = true;
    double loss_sum = 0;  // batch losses since the last log point
    int loss_count = 0;
    double first_loss = -1;
};

nlohmann::json summary_json(const std::string& status, const std::vector<MethodRunSummary>& runs) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& r : runs) {
        nlohmann::json fin = nlohmann::json::object();
        for (const auto& [k, v] : r.final_metrics)
            fin[k] = std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
        nlohmann::json e = {{"method", r.method},     {"name", r.name},
                            {"seed", r.seed},         {"batch_size", r.batch_size},
                            {"status", r.status},     {"steps_done", r.steps_done},
                            {"final", fin}};
        if (!r.reason.empty()) e["reason"] = r.reason;
        arr.push_back(e);
    }
    return {{"status", status}, {"runs", arr}};
}

}  // namespace

RunResult run_experiment(const ExperimentSpec& spec, const RunOptions& options,
                         const ProgressCallback& on_progress) {
    torch::set_num_threads(spec.threads);
    const Dataset data = make_dataset(spec.task);

    std::optional<RunStore> store;
    RunResult result;
    if (!options.out_dir.empty()) {
        store.emplace(RunStore::create(options.out_dir, spec.name));
        result.run_dir = store->dir();
        nlohmann::json resolved = to_json(spec);
        resolved["versions"] = version_info();
        resolved["data"] = {{"n_train", data.n_train()},
                            {"n_test", data.x_test.size(0)},
                            {"input_dim", data.input_dim()},
                            {"output_dim", data.output_dim()}};
        store->write_json("spec.json", resolved);
        store->write_json("summary.json", summary_json("running", {}));
    }

    bool cancelled = false;
    const int num_seeds = static_cast<int>(spec.seeds.size());
    for (int si = 0; si < num_seeds && !cancelled; ++si) {
        const std::uint64_t seed = spec.seeds[si];
        std::vector<Slot> slots;
        for (const auto& m : spec.methods) {
            Slot s;
            s.trainer = std::make_unique<MethodTrainer>(spec, m, data, seed);
            s.summary.method = m.label;
            s.summary.name = m.name;
            s.summary.seed = seed;
            s.summary.batch_size = spec.batch_size;
            s.summary.status = "running";
            slots.push_back(std::move(s));
        }

        ProgressUpdate update;
        update.seed = seed;
        update.seed_index = si;
        update.num_seeds = num_seeds;
        update.total_steps = spec.steps;

        auto finish_slot = [&](Slot& s, const std::string& status, int step,
                               const std::string& reason) {
            s.active = false;
            s.summary.status = status;
            s.summary.steps_done = step;
            s.summary.reason = reason;
            update.statuses.push_back({s.summary.method, seed, status, step, reason});
        };

        for (int step = 1; step <= spec.steps; ++step) {
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
                if (s.first_loss < 0 && std::isfinite(loss)) s.first_loss = std::max(loss, 1e-12);
                if (!std::isfinite(loss) || (s.first_loss > 0 && loss > spec.divergence_factor * s.first_loss)) {
                    finish_slot(s, "diverged", step,
                                "training loss " + std::to_string(loss) + " at step " +
                                    std::to_string(step));
                    continue;
                }
                s.loss_sum += loss;
                ++s.loss_count;
            }

            const bool log_now = step % spec.log_every == 0 || step == spec.steps;
            if (!log_now) continue;
            for (auto& s : slots) {
                if (!s.active) continue;
                if (!s.trainer->parameters_finite()) {
                    finish_slot(s, "diverged", step, "non-finite parameters");
                    continue;
                }
                const double train = s.loss_count ? s.loss_sum / s.loss_count : NAN;
                const double test = s.trainer->evaluate(data.x_test, data.y_test);
                s.loss_sum = 0;
                s.loss_count = 0;
                if (!std::isfinite(test)) {
                    finish_slot(s, "diverged", step, "non-finite test loss");
                    continue;
                }
                auto& fm = s.summary.final_metrics;
                fm["train_loss"] = train;
                fm["test_loss"] = test;
                fm["time_s"] = s.trainer->step_seconds();
                s.summary.steps_done = step;
                const std::string& label = s.summary.method;
                update.points.push_back({step, label, seed, "train_loss", train});
                update.points.push_back({step, label, seed, "test_loss", test});
                update.points.push_back({step, label, seed, "time_s", fm["time_s"]});
                if (s.trainer->closed_form()) {
                    const double frac =
                        s.trainer->solve_seconds() / std::max(1e-12, s.trainer->step_seconds());
                    fm["solve_fraction"] = frac;
                    update.points.push_back({step, label, seed, "solve_fraction", frac});
                }
            }
            update.step = step;
            update.fraction = (si * static_cast<double>(spec.steps) + step) /
                              (static_cast<double>(num_seeds) * spec.steps);
            if (store) store->append_metrics(update.points);
            if (on_progress && !on_progress(update)) cancelled = true;
            update.points.clear();
            update.statuses.clear();
            if (cancelled) break;
        }

        for (auto& s : slots) {
            if (s.active) {
                s.summary.status = cancelled ? "cancelled" : "ok";
                update.statuses.push_back({s.summary.method, seed, s.summary.status,
                                           s.summary.steps_done, ""});
            }
            result.runs.push_back(s.summary);
        }
        if (on_progress && !update.statuses.empty()) on_progress(update);
        if (store)
            store->write_json("summary.json",
                              summary_json(cancelled ? "cancelled" : "running", result.runs));
    }

    bool any_ok = false;
    for (const auto& r : result.runs) any_ok = any_ok || r.status == "ok" || r.status == "cancelled";
    result.status = cancelled ? "cancelled" : (any_ok ? "ok" : "diverged");
    if (store) store->write_json("summary.json", summary_json(result.status, result.runs));
    return result;
}

}  // namespace liftlab
