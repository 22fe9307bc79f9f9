#include "run_caption.h"

#include <QFileInfo>
#include <QRegularExpression>
#include <QStringList>

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

}  // namespace

QString runCaption(const QString& runDir, const RunFolderData& run) {
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
    const RunFolderInfo info = readRunFolder(runDir);
    QString text = shortName(runDir, info);
    if (!info.modelFile.isEmpty())
        text += QStringLiteral(" · ") + QFileInfo(info.modelFile).fileName();
    return QStringLiteral("%1 (%2)").arg(text, stepsAndStatus(info, run));
}

}  // namespace liftlab
