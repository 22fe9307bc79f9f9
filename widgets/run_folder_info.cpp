#include "run_folder_info.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <algorithm>
#include <cmath>
#include <limits>

#include "run_folder_schema.h"

namespace liftlab {

namespace {

const QString kSpec = QString::fromLatin1(run_folder::kSpec);
const QString kSummary = QString::fromLatin1(run_folder::kSummary);
const QString kMetrics = QString::fromLatin1(run_folder::kMetrics);
constexpr qint64 kMaxJsonBytes = 64 << 20;  // a spec or summary larger than this is not ours

// Parses `dir/file` as a JSON object; false with a readable reason otherwise.
bool readJsonObject(const QDir& dir, const QString& file, QJsonObject* out, QString* error) {
    QFile f(dir.filePath(file));
    if (!f.exists()) {
        *error = QObject::tr("no %1 in %2").arg(file, dir.path());
        return false;
    }
    // A FIFO would block the window, /dev/zero would fill memory (its size() reads 0).
    if (!QFileInfo(f.fileName()).isFile()) {
        *error = QObject::tr("%1 is not a regular file").arg(file);
        return false;
    }
    if (!f.open(QIODevice::ReadOnly)) {
        *error = QObject::tr("cannot read %1: %2").arg(file, f.errorString());
        return false;
    }
    if (f.size() > kMaxJsonBytes) {
        *error = QObject::tr("%1 is too large (%2 bytes)").arg(file).arg(f.size());
        return false;
    }
    const QByteArray bytes = f.readAll();
    if (bytes.trimmed().isEmpty()) {
        *error = QObject::tr("%1 is empty").arg(file);
        return false;
    }
    QJsonParseError parse;
    const QJsonDocument doc = QJsonDocument::fromJson(bytes, &parse);
    if (parse.error != QJsonParseError::NoError) {
        *error = QObject::tr("%1 is not valid JSON: %2 (at byte %3)")
                     .arg(file, parse.errorString())
                     .arg(parse.offset);
        return false;
    }
    if (!doc.isObject()) {
        *error = QObject::tr("%1 is not a JSON object").arg(file);
        return false;
    }
    *out = doc.object();
    return true;
}

int nonNegativeInt(const QJsonValue& v) {
    if (!v.isDouble()) return 0;
    const double d = v.toDouble();
    if (!std::isfinite(d) || d < 0 || d > std::numeric_limits<int>::max()) return 0;
    return static_cast<int>(d);
}

void readSpec(const QJsonObject& spec, RunFolderInfo* info) {
    if (spec.value(QStringLiteral("name")).isString())
        info->name = spec.value(QStringLiteral("name")).toString();
    info->taskKind =
        spec.value(QStringLiteral("task")).toObject().value(QStringLiteral("kind")).toString();
    for (const QJsonValue& m : spec.value(QStringLiteral("methods")).toArray()) {
        const QJsonObject o = m.toObject();
        QString label = o.value(QStringLiteral("label")).toString();
        if (label.isEmpty()) label = o.value(QStringLiteral("name")).toString();
        if (label.isEmpty() && m.isString()) label = m.toString();
        if (!label.isEmpty()) info->methods << label;
    }
    const QJsonValue seeds = spec.value(QStringLiteral("seeds"));
    info->seeds = seeds.isArray() ? int(seeds.toArray().size()) : (seeds.isDouble() ? 1 : 0);
    for (const QJsonValue& s : seeds.isArray() ? seeds.toArray() : QJsonArray{seeds})
        if (s.isDouble()) info->seedValues << static_cast<qint64>(s.toDouble());
    const QJsonObject backbone = spec.value(QStringLiteral("backbone")).toObject();
    const QString icnnScript =
        spec.value(QStringLiteral("icnn")).toObject().value(QStringLiteral("script")).toString();
    if (backbone.value(QStringLiteral("kind")).toString() == QLatin1String("torchscript"))
        info->modelFile = backbone.value(QStringLiteral("script")).toString();
    else if (!icnnScript.isEmpty())
        info->modelFile = icnnScript;
    info->steps = nonNegativeInt(spec.value(QStringLiteral("steps")));
    const QJsonObject sweep = spec.value(QStringLiteral("sweep")).toObject();
    info->sweepKey = sweep.value(QStringLiteral("key")).toString();
    info->sweepValues =
        info->sweepKey.isEmpty() ? 0 : int(sweep.value(QStringLiteral("values")).toArray().size());
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

void readSummary(const QJsonObject& summary, RunFolderInfo* info) {
    const QString status = summary.value(QStringLiteral("status")).toString();
    info->status = status.isEmpty() ? QStringLiteral("incomplete") : status;
    // Per metric, per method: sum and count of the finite final values.
    QMap<QString, QMap<QString, QPair<double, int>>> sums;
    const QJsonArray runs = summary.value(QStringLiteral("runs")).toArray();
    info->runsDone = int(runs.size());
    for (const QJsonValue& r : runs) {
        const QJsonObject run = r.toObject();
        QString method = run.value(QStringLiteral("method")).toString();
        if (method.isEmpty()) method = run.value(QStringLiteral("name")).toString();
        if (method.isEmpty()) continue;
        const QJsonObject final = run.value(QStringLiteral("final")).toObject();
        for (const char* metric : {"test_loss", "test_accuracy"}) {
            const QJsonValue v = final.value(metric);
            if (!v.isDouble() || !std::isfinite(v.toDouble())) continue;  // null = non-finite
            auto& [sum, count] = sums[metric][method];
            sum += v.toDouble();
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

    QJsonObject spec;
    if (!readJsonObject(dir, kSpec, &spec, &info.error)) {
        info.status = QStringLiteral("invalid");
        return info;
    }
    readSpec(spec, &info);
    info.valid = true;

    QJsonObject summary;
    QString summaryError;
    if (readJsonObject(dir, kSummary, &summary, &summaryError)) {
        readSummary(summary, &info);
        // A run whose process was killed keeps saying "running": the engine writes metrics.csv
        // at every log point, so a long silence means nobody is writing any more.
        if (info.status == QLatin1String(to_string(RunStatus::Running))) {
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
