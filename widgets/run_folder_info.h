// What the run-history browser knows about one LiftLab run folder
// (`<root>/<preset>-YYYYmmdd-HHMMSS[-N]/`, written by engine/run/run_store): the resolved
// spec.json (name, task kind, method labels, seeds, steps, sweep) and summary.json (overall status
// and the final metrics of every finished (method, seed) run). Read with the run folder's own
// readers (engine/run/run_files.h, CMake target liftlab_run_schema: no torch, no Qt), so the
// window can list hundreds of folders without loading any of them.
// Reading never throws: damage is reported in `error` and the folder is still listed.
#pragma once
#include <QDateTime>
#include <QMap>
#include <QString>
#include <QStringList>

namespace liftlab {

extern const qint64 kStalledAfterSeconds;  // 30 minutes

struct RunFolderInfo {
    QString path;      // absolute, cleaned
    QString name;      // spec "name" (the preset); the folder's prefix when spec.json is unusable
    QString taskKind;  // spec "task"."kind"
    // summary "status": "running" | "ok" | "cancelled" | "diverged" (or whatever the runner
    // wrote); "incomplete" without a readable summary.json; "invalid" when spec.json is unusable;
    // "killed" for a "running" run whose writing process (resume/lock names it) ran on this
    // machine and no longer exists; "stalled" for one whose metrics.csv and summary.json have
    // not been written for kStalledAfterSeconds (its process was killed or crashed, here or on
    // another machine). `error` says which.
    QString status;
    QStringList methods;  // spec method labels (the "name" when a method has no label)
    int seeds = 0, steps = 0;
    QList<qint64> seedValues;  // spec "seeds", in order
    // The user's model file the run trained (spec backbone.script or icnn.script), "" for the
    // preset's built-in model.
    QString modelFile;
    QString sweepKey;     // spec "sweep"."key", empty without a sweep
    int sweepValues = 0;  // number of sweep values (0 without a sweep)
    int runsDone = 0;     // entries in summary "runs" ((method, seed[, sweep value]) runs)
    int runsTotal = 0;    // methods × seeds × max(1, sweepValues)
    QDateTime created;    // from the folder-name timestamp, else spec.json's mtime (local)
    // Per summary "method" (the label, "cf-prox@batch_size=8" in a sweep): the mean over seeds of
    // the finite final values of `bestMetric`. Methods without one are absent.
    QMap<QString, double> bestFinal;
    // test_accuracy when any run recorded one (a classification run: ce's cross-entropy and the
    // squared losses are not comparable, their accuracies are; higher is better), else test_loss.
    QString bestMetric = QStringLiteral("test_loss");
    bool valid = false;
    QString error;  // why the folder is not valid, or a warning about summary.json; readable
};

// Reads spec.json and summary.json of the folder. Without spec.json or with broken JSON there →
// valid = false and a readable `error`; without summary.json → status "incomplete"; a broken
// summary.json → status "incomplete" with the reason in `error` (the folder stays valid).
RunFolderInfo readRunFolder(const QString& path);

// The pid of the process that wrote folder `path` (a run, or a claims check), as its lock file
// resume/lock names it, when that process ran on this machine and has ended; else 0 (still alive,
// another machine's, or no readable note).
qint64 endedFolderWriterPid(const QString& path);

// The folder has spec.json and metrics.csv or summary.json.
bool looksLikeRunFolder(const QString& path);

// Run folders at `root` or below it, at most `maxDepth` levels down (root itself is level 0).
// A run folder's own subfolders (figures/, landscapes/, …) and hidden folders are not searched.
// Sorted by path; absolute, cleaned paths. `searched`, when given, receives the other folders that
// were looked at (root included): where a new run folder can appear, i.e. what to watch.
QStringList findRunFolders(const QString& root, int maxDepth = 2, QStringList* searched = nullptr);

// The best mean final value in info.bestFinal — the lowest test_loss or the highest
// test_accuracy (info.bestMetric) — and its method (either pointer may be null); false when there
// is none.
bool bestFinalResult(const RunFolderInfo& info, QString* method, double* value);

// The seeds as a short text: "0", "0, 1, 2", "0–9" for a run of consecutive seeds (more than 3).
QString seedsText(const QList<qint64>& seeds);

// The timestamp of a folder name `<name>-YYYYmmdd-HHMMSS[-N]` in local time (invalid when the
// name has none); `prefix` receives the part before it.
QDateTime timestampFromFolderName(const QString& folderName, QString* prefix = nullptr);

}  // namespace liftlab
