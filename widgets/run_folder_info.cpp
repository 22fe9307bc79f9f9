#include "run_folder_info.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSysInfo>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <limits>

#include "run/run_files.h"

#include <signal.h>

namespace liftlab {

namespace {

const QString kSpec = QString::fromLatin1(run_folder::kSpec);
const QString kSummary = QString::fromLatin1(run_folder::kSummary);
const QString kMetrics = QString::fromLatin1(run_folder::kMetrics);
const QString kLock = QString::fromLatin1(run_folder::kResumeLock);

// The process that wrote the run, as its lock file names it ("<host name> <pid>", engine
// run/folder_lock.h), when that process ran on this machine and has ended: its pid; else 0
// (another machine's process, an unreadable note, or one still alive).
qint64 endedWriterPid(const QDir& dir) {
    QFile f(dir.filePath(kLock));
    if (!f.open(QIODevice::ReadOnly)) return 0;
    const QStringList parts = QString::fromUtf8(f.read(512)).trimmed().split(QLatin1Char(' '));
    if (parts.size() != 2 || parts[0] != QSysInfo::machineHostName()) return 0;
    bool ok = false;
    const qint64 pid = parts[1].toLongLong(&ok);
    if (!ok || pid <= 0 || pid > std::numeric_limits<pid_t>::max()) return 0;
    // kill(pid, 0): no signal, only whether the process exists (EPERM: it does, not ours).
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) return 0;
    return pid;
}

// Reads `dir/file` with the run folder's reader (run/run_files.h: regular file, bounded size and
// nesting, one JSON library); false with a readable reason otherwise.
template <typename Record, typename Read>
bool readRunJson(const QDir& dir, const QString& file, Read read, Record* out, QString* error) {
    const QString path = dir.filePath(file);
    if (!QFileInfo::exists(path)) {
        *error = QObject::tr("no %1 in %2").arg(file, dir.path());
        return false;
    }
    try {
        *out = read(path.toStdString());
        return true;
    } catch (const DataError& e) {
        *error = QString::fromStdString(e.what());
        return false;
    }
}

void readSpec(const SpecRecord& spec, RunFolderInfo* info) {
    if (!spec.name.empty()) info->name = QString::fromStdString(spec.name);
    info->taskKind = QString::fromStdString(spec.task_kind);
    for (const auto& m : spec.methods) info->methods << QString::fromStdString(m.label);
    info->seeds = static_cast<int>(spec.seed_count);
    for (const auto s : spec.seeds) info->seedValues << static_cast<qint64>(s);
    info->modelFile = QString::fromStdString(spec.model_file);
    info->steps = spec.steps >= 0 && spec.steps <= std::numeric_limits<int>::max()
                      ? static_cast<int>(spec.steps)
                      : 0;
    info->sweepKey = QString::fromStdString(spec.sweep_key);
    info->sweepValues = info->sweepKey.isEmpty() ? 0 : int(spec.sweep_values.size());
    info->runsTotal = int(info->methods.size()) * info->seeds * std::max(1, info->sweepValues);
}

}  // namespace

QString seedsText(const QList<qint64>& seeds) {
    bool consecutive = seeds.size() > 3;
    for (int i = 1; consecutive && i < seeds.size(); ++i)
        consecutive = seeds[i] == seeds[i - 1] + 1;
    if (consecutive) return QStringLiteral("%1–%2").arg(seeds.front()).arg(seeds.back());
    QStringList parts;
    for (qint64 s : seeds) parts << QString::number(s);
    return parts.join(QStringLiteral(", "));
}

namespace {

void readSummary(const SummaryRecord& summary, RunFolderInfo* info) {
    info->status = summary.status.empty() ? QStringLiteral("incomplete")
                                          : QString::fromStdString(summary.status);
    // Per metric, per method: sum and count of the final values (non-finite ones are null).
    QMap<QString, QMap<QString, QPair<double, int>>> sums;
    info->runsDone = int(summary.runs.size());
    for (const auto& run : summary.runs) {
        const QString method = QString::fromStdString(run.method.empty() ? run.name : run.method);
        if (method.isEmpty()) continue;
        for (const char* metric : {"test_loss", "test_accuracy"}) {
            const auto v = run.final.find(metric);
            if (v == run.final.end() || !std::isfinite(v->second)) continue;
            auto& [sum, count] = sums[QString::fromLatin1(metric)][method];
            sum += v->second;
            ++count;
        }
    }
    info->bestMetric = sums.contains(QStringLiteral("test_accuracy"))
                           ? QStringLiteral("test_accuracy")
                           : QStringLiteral("test_loss");
    const auto chosen = sums.value(info->bestMetric);
    for (auto it = chosen.cbegin(); it != chosen.cend(); ++it)
        info->bestFinal.insert(it.key(), it.value().first / it.value().second);
}

}  // namespace

QDateTime timestampFromFolderName(const QString& folderName, QString* prefix) {
    static const QRegularExpression re(QStringLiteral("^(.*)-(\\d{8}-\\d{6})(?:-\\d+)?$"));
    const QRegularExpressionMatch m = re.match(folderName);
    if (!m.hasMatch()) return {};
    const QDateTime t = QDateTime::fromString(m.captured(2), QStringLiteral("yyyyMMdd-HHmmss"));
    if (!t.isValid()) return {};
    if (prefix) *prefix = m.captured(1);
    return t;
}

const qint64 kStalledAfterSeconds = 30 * 60;

qint64 endedFolderWriterPid(const QString& path) {
    return endedWriterPid(QDir(path));
}

RunFolderInfo readRunFolder(const QString& path) {
    RunFolderInfo info;
    const QFileInfo fi(path);
    info.path = QDir::cleanPath(fi.absoluteFilePath());
    QString prefix;
    info.created = timestampFromFolderName(fi.fileName(), &prefix);
    info.name = prefix.isEmpty() ? fi.fileName() : prefix;
    if (!fi.isDir()) {
        info.status = QStringLiteral("invalid");
        info.error = fi.exists() ? QObject::tr("%1 is not a folder").arg(info.path)
                                 : QObject::tr("%1 does not exist").arg(info.path);
        return info;
    }
    const QDir dir(info.path);
    if (!info.created.isValid()) {
        const QFileInfo spec(dir.filePath(kSpec));
        info.created = spec.exists() ? spec.lastModified() : fi.lastModified();
    }

    SpecRecord spec;
    if (!readRunJson(dir, kSpec, read_spec_json, &spec, &info.error)) {
        info.status = QStringLiteral("invalid");
        return info;
    }
    readSpec(spec, &info);
    info.valid = true;

    SummaryRecord summary;
    QString summaryError;
    if (readRunJson(dir, kSummary, read_summary_json, &summary, &summaryError)) {
        readSummary(summary, &info);
        // A run whose process was killed keeps saying "running". Its lock file names the
        // process that wrote it: on this machine, whether it still exists is known at once.
        // Otherwise: the engine writes metrics.csv at every log point, so a long silence means
        // nobody is writing any more.
        const bool running = info.status == QLatin1String(to_string(RunStatus::Running));
        if (const qint64 pid = running ? endedWriterPid(dir) : 0) {
            info.status = QStringLiteral("killed");
            const bool saved = !QDir(dir.filePath(QStringLiteral("resume")))
                                    .entryList({QStringLiteral("unit*.state")}, QDir::Files)
                                    .isEmpty();
            info.error = (saved ? QObject::tr("its process (pid %1) ended without finishing the "
                                              "run (killed or crashed); Resume run continues it "
                                              "from its last saved state")
                                : QObject::tr("its process (pid %1) ended without finishing the "
                                              "run (killed or crashed) before it saved a state "
                                              "to resume from; Re-run starts it again"))
                             .arg(pid);
        } else if (running) {
            QDateTime last;
            for (const QString& f : {kMetrics, kSummary}) {
                const QFileInfo w(dir.filePath(f));
                if (w.exists() && (!last.isValid() || w.lastModified() > last))
                    last = w.lastModified();
            }
            const qint64 quiet = last.isValid() ? last.secsTo(QDateTime::currentDateTime()) : 0;
            if (quiet > kStalledAfterSeconds) {
                info.status = QStringLiteral("stalled");
                info.error = QObject::tr(
                                 "no write for %1 min: the run's process has probably "
                                 "ended without finishing (killed or crashed)")
                                 .arg(quiet / 60);
            }
        }
    } else {
        info.status = QStringLiteral("incomplete");
        if (QFileInfo::exists(dir.filePath(kSummary))) info.error = summaryError;
    }
    return info;
}

bool looksLikeRunFolder(const QString& path) {
    const QDir dir(path);
    if (!QFileInfo(path).isDir() || !QFileInfo(dir.filePath(kSpec)).isFile()) return false;
    return QFileInfo(dir.filePath(kMetrics)).isFile() || QFileInfo(dir.filePath(kSummary)).isFile();
}

namespace {

void collectRunFolders(const QString& dir, int depthLeft, QStringList* out, QStringList* searched) {
    const QString clean = QDir::cleanPath(QFileInfo(dir).absoluteFilePath());
    if (looksLikeRunFolder(dir)) {
        out->append(clean);
        return;  // figures/, landscapes/, trajectories/ hold no runs
    }
    if (searched) searched->append(clean);
    if (depthLeft <= 0) return;
    const QFileInfoList subdirs =
        QDir(dir).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
    for (const QFileInfo& sub : subdirs)
        collectRunFolders(sub.absoluteFilePath(), depthLeft - 1, out, searched);
}

}  // namespace

QStringList findRunFolders(const QString& root, int maxDepth, QStringList* searched) {
    QStringList out;
    if (searched) searched->clear();
    if (root.isEmpty() || !QFileInfo(root).isDir()) return out;
    collectRunFolders(root, std::max(0, maxDepth), &out, searched);
    out.sort();
    if (searched) searched->sort();
    return out;
}

bool bestFinalResult(const RunFolderInfo& info, QString* method, double* value) {
    const bool higher = info.bestMetric == QLatin1String("test_accuracy");
    bool found = false;
    QString bestMethod;
    double best = 0;
    for (auto it = info.bestFinal.cbegin(); it != info.bestFinal.cend(); ++it) {
        if (!std::isfinite(it.value())) continue;
        if (!found || (higher ? it.value() > best : it.value() < best)) {
            bestMethod = it.key();
            best = it.value();
            found = true;
        }
    }
    if (found && method) *method = bestMethod;
    if (found && value) *value = best;
    return found;
}

}  // namespace liftlab
