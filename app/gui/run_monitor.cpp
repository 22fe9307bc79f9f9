#include "run_monitor.h"

#include <QDir>
#include <QFileInfo>
#include <QStringList>
#include <exception>
#include <memory>

#include "live_curves.h"
#include "loss_curve_panel.h"
#include "method_colors.h"
#include "panel_feed.h"
#include "run/run_folder_schema.h"
#include "run_caption.h"
#include "run_comparison.h"
#include "run_controls.h"
#include "run_folder_data.h"
#include "run_folder_scanner.h"
#include "run_history_panel.h"
#include "run_status_bar.h"
#include "run_view.h"
#include "spec/experiment_spec.h"
#include "training_session.h"

namespace liftlab {

namespace {

// A forked run's parent, read for its curves; null when it cannot be read (the child is then
// shown alone, with the fork marker).
std::shared_ptr<const RunFolderData> readForkParent(const QString& parent) {
    try {
        return std::make_shared<const RunFolderData>(read_run_folder(parent.toStdString()));
    } catch (const std::exception&) {
        return nullptr;
    }
}

}  // namespace

RunMonitor::RunMonitor(const Parts& parts, QObject* parent) : QObject(parent), p_(parts) {
    TrainingSession* session = p_.session;
    connect(session, &TrainingSession::pointsArrived, this, &RunMonitor::onPoints);
    connect(session, &TrainingSession::spectraArrived, p_.view, &RunView::addSpectra);
    connect(session, &TrainingSession::tracesArrived, p_.view, &RunView::addTraces);
    // Changes applied mid-run (sent from the window, or the spec's --event): markers at once.
    connect(session, &TrainingSession::eventsApplied, p_.view, &RunView::addEvents);
    connect(session, &TrainingSession::eventsApplied, this,
            [this](const QVector<SessionEvent>& events) { p_.curves->addEvents(events); });
    connect(session, &TrainingSession::statusChanged, this, &RunMonitor::onStatus);
    connect(session, &TrainingSession::progress, this, &RunMonitor::onProgress);
    connect(session, &TrainingSession::workersChanged, p_.status, &RunStatusBar::setWorkers);
    connect(session, &TrainingSession::finished, this, &RunMonitor::onFinished);
    connect(session, &TrainingSession::failed, this, &RunMonitor::onFailed);
    // A landscape computed while no run goes on has the progress bar and Cancel.
    connect(p_.view, &RunView::landscapeProgress, this, [this](double f) {
        if (p_.session->isRunning()) return;
        p_.status->setFraction(f);
        p_.status->setCancelEnabled(true);
        p_.status->showMessage(tr("Computing landscapes — %1 %").arg(static_cast<int>(f * 100)));
    });
    connect(p_.view, &RunView::landscapeDone, this, [this](const QString& message, bool ok) {
        if (p_.session->isRunning()) return;
        p_.status->setCancelEnabled(false);
        p_.status->showMessage(message, !ok && message.contains(tr("failed")));
    });
}

void RunMonitor::begin(const ExperimentSpec& spec, const QString& title) {
    // Legend in the spec's order, from the first tick on (a sweep's labels come as they arrive).
    QStringList legend;
    if (spec.sweep.key.empty())
        for (const auto& m : spec.methods) legend << QString::fromStdString(m.label);
    std::vector<std::pair<std::string, std::string>> methods;
    for (const auto& m : spec.methods) methods.push_back({m.label, m.name});
    const auto losses = classification_losses(spec.task.kind, methods);
    // ce's cross-entropy and the others' squared error are not comparable: a classification run
    // whose methods mix them opens on accuracy (and a later regression run back on the loss).
    const QString accuracy = QStringLiteral("test_accuracy"), loss = QStringLiteral("test_loss");
    QString shown = p_.curves->metric();
    if (mixedTrainingLosses(losses) && shown == loss) shown = accuracy;
    if (losses.empty() && shown == accuracy) shown = loss;
    if (shown != p_.curves->metric()) p_.curves->setMetric(shown);
    // The metric box lists this run's metrics, as it logs them.
    p_.controls->setMetrics({shown}, shown);
    p_.curves->beginLive(title, spec.seeds.empty() ? std::optional<quint64>() : spec.seeds.front(),
                         legend, losses);
    // A fork: its parent's curves up to the fork step, and the fork marked.
    if (!spec.parent.empty())
        p_.curves->setForkParent(readForkParent(QString::fromStdString(spec.parent)),
                                 spec.fork_step, true);
    p_.view->beginRun(title);
    p_.view->setComparison({});
    p_.view->setEmptyReasons(RunView::expectationsOf(spec, /*live=*/true));
    p_.view->setLandscapeRun(QString(), {}, {});
    p_.status->beginRun(spec.steps);
}

bool RunMonitor::running() const {
    return p_.session->isRunning() && p_.controls->stopEnabled();
}

void RunMonitor::onPoints(const QVector<SessionPoint>& points) {
    p_.view->addPoints(points);
    QStringList metrics;
    for (const auto& p : points) metrics << p.metric;
    p_.controls->addMetrics(metrics);
    p_.curves->addLive(points);
}

void RunMonitor::onStatus(const SessionStatus& s) {
    if (!stopped_early(s.status)) return;
    const QString note = tr("%1 at step %2").arg(QLatin1String(to_string(s.status))).arg(s.step);
    p_.curves->noteSeries(s.method, note);
    QString message = s.method + QLatin1Char(' ') + note;
    if (s.status == RunStatus::Failed && !s.reason.isEmpty())
        message += QStringLiteral(" (") + s.reason + QLatin1Char(')');
    p_.status->addNote(message);
    if (running()) p_.status->showMessage(p_.status->progressText());
}

void RunMonitor::onProgress(double fraction, int step, int total) {
    p_.status->setFraction(fraction);
    p_.status->setStep(step, total);
    if (running()) p_.status->showMessage(p_.status->progressText());
}

void RunMonitor::onFinished(const QString& statusText, const QString& runDir) {
    const auto status = parse_run_status(statusText.toStdString());
    p_.view->curves()->rescale();
    RunStatusBar& bar = *p_.status;
    QString text;
    if (status == RunStatus::Cancelled)
        text = tr("Stopped (cancelled) at step %L1 of %L2.").arg(bar.step()).arg(bar.totalSteps());
    else if (status == RunStatus::Ok)
        text = tr("Finished: %L1 steps.").arg(bar.totalSteps());
    else
        text = tr("Finished: every method %1.").arg(statusText);
    if (status == RunStatus::Ok) bar.setFraction(1.0);
    if (!bar.notes().isEmpty())
        text += QLatin1Char(' ') + bar.notes().join(QStringLiteral("; ")) + QLatin1Char('.');
    if (!runDir.isEmpty()) text += tr(" Run folder: %1").arg(QDir::toNativeSeparators(runDir));
    QStringList warnings;
    const bool fromFolder = !runDir.isEmpty() && showRunFolder(runDir, &warnings);
    // Warnings of the run (an ESS below 1 % of the importance draws: log Z and the test NLL are
    // unreliable) go in the status line, shown as an error.
    for (const QString& w : std::as_const(warnings)) text += tr(" Warning: %1.").arg(w);
    const bool failed = status == RunStatus::Diverged || status == RunStatus::Failed;
    bar.showMessage(text, /*error=*/failed || !warnings.isEmpty());
    Q_EMIT ended(!failed, runDir, fromFolder);
}

bool RunMonitor::showRunFolder(const QString& runDir, QStringList* warnings) {
    // Everything the run folder holds (σ²_Jac, dwells, seeds' spread) goes to the panels; the
    // curves keep the live history unless several seeds ran (then mean ± sd).
    bool severalSeeds = false;
    try {
        auto run = std::make_shared<RunFolderData>(read_run_folder(runDir.toStdString()));
        for (const auto& w : run->warnings) warnings->append(QString::fromStdString(w));
        p_.view->showRun(*run);
        p_.view->setLandscapeRunFolder(runDir);
        for (const auto& [method, finals] : run->finals)
            for (const auto& [metric, values] : finals)
                severalSeeds = severalSeeds || values.size() > 1;
        if (severalSeeds) p_.curves->showFinishedRun(run);
    } catch (const std::exception&) {
        // A run folder that cannot be read back costs only the extra panels.
    }
    p_.history->refresh();
    p_.history->selectRun(runDir);
    return severalSeeds;
}

QString RunMonitor::showOpened(const std::vector<std::shared_ptr<const RunFolderData>>& runs,
                               const QStringList& dirs, const QString& fallbackMetric) {
    const bool comparing = runs.size() > 1;
    std::shared_ptr<const RunFolderData> shown = runs.front();
    QString title = runCaption(dirs.front(), *runs.front());
    QString caption;
    if (comparing) {
        shown = std::make_shared<const RunFolderData>(merge_compared_runs(runs));
        static const char* const kStyle[] = {"solid", "dashed", "dotted"};
        QStringList names, key;
        for (size_t i = 0; i < runs.size(); ++i) {
            const QString letter(QChar(QLatin1Char('A').unicode() + int(i)));
            names << QStringLiteral("%1: %2").arg(letter, runShortCaption(dirs[int(i)], *runs[i]));
            key << tr("%1 (%2 lines) = %3")
                       .arg(letter, QString::fromLatin1(kStyle[i % 3]),
                            runCaption(dirs[int(i)], *runs[i]));
        }
        title = tr("Comparing %1").arg(names.join(QStringLiteral(" · ")));
        caption = tr("Line style tells the runs apart, colour the methods:") + QLatin1Char('\n') +
                  key.join(QLatin1Char('\n'));
    }
    p_.curves->showRuns(shown, title, caption);
    // A forked run alone: with its parent's curves up to the fork; compared with its parent (or a
    // sibling), the fork is marked on the step axis they share.
    for (int i = 0; i < dirs.size(); ++i) {
        int forkStep = 0;
        const QString parent = forkParentOf(dirs[i], &forkStep);
        if (parent.isEmpty()) continue;
        if (!comparing) {
            p_.curves->setForkParent(readForkParent(parent), forkStep, true);
        } else if (dirs.contains(parent) || i == 0) {
            p_.curves->setForkParent(nullptr, forkStep, false);
        }
        break;
    }
    QStringList metrics;
    for (const auto& m : shown->metric_names()) metrics << QString::fromStdString(m);
    if (!shown->metrics.count(p_.curves->metric().toStdString()))
        p_.curves->setMetric(shown->metrics.count(fallbackMetric.toStdString()) || metrics.isEmpty()
                                 ? fallbackMetric
                                 : metrics.front());
    // A classification run whose methods train on different losses is compared on accuracy.
    if (p_.curves->metric() == QLatin1String("test_loss") &&
        mixedTrainingLosses(shown->training_loss) && shown->metrics.count("test_accuracy"))
        p_.curves->setMetric(QStringLiteral("test_accuracy"));
    p_.controls->setMetrics(metrics, p_.curves->metric());
    p_.curves->redraw();
    p_.view->showRun(*shown);
    p_.view->setComparison(comparing ? dirs : QStringList());
    p_.view->setLandscapeRunFolder(dirs.front());
    // The history lists the run's neighbours when its own folder has no runs.
    if (p_.history->runCount() == 0) p_.history->setRoot(QFileInfo(dirs.front()).path());
    p_.history->selectRun(dirs.front());
    p_.status->setFraction(0);
    QString text =
        comparing ? title : tr("Opened %1 — %2").arg(QDir::toNativeSeparators(dirs.front()), title);
    for (const auto& w : shown->warnings)
        text += tr(" Warning: %1.").arg(QString::fromStdString(w));
    p_.status->showMessage(text, /*error=*/!shown->warnings.empty());
    return title;
}

void RunMonitor::onFailed(const QString& message) {
    p_.status->setFraction(0);
    p_.status->showMessage(tr("Run failed: %1").arg(message), /*error=*/true);
    Q_EMIT ended(false, QString(), false);
}

}  // namespace liftlab
