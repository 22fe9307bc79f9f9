#include "comparison_file.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

namespace liftlab {

bool writeComparison(const QString& file, const Comparison& comparison, QString* error) {
    const QDir home = QFileInfo(file).absoluteDir();
    QJsonArray runs;
    for (const QString& run : comparison.runs) {
        const QString relative = home.relativeFilePath(run);
        runs.append(relative.startsWith(QLatin1String("..")) ? QDir::cleanPath(run) : relative);
    }
    QJsonObject root{{QStringLiteral("liftlab_compare"), kComparisonVersion},
                     {QStringLiteral("runs"), runs}};
    if (!comparison.metric.isEmpty()) root[QStringLiteral("metric")] = comparison.metric;
    QSaveFile out(file);
    if (!out.open(QIODevice::WriteOnly) ||
        out.write(QJsonDocument(root).toJson(QJsonDocument::Indented)) < 0 || !out.commit()) {
        *error = QObject::tr("%1: cannot write (%2)").arg(file, out.errorString());
        return false;
    }
    return true;
}

bool readComparison(const QString& file, Comparison* comparison, QString* error) {
    const auto fail = [&](const QString& what) {
        *error = QObject::tr("%1: %2").arg(file, what);
        return false;
    };
    QFile in(file);
    if (!in.open(QIODevice::ReadOnly))
        return fail(QObject::tr("cannot open (%1)").arg(in.errorString()));
    QJsonParseError parse{};
    const QJsonDocument doc = QJsonDocument::fromJson(in.read(1 << 20), &parse);
    if (parse.error != QJsonParseError::NoError)
        return fail(
            QObject::tr("not JSON at offset %1 (%2)").arg(parse.offset).arg(parse.errorString()));
    if (!doc.isObject()) return fail(QObject::tr("expected a JSON object"));
    const QJsonObject root = doc.object();
    const QJsonValue version = root.value(QStringLiteral("liftlab_compare"));
    if (!version.isDouble())
        return fail(QObject::tr("key 'liftlab_compare': expected the format version (1)"));
    if (version.toInt() > kComparisonVersion)
        return fail(
            QObject::tr("key 'liftlab_compare': version %1 is newer than this LiftLab reads (%2)")
                .arg(version.toInt())
                .arg(kComparisonVersion));
    const QJsonValue runs = root.value(QStringLiteral("runs"));
    if (!runs.isArray()) return fail(QObject::tr("key 'runs': expected a list of run folders"));
    const QDir home = QFileInfo(file).absoluteDir();
    Comparison out;
    const QJsonArray list = runs.toArray();
    for (int i = 0; i < list.size(); ++i) {
        if (!list[i].isString() || list[i].toString().isEmpty())
            return fail(QObject::tr("key 'runs[%1]': expected a folder name").arg(i));
        out.runs << QDir::cleanPath(home.absoluteFilePath(list[i].toString()));
    }
    if (out.runs.size() < 2 || out.runs.size() > kMaxComparedRuns)
        return fail(QObject::tr("key 'runs': %1 run folder(s); a comparison holds 2 to %2")
                        .arg(out.runs.size())
                        .arg(kMaxComparedRuns));
    out.metric = root.value(QStringLiteral("metric")).toString();
    *comparison = out;
    return true;
}

}  // namespace liftlab
