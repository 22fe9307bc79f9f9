#include "run_caption.h"

#include <QFileInfo>
#include <QRegularExpression>
#include <QStringList>
#include <algorithm>

#include "run_comparison.h"
#include "run_folder_data.h"
#include "run_folder_info.h"

namespace liftlab {

namespace {

// "525 of 1,500 steps, cancelled" or "1,500 steps, ok".
QString stepsAndStatus(const RunFolderInfo& info, const RunFolderData& run) {
    const int done = last_logged_step(run);
    QString steps = done == info.steps || info.steps == 0
                        ? QObject::tr("%1 steps").arg(done)
                        : QObject::tr("%1 of %2 steps").arg(done).arg(info.steps);
    return steps + QStringLiteral(", ") + info.status;
}

// "cf-regression" or "cf-regression #2" (the folder's -N suffix).
QString shortName(const QString& runDir, const RunFolderInfo& info) {
    const QString folder = QFileInfo(runDir).fileName();
    static const QRegularExpression suffix(QStringLiteral("-\\d{8}-\\d{6}-(\\d+)$"));
    const auto m = suffix.match(folder);
    const QString name = info.name.isEmpty() ? folder : info.name;
    return m.hasMatch() ? QStringLiteral("%1 #%2").arg(name, m.captured(1)) : name;
}

// A claims folder (`liftlab-cli claims`): "claims-full-… · claims (full tier) · 6 claims: 5 holds,
// 1 refuted · running". It has no spec, steps or methods of its own.
QString claimsCaption(const QString& runDir, const RunFolderData& run) {
    QStringList counts;
    for (const char* verdict : {"holds", "refuted", "inconclusive", "not run"}) {
        const auto n = std::count_if(run.claims.begin(), run.claims.end(),
                                     [&](const auto& c) { return c.verdict == verdict; });
        if (n > 0) counts << QStringLiteral("%1 %2").arg(n).arg(QString::fromLatin1(verdict));
    }
    QStringList parts{QFileInfo(runDir).fileName(), QString::fromStdString(run.title),
                      run.claims.empty() ? QObject::tr("no claim finished yet")
                      : run.claims.size() == 1
                          ? QObject::tr("1 claim: %1").arg(counts.join(QStringLiteral(", ")))
                          : QObject::tr("%1 claims: %2")
                                .arg(run.claims.size())
                                .arg(counts.join(QStringLiteral(", ")))};
    QString status = QString::fromStdString(run.status);
    // A check whose process ended mid-way keeps saying "running" in claims.json; its lock file
    // names the process, so on this machine that is known at once.
    if (status == QLatin1String("running"))
        if (const qint64 pid = endedFolderWriterPid(runDir))
            status = QObject::tr(
                         "stopped (its process, pid %1, ended; liftlab-cli claims "
                         "--resume continues it)")
                         .arg(pid);
    if (!status.isEmpty()) parts << status;
    return parts.join(QStringLiteral(" · "));
}

}  // namespace

QString runCaption(const QString& runDir, const RunFolderData& run) {
    if (run.claims_folder) return claimsCaption(runDir, run);
    const RunFolderInfo info = readRunFolder(runDir);
    QStringList parts;
    parts << shortName(runDir, info);
    if (!info.taskKind.isEmpty()) parts << info.taskKind;
    parts << (info.modelFile.isEmpty() ? QObject::tr("built-in model")
                                       : QFileInfo(info.modelFile).fileName());
    if (!info.methods.isEmpty()) parts << info.methods.join(QStringLiteral(", "));
    if (!info.seedValues.isEmpty())
        parts << QObject::tr("seeds %1").arg(seedsText(info.seedValues));
    parts << stepsAndStatus(info, run);
    if (info.created.isValid())
        parts << info.created.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    return parts.join(QStringLiteral(" · "));
}

QString runShortCaption(const QString& runDir, const RunFolderData& run) {
    if (run.claims_folder) return claimsCaption(runDir, run);
    const RunFolderInfo info = readRunFolder(runDir);
    QString text = shortName(runDir, info);
    if (!info.modelFile.isEmpty())
        text += QStringLiteral(" · ") + QFileInfo(info.modelFile).fileName();
    return QStringLiteral("%1 (%2)").arg(text, stepsAndStatus(info, run));
}

}  // namespace liftlab
