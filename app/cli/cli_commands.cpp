#include "cli_commands.h"

#include <QApplication>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "core/c_numbers.h"
#include "core/error_text.h"
#include "core/errors.h"
#include "distributed/communication_error.h"
#include "interrupt.h"
#include "methods/method_registry.h"
#include "progress_printer.h"
#include "report.h"
#include "spec/experiment_spec.h"
#include "spec/presets.h"
#include "training/resume.h"
#include "training/runner.h"

namespace liftlab::cli {

namespace {

bool valid_format(const std::string& f) {
    return f == "png" || f == "svg" || f == "pdf";
}

}  // namespace

int command_list() {
    size_t width = 0;
    for (const auto& p : builtin_presets()) width = std::max(width, p.name.size());
    for (const auto& p : builtin_presets())
        std::printf("%-*s  %s\n", static_cast<int>(width), p.name.c_str(), p.description.c_str());
    // The registry's methods and task kinds, for --set methods.N.name=… and task.kind=….
    size_t name_width = 0;
    for (const auto& m : method_registry()) name_width = std::max(name_width, m.name.size());
    for (const auto& t : task_kind_registry()) name_width = std::max(name_width, t.name.size());
    std::printf("\nMethods (name, family, parameters: documentation):\n");
    for (const auto& m : method_registry()) {
        std::string params;
        for (const auto& key : m.parameters) {
            const auto* p = find_method_parameter(key);
            params += (params.empty() ? "" : ", ") + key + "=" +
                      c_general(p ? method_default(m, *p) : 0.0, 6);
        }
        std::printf("  %-*s  %-11s  %s: %s\n", static_cast<int>(name_width), m.name.c_str(),
                    to_string(m.family), params.c_str(), m.doc.c_str());
    }
    std::printf("\nTask kinds (name, family: documentation):\n");
    for (const auto& t : task_kind_registry())
        std::printf("  %-*s  %s: %s\n", static_cast<int>(name_width), t.name.c_str(),
                    to_string(t.family), t.doc.c_str());
    return 0;
}

int command_report(const std::string& run_dir, const std::string& format) {
    if (!valid_format(format)) {
        std::fprintf(stderr, "liftlab-cli: --format must be png, svg or pdf (got '%s')\n",
                     format.c_str());
        return 2;
    }
    try {
        int figures = 0;
        std::vector<std::string> notes;
        for (const auto& path : render_report(run_dir, format, &notes)) {
            std::printf("%s\n", path.c_str());
            figures += path.find("/summary.") == std::string::npos ? 1 : 0;
        }
        for (const auto& note : notes)
            std::fprintf(stderr, "liftlab-cli: note: %s\n", note.c_str());
        if (figures == 0)
            std::fprintf(stderr,
                         "liftlab-cli: %s has no metrics yet (stopped before its first log "
                         "point): nothing to plot, only the summary table\n",
                         run_dir.c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "liftlab-cli: %s\n", error_message(e).c_str());
        return 2;
    }
    return 0;
}

int command_run(const RunArgs& args) {
    if (!valid_format(args.figure_format)) {
        std::fprintf(stderr, "liftlab-cli: --format must be png, svg or pdf\n");
        return 2;
    }
    ExperimentSpec spec;
    RunOptions options;
    if (!args.resume_dir.empty()) {
        try {
            spec = resumable_spec(args.resume_dir);
            options.resume = prepare_resume(args.resume_dir, spec);
        } catch (const WriteError& e) {
            std::fprintf(stderr, "liftlab-cli: %s\n", error_message(e).c_str());
            return 3;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "liftlab-cli: %s\n", error_message(e).c_str());
            return 2;
        }
        int done = 0;
        for (const auto& [u, s] : options.resume->units) done += s.finished ? 1 : 0;
        const auto* last =
            options.resume->units.empty() ? nullptr : &options.resume->units.rbegin()->second;
        const std::string from =
            last && !last->finished
                ? "unit " + std::to_string(last->unit) + " from step " + std::to_string(last->step)
                : std::string("the next unit from its start");
        std::fprintf(stderr, "liftlab-cli: resuming %s: %d unit(s) done, %s\n",
                     args.resume_dir.c_str(), done, from.c_str());
    }
    if (args.resume_dir.empty()) try {
            // A fork starts from its parent's resolved spec (an older folder's too).
            nlohmann::json j = args.fork_dir.empty() ? load_spec_source(args.source)
                                                     : to_json(fork_parent_spec(args.fork_dir));
            // Before the overrides: --set methods.cf-prox.lambda=… may tune a chosen method.
            if (!args.methods.empty()) select_methods(j, args.methods);
            for (const auto& s : args.sets) apply_override(j, s);
            if (args.steps > 0) j["steps"] = args.steps;
            for (const auto& [key, value] : args.numbers) j[key] = value;
            if (args.seeds > 0) {
                j["seeds"] = nlohmann::json::array();
                for (int i = 0; i < args.seeds; ++i) j["seeds"].push_back(i);
            }
            if (!args.events.empty() && (!j.contains("events") || !j["events"].is_array()))
                j["events"] = nlohmann::json::array();
            for (const auto& e : args.events) j["events"].push_back(to_json(parse_event_text(e)));
            if (!args.fork_dir.empty()) {
                const int step = latest_fork_step(args.fork_dir, args.from_step);
                j["parent"] = std::filesystem::absolute(args.fork_dir).lexically_normal().string();
                j["fork_step"] = step;
                if (!args.fork_source.empty()) j["fork_source"] = args.fork_source;
                std::fprintf(stderr,
                             "liftlab-cli: forking %s after step %d (its latest kept state at or "
                             "before step %d)\n",
                             args.fork_dir.c_str(), step, args.from_step);
            }
            spec = parse_spec(j);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "liftlab-cli: %s\n", error_message(e).c_str());
            return 2;
        }

    LaunchConfig launch;
    try {
        launch = resolve_launch(args.distributed);
        if (!args.distributed.shard.empty()) options.shard = parse_shard(args.distributed.shard);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "liftlab-cli: %s\n", error_message(e).c_str());
        return 2;
    }
    const bool lead = launch.rank == 0;  // only rank 0 prints, writes and draws
    if (lead) {
        // "batch 64", or for a sweep its key and values ("batch sizes 16, 64, 256").
        std::string setting = "batch " + std::to_string(spec.batch_size);
        if (!spec.sweep.key.empty()) {
            std::string values;
            for (const auto& v : spec.sweep.values)
                values += (values.empty() ? "" : ", ") + v.dump();
            setting = spec.sweep.key == "batch_size"
                          ? "batch sizes " + values
                          : setting + ", " + spec.sweep.key + " swept over " + values;
        }
        std::fprintf(stderr, "liftlab-cli: %s — %zu method(s) × %zu seed(s), %d steps, %s\n",
                     spec.name.c_str(), spec.methods.size(), spec.seeds.size(), spec.steps,
                     setting.c_str());
    }
    if (launch.distributed()) {
        std::fprintf(stderr, "liftlab-cli: rank %d of %d (%s), rendezvous at %s:%d\n", launch.rank,
                     launch.world_size, launch.source.c_str(), launch.master_addr.c_str(),
                     launch.master_port);
        try {
            options.communicator = join_process_group(launch);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "liftlab-cli: %s\n", error_message(e).c_str());
            std::fflush(stderr);
            std::_Exit(3);  // a half-built process group must not block the exit
        }
    }
    if (options.shard.sharded() && lead)
        std::fprintf(stderr, "liftlab-cli: shard %s of the (sweep value × seed) grid\n",
                     options.shard.label().c_str());
    ProgressPrinter printer(stderr);
    // A resumed run writes into its own folder (the parent stands for --out).
    options.out_dir = args.resume_dir.empty()
                          ? args.out_dir
                          : std::filesystem::path(args.resume_dir).parent_path().string();
    if (options.out_dir.empty()) options.out_dir = ".";
    RunResult result;
    try {
        InterruptHandler interrupt("the run",
                                   "the run folder (once written) ends `cancelled` and "
                                   "`liftlab-cli run --resume DIR` continues it");
        options.stop = interrupt.flag();
        result = run_experiment(spec, options, [&](const ProgressUpdate& u) {
            if (lead) printer.update(u);
            return true;
        });
    } catch (const CommunicationError& e) {
        printer.finish();
        std::fprintf(stderr, "liftlab-cli: %s\n", error_message(e).c_str());
        std::fflush(stderr);
        std::_Exit(3);  // the group is broken: do not wait for its threads on the way out
    } catch (const WriteError& e) {
        // The run folder says `failed` with this reason (when it could still take the summary).
        printer.finish();
        std::fprintf(stderr, "liftlab-cli: run failed: %s\n", error_message(e).c_str());
        return 3;
    } catch (const std::exception& e) {
        printer.finish();
        std::fprintf(stderr, "liftlab-cli: %s\n", error_message(e).c_str());
        return 2;
    }
    printer.finish();
    if (!lead) {
        std::fprintf(stderr, "liftlab-cli: rank %d done (rank 0 writes the run folder)\n",
                     launch.rank);
        return result.status == RunStatus::Diverged || result.status == RunStatus::Failed ? 1 : 0;
    }

    if (result.status == RunStatus::Cancelled && result.run_dir.empty()) {
        std::fprintf(stderr,
                     "liftlab-cli: stopped before the run folder was written: nothing to "
                     "resume, nothing written\n");
        return 130;
    }

    // Classification: test accuracy too, the one metric that compares ce (cross-entropy) with
    // the squared-loss methods.
    bool accuracy = false;
    for (const auto& r : result.runs) accuracy = accuracy || r.final_metrics.count("test_accuracy");
    std::fprintf(stderr, "\n%-14s %5s  %-9s %7s  %12s %12s %9s%s\n", "method", "seed", "status",
                 "steps", "test_loss", "train_loss", "time_s", accuracy ? "  test_accuracy" : "");
    for (const auto& r : result.runs) {
        auto metric = [&](const char* k) {
            auto it = r.final_metrics.find(k);
            return it == r.final_metrics.end() ? NAN : it->second;
        };
        std::fprintf(stderr, "%-14s %5llu  %-9s %7d  %12s %12s %9s", r.method.c_str(),
                     static_cast<unsigned long long>(r.seed), to_string(r.status), r.steps_done,
                     c_general(metric("test_loss"), 5).c_str(),
                     c_general(metric("train_loss"), 5).c_str(),
                     c_fixed(metric("time_s"), 2).c_str());
        if (accuracy) std::fprintf(stderr, "  %13s", c_fixed(metric("test_accuracy"), 4).c_str());
        std::fprintf(stderr, "\n");
        for (const auto& w : final_metric_warnings(r.final_metrics))
            std::fprintf(stderr, "  warning: %s\n", w.c_str());
    }

    if (result.status == RunStatus::Cancelled) {
        // Ctrl-C: out at once; the figures are one command away.
        std::fprintf(stderr, "figures: liftlab-cli report %s\n", result.run_dir.c_str());
    } else {
        try {
            for (const auto& path : render_report(result.run_dir, args.figure_format))
                std::fprintf(stderr, "figure: %s\n", path.c_str());
        } catch (const std::exception& e) {
            std::fprintf(stderr, "liftlab-cli: figures not written: %s\n",
                         error_message(e).c_str());
        }
    }
    std::fprintf(stderr, "run folder (status %s):\n", to_string(result.status));
    std::printf("%s\n", result.run_dir.c_str());
    if (result.status == RunStatus::Diverged || result.status == RunStatus::Failed) return 1;
    if (result.status == RunStatus::Cancelled) return 130;
    return 0;
}

}  // namespace liftlab::cli
