// liftlab-cli: list presets, run a spec headless, render a run's figures.
#include <QApplication>

#include <unistd.h>
#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QLocale>
#include "passive_openmp.h"

#include <clocale>
#include <csignal>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include "core/activity.h"
#include "core/allocator_tuning.h"
#include "training/model_probe.h"

#include "claims_command.h"
#include "cli_commands.h"
#include "landscape_figure.h"
#include "method_palette.h"

namespace {

constexpr const char* kUsage =
    R"(LiftLab compares training methods in two families: closed-form last layers (cf-ridge,
cf-prox, cf-rls, cf-full) against gradient-trained ones (sgd, adam) on a backbone + last-layer
task, and the ICNN energy model's positivity strategies (the lifter and its ablations, softplus,
pgd) and CP-Flow on a density task. `liftlab-cli list` names every preset, method and task kind.
usage:
  liftlab-cli list                                   presets, then the registered methods and task kinds
  liftlab-cli run PRESET|SPEC.json [--out DIR] [--methods A,B,...] [--set key=value ...]
                                   [--seeds N] [--steps N] [--format png|svg|pdf] [--shard K/N]
                                   [--probe-timeout S] [--probe-memory GIB]
                                   [--rank R --world-size N] [--master HOST:PORT] [--dist-timeout S]
                                   data-parallel under torchrun/Slurm variables or --rank/--world-size;
                                   --methods keeps only these methods: the preset's own (with its
                                   settings) or any registered one (with its defaults);
                                   --shard runs the K-th of N slices of the (sweep value × seed) grid;
                                   a TorchScript model is checked in a child process stopped after
                                   S seconds (probe_timeout_seconds, default 60) with at most GIB
                                   GiB of memory (probe_memory_gib, default half the machine's)
      Ctrl-C stops the run within a second or two and leaves it resumable; a second Ctrl-C quits
      at once (exit 130), the folder then resumes from its last saved state
      exit codes: 0 done, 1 every method diverged or failed, 2 bad spec, data or usage,
                  3 a write to the run folder failed (disk full, file size limit) or a data-parallel
                    peer was lost, 130 interrupted
      --event STEP:LABEL.KEY=VALUE (repeatable): after step STEP, method LABEL's KEY becomes
                                   VALUE (lr; beta of cf-ridge/cf-full, lambda of cf-prox, rho of
                                   cf-rls); recorded in spec.json and, as applied, in events.csv
  liftlab-cli run --fork RUN_DIR --from-step N [--out DIR] [--methods …] [--set …] [--event …]
                                   [--steps N] [--fork-from-method LABEL]
                                   a child run from RUN_DIR's kept state at or before step N (run
                                   the parent with --set fork_state_every=K), with these changes;
                                   a method the parent did not run starts from its method LABEL
                                   (same family; needed when the parent ran several)
  liftlab-cli run --resume RUN_DIR [--format png|svg|pdf]
                                   continues a killed (or interrupted) run from the state it saved
                                   at its last save (every save_state_seconds, default 30 s),
                                   to the same final metrics
  liftlab-cli merge DIR... [--out DIR]               joins --shard run folders into one run folder
  liftlab-cli claims [--tier fast|full] [--out DIR] [--only ID,...] [--reuse ID=RUN_DIR ...]
                     [--tune]          re-checks the claims table: every claim's runs, its test
                                       and verdict; writes claims.md, claims.csv, claims.json and
                                       claims.pdf in a claims-<tier>-<time> folder under --out
  liftlab-cli claims --resume CLAIMS_DIR            continues an interrupted check
  liftlab-cli report RUN_DIR [--format png|svg|pdf]  figures of a finished run, rendered offscreen
  liftlab-cli landscape RUN_DIR [--method LABEL] [--seed K] [--grid N] [--space theta|lifted|both]
                                [--directions random|pca|delta-pca] [--direction-seed S]
                                [--format png|svg|pdf]
                                   loss landscapes of an ICNN run (cached in RUN_DIR/landscapes)
)";

int usage_error(const QString& msg) {
    std::fprintf(stderr, "liftlab-cli: %s\n%s", qPrintable(msg), kUsage);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    // `liftlab-cli probe-model DIR` (hidden): the child process that checks a user's TorchScript
    // file for a run (engine/training/model_probe.h). First: no Qt, no re-exec, nothing else.
    if (const auto code = liftlab::run_model_probe_if_asked(argc, argv)) return *code;
    liftlab::ensure_passive_openmp(argv);
    // LIFTLAB_TRACE_ACTIVITY=1: every phase the engine enters, on stderr (what a Ctrl-C would
    // stop; the interrupt tests wait for a phase this way).
    if (const char* trace = std::getenv("LIFTLAB_TRACE_ACTIVITY"); trace && *trace)
        liftlab::set_activity_listener([](const std::string& what) {
            std::fprintf(stderr, "liftlab-cli: activity: %s\n", what.c_str());
        });
    liftlab::tune_allocator();  // no per-step page-fault churn (core/allocator_tuning.h)
    // Past a file size limit (ulimit -f) a write must fail with EFBIG, which the run store
    // reports (status failed, exit 3), instead of the default SIGXFSZ killing the process
    // mid-write and leaving the folder "running".
    std::signal(SIGXFSZ, SIG_IGN);
    // Figures are drawn with Qt widgets; the offscreen platform needs no display.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    // Qt warns on every start when the session has no runtime folder (CI, ssh); give it one.
    if (qEnvironmentVariableIsEmpty("XDG_RUNTIME_DIR")) {
        const QByteArray dir = QDir::tempPath().toUtf8() + "/liftlab-runtime-" +
                               QByteArray::number(static_cast<qint64>(::getuid()));
        QDir().mkpath(QString::fromUtf8(dir));
        QFile::setPermissions(QString::fromUtf8(dir), QFileDevice::ReadOwner |
                                                          QFileDevice::WriteOwner |
                                                          QFileDevice::ExeOwner);
        qputenv("XDG_RUNTIME_DIR", dir);
    }
    QApplication app(argc, argv);
    // Qt has just set the C library's locale from the environment. Every number LiftLab writes
    // or reads goes through core/c_numbers.h, which ignores it; this is the belt to those braces
    // (LibTorch's and the C library's own formatting).
    std::setlocale(LC_NUMERIC, "C");
    // LiftLab speaks English, and so do the C library's messages it quotes (strerror's "File too
    // large" in a reason of summary.json or on stderr), whatever the locale.
    std::setlocale(LC_MESSAGES, "C");
    // Qt's own numbers too (the figures' tick labels): the CLI's output is files and logs, which
    // never change with the locale (the window, by contrast, shows the user's).
    QLocale::setDefault(QLocale::c());
    QApplication::setApplicationName("liftlab-cli");
    liftlab::installMethodPalette();  // the report's figures use the methods' colours

    QCommandLineParser parser;
    parser.setApplicationDescription("LiftLab headless front end");
    QCommandLineOption help({"h", "help"}, "Show usage.");
    QCommandLineOption out("out", "Parent folder of the run folder.", "DIR", "runs");
    QCommandLineOption set("set", "Override a spec field (repeatable).", "key=value");
    QCommandLineOption methods("methods", "Run: only these methods, comma-separated.", "A,B");
    QCommandLineOption seeds("seeds", "Run seeds 0..N-1.", "N");
    QCommandLineOption steps("steps", "Override the number of steps.", "N");
    QCommandLineOption format("format", "Figure format: png, svg or pdf.", "FMT", "png");
    QCommandLineOption method("method", "Landscape: the centre method's label.", "LABEL");
    QCommandLineOption seed("seed", "Landscape: the run seed.", "K");
    QCommandLineOption grid("grid", "Landscape: cells per side.", "N");
    QCommandLineOption space("space", "Landscape: theta, lifted or both.", "SPACE", "both");
    QCommandLineOption directions("directions", "Landscape: random, pca or delta-pca.", "KIND",
                                  "pca");
    QCommandLineOption direction_seed("direction-seed", "Landscape: seed of random directions.",
                                      "S", "0");
    QCommandLineOption shard("shard", "Run: the K-th of N slices of the sweep grid.", "K/N");
    QCommandLineOption rank("rank", "Run: this process's data-parallel rank.", "R");
    QCommandLineOption world_size("world-size", "Run: number of data-parallel ranks.", "N");
    QCommandLineOption master("master", "Run: rendezvous address of rank 0.", "HOST:PORT");
    QCommandLineOption resume("resume", "Run: continue the killed run in DIR.", "DIR");
    QCommandLineOption event("event", "Run: a live-setting change (repeatable).",
                             "STEP:LABEL.KEY=VALUE");
    QCommandLineOption fork("fork", "Run: a child of the run in DIR.", "DIR");
    QCommandLineOption from_step("from-step", "Fork: the parent's step to start from.", "N");
    QCommandLineOption fork_from("fork-from-method",
                                 "Fork: the parent's method a new method starts from.", "LABEL");
    QCommandLineOption dist_timeout("dist-timeout",
                                    "Run: seconds before a silent rank is an error.", "S");
    QCommandLineOption probe_timeout(
        "probe-timeout", "Run: seconds the check of a TorchScript model may take.", "S");
    QCommandLineOption probe_memory(
        "probe-memory", "Run: GiB of memory the check of a TorchScript model may use.", "GIB");
    QCommandLineOption tier("tier", "Claims: fast (default), full, or tiny (the test suite's).",
                            "TIER", "fast");
    QCommandLineOption only("only", "Claims: only these claim ids (comma-separated, repeatable).",
                            "ID,...");
    QCommandLineOption reuse("reuse",
                             "Claims: read claim ID's runs from RUN_DIR[,RUN_DIR...] (repeatable).",
                             "ID=RUN_DIR");
    QCommandLineOption tune("tune", "Claims: the tuned comparisons outside the full tier too.");
    parser.addOptions({help,           out,    set,  methods,    seeds,  steps,
                       format,         method, seed, grid,       space,  directions,
                       direction_seed, shard,  rank, world_size, master, dist_timeout,
                       resume,         event,  fork, from_step});
    parser.addOptions({fork_from});
    parser.addOptions({probe_timeout, probe_memory});
    parser.addOptions({tier, only, reuse, tune});
    parser.addPositionalArgument("command", "list | run | merge | report | landscape | claims");
    if (!parser.parse(QCoreApplication::arguments())) return usage_error(parser.errorText());
    const QStringList pos = parser.positionalArguments();
    if (parser.isSet(help) || pos.isEmpty()) {
        std::fputs(kUsage, parser.isSet(help) ? stdout : stderr);
        return parser.isSet(help) ? 0 : 2;
    }

    auto positive_int = [&](const QCommandLineOption& opt, int* value) {
        if (!parser.isSet(opt)) return true;
        bool ok = false;
        *value = parser.value(opt).toInt(&ok);
        return ok && *value > 0;
    };

    const QString command = pos.first();
    if (command == "list")
        return pos.size() == 1 ? liftlab::cli::command_list()
                               : usage_error("list takes no argument");
    if (command == "report") {
        if (pos.size() != 2) return usage_error("report needs one RUN_DIR");
        return liftlab::cli::command_report(pos[1].toStdString(),
                                            parser.value(format).toStdString());
    }
    if (command == "landscape") {
        if (pos.size() != 2) return usage_error("landscape needs one RUN_DIR");
        liftlab::cli::LandscapeFigureArgs args;
        args.run_dir = pos[1].toStdString();
        args.method = parser.value(method).toStdString();
        bool ok = true;
        if (parser.isSet(seed)) {
            args.seed = parser.value(seed).toLongLong(&ok);
            if (!ok || args.seed < 0) return usage_error("--seed needs a non-negative integer");
        }
        if (parser.isSet(grid)) {
            args.grid = parser.value(grid).toInt(&ok);
            if (!ok || args.grid < 2) return usage_error("--grid needs an integer ≥ 2");
        }
        args.direction_seed = parser.value(direction_seed).toULongLong(&ok);
        if (!ok) return usage_error("--direction-seed needs a non-negative integer");
        args.space = parser.value(space).toStdString();
        if (args.space != "theta" && args.space != "lifted" && args.space != "both")
            return usage_error("--space must be theta, lifted or both");
        args.directions = parser.value(directions).toStdString();
        args.format = parser.value(format).toStdString();
        return liftlab::cli::command_landscape(args);
    }
    if (command == "merge") {
        if (pos.size() < 2) return usage_error("merge needs one or more shard RUN_DIRs");
        std::vector<std::string> dirs;
        for (int i = 1; i < pos.size(); ++i) dirs.push_back(pos[i].toStdString());
        return liftlab::cli::command_merge(dirs, parser.value(out).toStdString());
    }
    if (command == "claims") {
        if (pos.size() != 1) return usage_error("claims takes no positional argument");
        for (const auto* o : {&set, &methods, &seeds, &steps, &shard, &rank, &world_size, &master})
            if (parser.isSet(*o))
                return usage_error("claims runs each claim's own recipe: --" + o->names().first() +
                                   " does not apply");
        liftlab::cli::ClaimsArgs args;
        args.tier = parser.value(tier).toStdString();
        args.out_dir = parser.value(out).toStdString();
        if (args.out_dir.empty()) return usage_error("--out needs a folder");
        args.resume_dir = parser.value(resume).toStdString();
        if (parser.isSet(resume) &&
            (parser.isSet(tier) || parser.isSet(only) || parser.isSet(reuse) || parser.isSet(tune)))
            return usage_error("claims --resume continues with the folder's own options");
        for (const QString& list : parser.values(only))
            for (const QString& id : list.split(QLatin1Char(','), Qt::SkipEmptyParts))
                args.only.push_back(id.trimmed().toStdString());
        for (const QString& r : parser.values(reuse)) {
            const int eq = r.indexOf(QLatin1Char('='));
            if (eq <= 0 || eq == r.size() - 1)
                return usage_error("--reuse needs ID=RUN_DIR (got '" + r + "')");
            args.reuse[r.left(eq).toStdString()] = r.mid(eq + 1).toStdString();
        }
        args.tune = parser.isSet(tune);
        return liftlab::cli::command_claims(args);
    }
    if (command == "run" && parser.isSet(resume)) {
        // The folder's own spec, seeds and steps: nothing may change what the run computes.
        if (pos.size() != 1) return usage_error("run --resume DIR takes no PRESET or SPEC.json");
        for (const auto* o : {&set, &methods, &seeds, &steps, &shard, &rank, &world_size, &master,
                              &event, &fork, &from_step, &fork_from, &probe_timeout, &probe_memory})
            if (parser.isSet(*o))
                return usage_error("run --resume continues the folder's own run: --" +
                                   o->names().first() + " cannot change it");
        liftlab::cli::RunArgs args;
        args.resume_dir = parser.value(resume).toStdString();
        args.figure_format = parser.value(format).toStdString();
        return liftlab::cli::command_run(args);
    }
    if (command == "run") {
        liftlab::cli::RunArgs args;
        if (parser.isSet(fork) != parser.isSet(from_step))
            return usage_error("--fork RUN_DIR and --from-step N go together");
        if (parser.isSet(fork_from) && !parser.isSet(fork))
            return usage_error("--fork-from-method LABEL goes with --fork RUN_DIR");
        args.fork_source = parser.value(fork_from).toStdString();
        if (parser.isSet(fork)) {
            if (pos.size() != 1) return usage_error("run --fork DIR takes no PRESET or SPEC.json");
            for (const auto* o : {&seeds, &shard, &rank, &world_size, &master})
                if (parser.isSet(*o))
                    return usage_error("run --fork continues the parent's units: --" +
                                       o->names().first() + " cannot change them");
            args.fork_dir = parser.value(fork).toStdString();
            bool ok = false;
            args.from_step = parser.value(from_step).toInt(&ok);
            if (!ok || args.from_step < 0)
                return usage_error("--from-step needs a non-negative integer");
        } else {
            if (pos.size() != 2) return usage_error("run needs one PRESET or SPEC.json");
            args.source = pos[1].toStdString();
        }
        for (const QString& e : parser.values(event)) args.events.push_back(e.toStdString());
        args.out_dir = parser.value(out).toStdString();
        if (args.out_dir.empty())
            return usage_error("--out needs a folder (an empty --out would write nothing)");
        for (const QString& s : parser.values(set)) args.sets.push_back(s.toStdString());
        if (parser.isSet(methods)) {
            args.methods = parser.value(methods).toStdString();
            if (args.methods.find_first_not_of(" ,") == std::string::npos)
                return usage_error("--methods needs one or more method names, comma-separated");
        }
        if (!positive_int(seeds, &args.seeds))
            return usage_error("--seeds needs a positive integer");
        if (!positive_int(steps, &args.steps))
            return usage_error("--steps needs a positive integer");
        // Spec keys (probe_timeout_seconds, probe_memory_gib): the spec's checks name them.
        for (const auto& [opt, key] : {std::pair{&probe_timeout, "probe_timeout_seconds"},
                                       std::pair{&probe_memory, "probe_memory_gib"}}) {
            if (!parser.isSet(*opt)) continue;
            const std::string value = parser.value(*opt).toStdString();
            double v = 0;
            const auto r = std::from_chars(value.data(), value.data() + value.size(), v);
            if (r.ec != std::errc() || r.ptr != value.data() + value.size())
                return usage_error("--" + opt->names().first() + " needs a number, got '" +
                                   parser.value(*opt) + "'");
            args.numbers.emplace_back(key, v);
        }
        args.figure_format = parser.value(format).toStdString();
        auto& dist = args.distributed;
        dist.shard = parser.value(shard).toStdString();
        dist.master = parser.value(master).toStdString();
        bool ok = true;
        if (parser.isSet(rank)) {
            dist.rank = parser.value(rank).toInt(&ok);
            if (!ok || dist.rank < 0) return usage_error("--rank needs a non-negative integer");
        }
        if (!positive_int(world_size, &dist.world_size))
            return usage_error("--world-size needs a positive integer");
        if (parser.isSet(dist_timeout)) {
            dist.timeout_seconds = parser.value(dist_timeout).toDouble(&ok);
            if (!ok || dist.timeout_seconds <= 0)
                return usage_error("--dist-timeout needs a positive number of seconds");
        }
        return liftlab::cli::command_run(args);
    }
    return usage_error("unknown command '" + command + "'");
}
