#include "fork_offer.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <exception>
#include <limits>

#include "core/error_text.h"
#include "run/run_folder_schema.h"
#include "training/resume.h"

namespace liftlab {

namespace {

QString trFork(const char* text) {
    return QCoreApplication::translate("ForkOffer", text);
}

}  // namespace

int forkStepAtOrBefore(const QString& runDir, int step, QString* error) {
    if (runDir.isEmpty()) {
        if (error) *error = trFork("open a run folder first");
        return -1;
    }
    const QDir states(QDir(runDir).filePath(QLatin1String(run_folder::kForkStates)));
    if (states.entryList({QStringLiteral("*.state")}, QDir::Files).isEmpty()) {
        if (error)
            *error = trFork(
                         "%1 kept no fork states: run it with fork_state_every > 0 (All "
                         "settings: a state every k log points) to fork it")
                         .arg(QFileInfo(runDir).fileName());
        return -1;
    }
    try {
        return latest_fork_step(runDir.toStdString(), step);
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(error_message(e));
        return -1;
    }
}

QVector<int> keptForkSteps(const QString& runDir) {
    QVector<int> out;
    if (runDir.isEmpty()) return out;
    const QDir states(QDir(runDir).filePath(QLatin1String(run_folder::kForkStates)));
    if (states.entryList({QStringLiteral("*.state")}, QDir::Files).isEmpty()) return out;
    try {
        for (int step : kept_fork_steps(runDir.toStdString())) out.push_back(step);
    } catch (const std::exception&) {
        out.clear();  // the right-click menu's entry says why (whyNotForkable)
    }
    return out;
}

QString whyNotForkable(const QString& runDir) {
    QString error;
    forkStepAtOrBefore(runDir, std::numeric_limits<int>::max(), &error);
    return error;
}

}  // namespace liftlab
