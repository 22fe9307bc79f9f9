// liftlab-cli's subcommands: each one's synopsis, its own options, and the reading of its
// arguments into the Args of its command (cli_commands.h, claims_command.h, landscape_figure.h,
// distributed_args.h).
#include <charconv>
#include <string>
#include <system_error>
#include <vector>

#include "claims_command.h"
#include "cli_commands.h"
#include "command_line.h"
#include "landscape_figure.h"

namespace liftlab::cli {

namespace {

constexpr const char* kListUsage =
    "  liftlab-cli list                                   presets, then the registered methods "
    "and task kinds\n";

constexpr const char* kRunUsage =
    R"(  liftlab-cli run PRESET|SPEC.json [--out DIR] [--methods A,B,...] [--set key=value ...]
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
)";

constexpr const char* kMergeUsage =
    "  liftlab-cli merge DIR... [--out DIR]               joins --shard run folders into one run "
    "folder\n";

constexpr const char* kClaimsUsage =
    R"(  liftlab-cli claims [--tier fast|full] [--out DIR] [--only ID,...] [--reuse ID=RUN_DIR ...]
                     [--tune]          re-checks the claims table: every claim's runs, its test
                                       and verdict; writes claims.md, claims.csv, claims.json and
                                       claims.pdf in a claims-<tier>-<time> folder under --out
  liftlab-cli claims --resume CLAIMS_DIR            continues an interrupted check
)";

constexpr const char* kReportUsage =
    "  liftlab-cli report RUN_DIR [--format png|svg|pdf]  figures of a finished run, rendered "
    "offscreen\n";

constexpr const char* kLandscapeUsage =
    R"(  liftlab-cli landscape RUN_DIR [--method LABEL] [--seed K] [--grid N] [--space theta|lifted|both]
                                [--directions random|pca|delta-pca] [--direction-seed S]
                                [--format png|svg|pdf]
                                   loss landscapes of an ICNN run (cached in RUN_DIR/landscapes)
)";

QCommandLineOption option(const char* name, const char* help, const char* value = nullptr,
                          const char* default_value = nullptr) {
    return QCommandLineOption(QString::fromUtf8(name), QString::fromUtf8(help),
                              value ? QString::fromUtf8(value) : QString(),
                              default_value ? QString::fromUtf8(default_value) : QString());
}

QCommandLineOption format_option() {
    return option("format", "Figure format: png, svg or pdf.", "FMT", "png");
}

// A usage error of `subcommand`, with its synopsis.
int misuse(const char* subcommand, const QString& msg) {
    for (const auto& s : subcommands())
        if (s.name == QLatin1String(subcommand)) return usage_error(msg, &s);
    return usage_error(msg);
}

// `--name N` with N > 0 into `value`; true when absent.
bool positive_int(const QCommandLineParser& p, const char* name, int* value) {
    if (!p.isSet(QString::fromUtf8(name))) return true;
    bool ok = false;
    *value = p.value(QString::fromUtf8(name)).toInt(&ok);
    return ok && *value > 0;
}

// The first of `names` that is set, or "".
QString first_set(const QCommandLineParser& p, const QStringList& names) {
    for (const QString& n : names)
        if (p.isSet(n)) return n;
    return {};
}

int run_list(const QCommandLineParser&, const QStringList& pos) {
    return pos.isEmpty() ? command_list()
                         : misuse("list", QStringLiteral("list takes no argument"));
}

int run_report(const QCommandLineParser& p, const QStringList& pos) {
    if (pos.size() != 1) return misuse("report", QStringLiteral("report needs one RUN_DIR"));
    return command_report(pos[0].toStdString(), p.value(QStringLiteral("format")).toStdString());
}

int run_landscape(const QCommandLineParser& p, const QStringList& pos) {
    const auto bad = [](const char* msg) { return misuse("landscape", QString::fromUtf8(msg)); };
    if (pos.size() != 1) return bad("landscape needs one RUN_DIR");
    LandscapeFigureArgs args;
    args.run_dir = pos[0].toStdString();
    args.method = p.value(QStringLiteral("method")).toStdString();
    bool ok = true;
    if (p.isSet(QStringLiteral("seed"))) {
        args.seed = p.value(QStringLiteral("seed")).toLongLong(&ok);
        if (!ok || args.seed < 0) return bad("--seed needs a non-negative integer");
    }
    if (p.isSet(QStringLiteral("grid"))) {
        args.grid = p.value(QStringLiteral("grid")).toInt(&ok);
        if (!ok || args.grid < 2) return bad("--grid needs an integer ≥ 2");
    }
    args.direction_seed = p.value(QStringLiteral("direction-seed")).toULongLong(&ok);
    if (!ok) return bad("--direction-seed needs a non-negative integer");
    args.space = p.value(QStringLiteral("space")).toStdString();
    if (args.space != "theta" && args.space != "lifted" && args.space != "both")
        return bad("--space must be theta, lifted or both");
    args.directions = p.value(QStringLiteral("directions")).toStdString();
    args.format = p.value(QStringLiteral("format")).toStdString();
    return command_landscape(args);
}

int run_merge(const QCommandLineParser& p, const QStringList& pos) {
    if (pos.isEmpty())
        return misuse("merge", QStringLiteral("merge needs one or more shard RUN_DIRs"));
    std::vector<std::string> dirs;
    for (const QString& d : pos) dirs.push_back(d.toStdString());
    return command_merge(dirs, p.value(QStringLiteral("out")).toStdString());
}

int run_claims(const QCommandLineParser& p, const QStringList& pos) {
    const auto bad = [](const QString& msg) { return misuse("claims", msg); };
    if (!pos.isEmpty()) return bad(QStringLiteral("claims takes no positional argument"));
    ClaimsArgs args;
    args.tier = p.value(QStringLiteral("tier")).toStdString();
    args.out_dir = p.value(QStringLiteral("out")).toStdString();
    if (args.out_dir.empty()) return bad(QStringLiteral("--out needs a folder"));
    args.resume_dir = p.value(QStringLiteral("resume")).toStdString();
    if (p.isSet(QStringLiteral("resume")) &&
        !first_set(p, {QStringLiteral("tier"), QStringLiteral("only"), QStringLiteral("reuse"),
                       QStringLiteral("tune")})
             .isEmpty())
        return bad(QStringLiteral("claims --resume continues with the folder's own options"));
    for (const QString& list : p.values(QStringLiteral("only")))
        for (const QString& id : list.split(QLatin1Char(','), Qt::SkipEmptyParts))
            args.only.push_back(id.trimmed().toStdString());
    for (const QString& r : p.values(QStringLiteral("reuse"))) {
        const int eq = r.indexOf(QLatin1Char('='));
        if (eq <= 0 || eq == r.size() - 1)
            return bad(QStringLiteral("--reuse needs ID=RUN_DIR (got '%1')").arg(r));
        args.reuse[r.left(eq).toStdString()] = r.mid(eq + 1).toStdString();
    }
    args.tune = p.isSet(QStringLiteral("tune"));
    return command_claims(args);
}

// run --resume DIR: the folder's own spec, seeds and steps; nothing may change what it computes.
int run_resume(const QCommandLineParser& p, const QStringList& pos) {
    if (!pos.isEmpty())
        return misuse("run", QStringLiteral("run --resume DIR takes no PRESET or SPEC.json"));
    const QString changing = first_set(
        p, {"set", "methods", "seeds", "steps", "shard", "rank", "world-size", "master", "event",
            "fork", "from-step", "fork-from-method", "probe-timeout", "probe-memory"});
    if (!changing.isEmpty())
        return misuse("run", "run --resume continues the folder's own run: --" + changing +
                                 " cannot change it");
    RunArgs args;
    args.resume_dir = p.value(QStringLiteral("resume")).toStdString();
    args.figure_format = p.value(QStringLiteral("format")).toStdString();
    return command_run(args);
}

// What a run starts from: PRESET|SPEC.json, or --fork RUN_DIR --from-step N. "" or the problem.
QString read_run_source(const QCommandLineParser& p, const QStringList& pos, RunArgs& args) {
    if (p.isSet(QStringLiteral("fork")) != p.isSet(QStringLiteral("from-step")))
        return QStringLiteral("--fork RUN_DIR and --from-step N go together");
    if (p.isSet(QStringLiteral("fork-from-method")) && !p.isSet(QStringLiteral("fork")))
        return QStringLiteral("--fork-from-method LABEL goes with --fork RUN_DIR");
    args.fork_source = p.value(QStringLiteral("fork-from-method")).toStdString();
    if (!p.isSet(QStringLiteral("fork"))) {
        if (pos.size() != 1) return QStringLiteral("run needs one PRESET or SPEC.json");
        args.source = pos[0].toStdString();
        return {};
    }
    if (!pos.isEmpty()) return QStringLiteral("run --fork DIR takes no PRESET or SPEC.json");
    const QString fixed = first_set(p, {"seeds", "shard", "rank", "world-size", "master"});
    if (!fixed.isEmpty())
        return "run --fork continues the parent's units: --" + fixed + " cannot change them";
    args.fork_dir = p.value(QStringLiteral("fork")).toStdString();
    bool ok = false;
    args.from_step = p.value(QStringLiteral("from-step")).toInt(&ok);
    if (!ok || args.from_step < 0)
        return QStringLiteral("--from-step needs a non-negative integer");
    return {};
}

// --out, --set, --event, --methods, --seeds, --steps, --probe-timeout, --probe-memory, --format.
QString read_run_settings(const QCommandLineParser& p, RunArgs& args) {
    for (const QString& e : p.values(QStringLiteral("event")))
        args.events.push_back(e.toStdString());
    args.out_dir = p.value(QStringLiteral("out")).toStdString();
    if (args.out_dir.empty())
        return QStringLiteral("--out needs a folder (an empty --out would write nothing)");
    for (const QString& s : p.values(QStringLiteral("set"))) args.sets.push_back(s.toStdString());
    if (p.isSet(QStringLiteral("methods"))) {
        args.methods = p.value(QStringLiteral("methods")).toStdString();
        if (args.methods.find_first_not_of(" ,") == std::string::npos)
            return QStringLiteral("--methods needs one or more method names, comma-separated");
    }
    if (!positive_int(p, "seeds", &args.seeds))
        return QStringLiteral("--seeds needs a positive integer");
    if (!positive_int(p, "steps", &args.steps))
        return QStringLiteral("--steps needs a positive integer");
    // Spec keys (probe_timeout_seconds, probe_memory_gib): the spec's checks name them.
    for (const auto& [name, key] : {std::pair{"probe-timeout", "probe_timeout_seconds"},
                                    std::pair{"probe-memory", "probe_memory_gib"}}) {
        if (!p.isSet(QString::fromUtf8(name))) continue;
        const std::string value = p.value(QString::fromUtf8(name)).toStdString();
        double v = 0;
        const auto r = std::from_chars(value.data(), value.data() + value.size(), v);
        if (r.ec != std::errc() || r.ptr != value.data() + value.size())
            return QStringLiteral("--%1 needs a number, got '%2'")
                .arg(QString::fromUtf8(name), QString::fromStdString(value));
        args.numbers.emplace_back(key, v);
    }
    args.figure_format = p.value(QStringLiteral("format")).toStdString();
    return {};
}

// --shard, --rank, --world-size, --master, --dist-timeout.
QString read_distributed(const QCommandLineParser& p, DistributedArgs& dist) {
    dist.shard = p.value(QStringLiteral("shard")).toStdString();
    dist.master = p.value(QStringLiteral("master")).toStdString();
    bool ok = true;
    if (p.isSet(QStringLiteral("rank"))) {
        dist.rank = p.value(QStringLiteral("rank")).toInt(&ok);
        if (!ok || dist.rank < 0) return QStringLiteral("--rank needs a non-negative integer");
    }
    if (!positive_int(p, "world-size", &dist.world_size))
        return QStringLiteral("--world-size needs a positive integer");
    if (p.isSet(QStringLiteral("dist-timeout"))) {
        dist.timeout_seconds = p.value(QStringLiteral("dist-timeout")).toDouble(&ok);
        if (!ok || dist.timeout_seconds <= 0)
            return QStringLiteral("--dist-timeout needs a positive number of seconds");
    }
    return {};
}

int run_run(const QCommandLineParser& p, const QStringList& pos) {
    if (p.isSet(QStringLiteral("resume"))) return run_resume(p, pos);
    RunArgs args;
    for (const QString& problem : {read_run_source(p, pos, args), read_run_settings(p, args),
                                   read_distributed(p, args.distributed)})
        if (!problem.isEmpty()) return misuse("run", problem);
    return command_run(args);
}

QList<QCommandLineOption> run_options() {
    return {
        option("out", "Parent folder of the run folder.", "DIR", "runs"),
        option("set", "Override a spec field (repeatable).", "key=value"),
        option("methods", "Only these methods, comma-separated.", "A,B"),
        option("seeds", "Run seeds 0..N-1.", "N"),
        option("steps", "Override the number of steps.", "N"),
        format_option(),
        option("event", "A live-setting change (repeatable).", "STEP:LABEL.KEY=VALUE"),
        option("fork", "A child of the run in DIR.", "DIR"),
        option("from-step", "With --fork: the parent's step to start from.", "N"),
        option("fork-from-method", "With --fork: the parent's method a new method starts from.",
               "LABEL"),
        option("resume", "Continue the killed run in DIR.", "DIR"),
        option("probe-timeout", "Seconds the check of a TorchScript model may take.", "S"),
        option("probe-memory", "GiB of memory the check of a TorchScript model may use.", "GIB"),
        option("shard", "The K-th of N slices of the sweep grid.", "K/N"),
        option("rank", "This process's data-parallel rank.", "R"),
        option("world-size", "Number of data-parallel ranks.", "N"),
        option("master", "Rendezvous address of rank 0.", "HOST:PORT"),
        option("dist-timeout", "Seconds before a silent rank is an error.", "S"),
    };
}

QList<QCommandLineOption> claims_options() {
    return {
        option("tier", "fast (default), full, or tiny (the test suite's).", "TIER", "fast"),
        option("out", "Parent folder of the claims folder.", "DIR", "runs"),
        option("only", "Only these claim ids (comma-separated, repeatable).", "ID,..."),
        option("reuse", "Read claim ID's runs from RUN_DIR[,RUN_DIR...] (repeatable).",
               "ID=RUN_DIR"),
        option("tune", "The tuned comparisons outside the full tier too."),
        option("resume", "Continue the interrupted check in CLAIMS_DIR.", "CLAIMS_DIR"),
    };
}

QList<QCommandLineOption> landscape_options() {
    return {
        option("method", "The centre method's label.", "LABEL"),
        option("seed", "The run seed.", "K"),
        option("grid", "Cells per side.", "N"),
        option("space", "theta, lifted or both.", "SPACE", "both"),
        option("directions", "random, pca or delta-pca.", "KIND", "pca"),
        option("direction-seed", "Seed of random directions.", "S", "0"),
        format_option(),
    };
}

}  // namespace

const std::vector<Subcommand>& subcommands() {
    static const std::vector<Subcommand> all = {
        {QStringLiteral("list"), kListUsage, {}, run_list},
        {QStringLiteral("run"), kRunUsage, run_options(), run_run},
        {QStringLiteral("merge"),
         kMergeUsage,
         {option("out", "Parent folder of the merged run folder.", "DIR", "runs")},
         run_merge},
        {QStringLiteral("claims"), kClaimsUsage, claims_options(), run_claims},
        {QStringLiteral("report"), kReportUsage, {format_option()}, run_report},
        {QStringLiteral("landscape"), kLandscapeUsage, landscape_options(), run_landscape},
    };
    return all;
}

}  // namespace liftlab::cli
