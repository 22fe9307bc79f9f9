#include "main_window.h"

#include <QAction>
#include <QCloseEvent>
#include <QDesktopServices>
#include <QDir>
#include <QDockWidget>
#include <QDropEvent>
#include <QFileInfo>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTimer>
#include <QToolBar>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>
#include <exception>

#include "comparison_file.h"
#include "core/error_text.h"
#include "experiment_form.h"
#include "fork_offer.h"
#include "fork_point_slider.h"
#include "lab_actions.h"
#include "lab_palette.h"
#include "live_actions.h"
#include "loss_curve_panel.h"
#include "plot_style.h"
#include "run/run_folder_schema.h"
#include "run_controls.h"
#include "run_folder_data.h"
#include "run_history_panel.h"
#include "run_monitor.h"
#include "run_queue.h"
#include "run_status_bar.h"
#include "run_view.h"
#include "spec/experiment_spec.h"
#include "training/resume.h"
#include "training_session.h"

namespace liftlab {

namespace {

const QString kShownMetric = QStringLiteral("test_loss");

// The user's LiftLab settings (named as main.cpp names the application; see settings_scope.h).
QSettings labSettings() {
    return QSettings(QStringLiteral("LiftLab"), QStringLiteral("LiftLab"));
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), session_(new TrainingSession(this)) {
    setWindowTitle(tr("LiftLab"));
    view_ = new RunView(this);
    curves_ = std::make_unique<LiveCurves>(view_->curves(), kShownMetric);

    splitter_ = new QSplitter(Qt::Horizontal, this);
    auto* scroll = new QScrollArea(splitter_);
    QWidget* side = buildSidePanel();
    scroll->setWidget(side);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    splitter_->addWidget(scroll);
    splitter_->addWidget(view_);
    splitter_->setStretchFactor(0, 0);
    splitter_->setStretchFactor(1, 1);
    // The side column is never narrower than the panel's own minimum beside a vertical scroll
    // bar (a short window scrolls the form): no horizontal bar under it, whatever width a saved
    // layout or a dragged splitter asks for.
    const int sideWidth =
        side->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width();
    scroll->setMinimumWidth(sideWidth);
    splitter_->setSizes({std::max(340, sideWidth), 1000});
    setCentralWidget(splitter_);

    status_ = new RunStatusBar(statusBar());
    connect(status_, &RunStatusBar::cancelRequested, this, [this] {
        stopRun();
        view_->cancelLandscape();
    });
    buildHistoryDock();
    setAcceptDrops(true);
    addToolBar(Qt::TopToolBarArea, controls_->toolBar());
    connectSession();
    actions_ = new LabActions(this, historyDock_, controls_);
    live_ = new LiveActions(this, session_);
    readSettings();
    connect(form_, &ExperimentForm::outputDirEdited, historyPanel_, &RunHistoryPanel::setRoot);
    connect(form_, &ExperimentForm::readinessChanged, this, &MainWindow::updateStartState);
    connect(view_->curves(), &LossCurvePanel::forkRequested, this,
            [this](int step) { forkFromStep(step); });
    connect(view_->forkPoints(), &ForkPointSlider::forkRequested, this,
            [this](int step) { forkFromStep(step); });
    setRunning(false);
    updateStartState();
    showMessage(tr("Ready. Pick a preset and press Start, or open a run from the history."));
    restoreSession();
}

MainWindow::~MainWindow() {
    // First, while every widget still exists: stop the run and join the worker thread.
    session_->disconnect(this);
    session_->disconnect(monitor_);
    delete session_;
    session_ = nullptr;
}

QWidget* MainWindow::buildSidePanel() {
    auto* panel = new QWidget;
    auto* column = new QVBoxLayout(panel);
    form_ = new ExperimentForm(panel);
    controls_ = new RunControls(kShownMetric, panel);
    queue_ = controls_->queue();
    column->addWidget(form_);
    column->addWidget(controls_);
    column->addStretch(1);
    connect(controls_, &RunControls::metricChosen, this, &MainWindow::showMetric);
    connect(controls_, &RunControls::startClicked, this, &MainWindow::startRun);
    connect(controls_, &RunControls::queueClicked, this, [this] { queueRun(); });
    connect(controls_, &RunControls::pauseClicked, this, &MainWindow::togglePause);
    connect(controls_, &RunControls::stopClicked, this, &MainWindow::stopRun);
    connect(controls_, &RunControls::rerunClicked, this, [this] { rerun(); });
    connect(controls_, &RunControls::resumeRunClicked, this, [this] { resumeRun(); });
    connect(queue_, &RunQueue::changed, this, &MainWindow::saveSession);
    return panel;
}

void MainWindow::buildHistoryDock() {
    historyPanel_ = new RunHistoryPanel(this);
    historyDock_ = new QDockWidget(tr("Run history"), this);
    historyDock_->setObjectName(QStringLiteral("historyDock"));
    historyDock_->setWidget(historyPanel_);
    addDockWidget(Qt::BottomDockWidgetArea, historyDock_);
    resizeDocks({historyDock_}, {170}, Qt::Vertical);
    connect(historyPanel_, &RunHistoryPanel::openRequested, this,
            [this](const QString& dir) { openRun(dir); });
    connect(historyPanel_, &RunHistoryPanel::compareRequested, this,
            [this](const QStringList& runs) { compareRuns(runs); });
    connect(historyPanel_, &RunHistoryPanel::revealRequested, this,
            [](const QString& dir) { QDesktopServices::openUrl(QUrl::fromLocalFile(dir)); });
}

void MainWindow::connectSession() {
    connect(session_, &TrainingSession::pausedChanged, this, [this](bool paused) {
        controls_->setPaused(paused);
        status_->setPaused(paused);
        showMessage(status_->progressText());
    });
    monitor_ =
        new RunMonitor({session_, view_, curves_.get(), status_, historyPanel_, controls_}, this);
    connect(monitor_, &RunMonitor::ended, this, &MainWindow::onRunEnded);
}

// The one place that reads the window's settings (writeSettings is its pair).
void MainWindow::readSettings() {
    const QSettings settings = labSettings();
    if (!restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray()))
        resize(1400, 900);
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    splitter_->restoreState(settings.value(QStringLiteral("window/splitter")).toByteArray());
    const QString lastOut = settings.value(QStringLiteral("paths/output")).toString();
    if (!lastOut.isEmpty()) form_->setOutputDir(lastOut);
    setExportDpi(settings.value(QStringLiteral("export/dpi"), 144).toInt());
    view_->setSmoothing(settings.value(QStringLiteral("plots/smoothing"), 0.0).toDouble());
    view_->restoreSettings(settings);
    setDarkPalette(settings.value(QStringLiteral("view/dark"), false).toBool());
    actions_->readSettings(settings);
    historyPanel_->setRoot(form_->outputDir());
}

void MainWindow::writeSettings() const {
    QSettings settings = labSettings();
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("window/splitter"), splitter_->saveState());
    settings.setValue(QStringLiteral("paths/output"), form_->outputDir());
    settings.setValue(QStringLiteral("export/dpi"), exportDpi_);
    settings.setValue(QStringLiteral("plots/smoothing"), view_->smoothing());
    settings.setValue(QStringLiteral("view/dark"), dark_);
    view_->saveSettings(settings);
    actions_->writeSettings(settings);
}

// The session (queued runs, the opened run) is saved whenever it changes, so a crash keeps it.
void MainWindow::saveSession() const {
    QSettings settings = labSettings();
    settings.setValue(QStringLiteral("session/queue"), queue_->save());
    settings.setValue(QStringLiteral("session/opened"), openedRun_);
    settings.setValue(QStringLiteral("session/compared"), compared_);
}

void MainWindow::restoreSession() {
    const QSettings settings = labSettings();
    queue_->restore(settings.value(QStringLiteral("session/queue")).toStringList());
    if (!queue_->isEmpty())
        showMessage(
            tr("%n queued run(s) restored from the last session; Start or Queue runs "
               "them in order.",
               nullptr, queue_->size()));
    const QString opened = settings.value(QStringLiteral("session/opened")).toString();
    const QStringList compared = settings.value(QStringLiteral("session/compared")).toStringList();
    const auto readable = [](const QString& dir) {
        return QFileInfo::exists(dir + QLatin1Char('/') + QLatin1String(run_folder::kMetrics));
    };
    if (compared.size() >= 2 && std::all_of(compared.begin(), compared.end(), readable))
        compareRuns(compared);
    else if (!opened.isEmpty() && readable(opened))
        openRun(opened);
}

void MainWindow::setOutputDir(const QString& dir) {
    form_->setOutputDir(dir);
    historyPanel_->setRoot(dir);
}

bool MainWindow::buildSpec(nlohmann::json* out, QString* title) {
    QString error;
    if (form_->buildSpec(out, title, &error)) return true;
    showMessage(error, /*error=*/true);
    return false;
}

void MainWindow::startRun() {
    if (session_->isRunning()) return;
    nlohmann::json j;
    QString title;
    if (!buildSpec(&j, &title)) return;
    startSpec(j, form_->outputDir(), title);
}

bool MainWindow::queueRun() {
    nlohmann::json j;
    QString title;
    if (!buildSpec(&j, &title)) return false;
    if (!session_->isRunning()) {
        startSpec(j, form_->outputDir(), title);
        return true;
    }
    queue_->enqueue({j, form_->outputDir(), title});
    showMessage(tr("Queued %1 (%2 waiting).").arg(title).arg(queue_->size()));
    return true;
}

void MainWindow::startNextQueued() {
    if (session_->isRunning() || queue_->isEmpty()) return;
    const QueuedRun next = queue_->takeFirst();
    startSpec(next.spec, next.outDir, next.title);
}

void MainWindow::startSpec(const nlohmann::json& j, const QString& outDir, const QString& title) {
    ExperimentSpec spec;
    try {
        spec = parse_spec(j);
    } catch (const std::exception& e) {
        showMessage(tr("Cannot start: %1").arg(QString::fromStdString(e.what())), true);
        return;
    }
    openedRun_.clear();
    compared_.clear();
    actions_->saveComparisonAction()->setEnabled(false);
    lastRunDir_.clear();
    updateResumeState();
    monitor_->begin(spec, title);
    setWindowTitle(tr("LiftLab — %1").arg(title));
    if (!session_->start(spec, outDir)) return;
    // The history lists the folder the run writes into, so the new run shows up there.
    if (QDir::cleanPath(QFileInfo(outDir).absoluteFilePath()) != historyPanel_->root())
        historyPanel_->setRoot(outDir);
    setRunning(true);
    showMessage(tr("Starting %1…").arg(title));
}

void MainWindow::togglePause() {
    if (!session_->isRunning()) return;
    if (session_->isPaused())
        session_->resume();
    else
        session_->pause();
}

void MainWindow::stopRun() {
    if (!session_->isRunning()) return;
    session_->stop();
    controls_->setStopEnabled(false);
    showMessage(tr("Stopping…"));
}

void MainWindow::setRunning(bool running) {
    form_->setEnabled(!running);
    controls_->setRunning(running);
    status_->setPaused(false);
    status_->setCancelEnabled(running);
    if (live_) live_->setRunning(running);
    updateForkOffer();
}

void MainWindow::updateForkOffer() {
    const bool offered = !session_->isRunning() && !openedRun_.isEmpty() && compared_.isEmpty();
    const QString whyNot = offered ? whyNotForkable(openedRun_) : QString();
    view_->curves()->setForkOffer(offered, whyNot);
    view_->setForkPoints(offered && whyNot.isEmpty() ? keptForkSteps(openedRun_) : QVector<int>());
}

bool MainWindow::forkFromStep(int step) {
    if (session_->isRunning() || openedRun_.isEmpty() || !compared_.isEmpty()) {
        showMessage(tr("Fork: open one finished run first (not while a run goes on)."), true);
        return false;
    }
    const QString parent = openedRun_;
    QString error;
    const int forkStep = forkStepAtOrBefore(parent, step, &error);
    if (forkStep < 0) {
        showMessage(tr("Cannot fork: %1").arg(error), true);
        return false;
    }
    if (!form_->loadRun(parent, &error)) {
        showMessage(tr("Cannot fork: %1").arg(error), true);
        return false;
    }
    form_->setFork(parent, forkStep, step);
    view_->forkPoints()->setNearestStep(forkStep);  // the slider shows where the fork starts
    showMessage(tr("Fork of %1 after step %2 (asked for step %3): change settings or methods "
                   "in the form, then Start.")
                    .arg(QFileInfo(parent).fileName())
                    .arg(forkStep)
                    .arg(step));
    return true;
}

void MainWindow::updateStartState() {
    controls_->setStartBlocked(form_->startBlockReason());
}

void MainWindow::showMetric(const QString& metric) {
    if (metric.isEmpty() || metric == curves_->metric()) return;
    curves_->setMetric(metric);
    controls_->showMetric(metric);
    curves_->redraw();
}

void MainWindow::onRunEnded(bool ok, const QString& runDir, bool curvesFromFolder) {
    setRunning(false);
    lastRunDir_ = runDir;
    if (curvesFromFolder) openedRun_ = runDir;
    if (!runDir.isEmpty()) curves_->loadEvents(runDir);  // its events.csv, as it was applied
    // The finished run can be run again as it was.
    controls_->setRerunTarget(runDir.isEmpty() ? QString() : QFileInfo(runDir).fileName());
    updateResumeState();
    updateForkOffer();
    Q_EMIT runEnded(ok);
    QTimer::singleShot(0, this, &MainWindow::startNextQueued);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    writeSettings();
    saveSession();
    // Closing mid-run stops the run; the session joins its thread when it is destroyed.
    session_->stop();
    QMainWindow::closeEvent(event);
}

bool MainWindow::openRun(const QString& runDir, const QString& compareDir) {
    return compareDir.isEmpty() ? showRuns({runDir}) : showRuns({runDir, compareDir});
}

bool MainWindow::compareRuns(const QStringList& runDirs) {
    if (runDirs.size() < 2 || runDirs.size() > kMaxComparedRuns) {
        showMessage(tr("A comparison holds 2 to %1 runs.").arg(kMaxComparedRuns), true);
        return false;
    }
    return showRuns(runDirs);
}

bool MainWindow::showRuns(const QStringList& dirs) {
    if (session_->isRunning()) {
        showMessage(tr("A run is going on: stop it (or wait) before opening another."), true);
        return false;
    }
    std::vector<std::shared_ptr<const RunFolderData>> runs;
    QStringList clean;
    try {
        for (const QString& dir : dirs) {
            runs.push_back(std::make_shared<RunFolderData>(read_run_folder(dir.toStdString())));
            clean << QDir::cleanPath(QFileInfo(dir).absoluteFilePath());
        }
    } catch (const std::exception& e) {
        showMessage(tr("Cannot open: %1").arg(QString::fromStdString(e.what())), true);
        return false;
    }
    openedRun_ = clean.front();
    compared_ = clean.size() > 1 ? clean : QStringList();
    lastRunDir_ = openedRun_;
    const QString title = monitor_->showOpened(runs, clean, kShownMetric);
    setWindowTitle(tr("LiftLab — %1").arg(title));
    actions_->saveComparisonAction()->setEnabled(clean.size() > 1);
    // The form shows how run A was run (its spec.json): Start or Re-run repeats it. A claims
    // folder has no spec of its own (its sub-runs do): the form keeps its values, quietly.
    QString formError;
    const bool claimsFolder = runs.front()->claims_folder;
    if (!claimsFolder && form_->isEnabled() && !form_->loadRun(openedRun_, &formError))
        showMessage(statusText() + tr(" (The form keeps its values: %1)").arg(formError), true);
    controls_->setRerunTarget(
        formError.isEmpty() && !claimsFolder ? QFileInfo(openedRun_).fileName() : QString());
    updateResumeState();
    updateForkOffer();
    saveSession();
    return true;
}

bool MainWindow::saveComparisonFile(const QString& file) {
    if (compared_.size() < 2) {
        showMessage(tr("Compare two or three runs first (history: select them, Compare)."), true);
        return false;
    }
    QString error;
    if (!writeComparison(file, {compared_, curves_->metric()}, &error)) {
        showMessage(error, true);
        return false;
    }
    showMessage(tr("Saved the comparison to %1").arg(QDir::toNativeSeparators(file)));
    return true;
}

bool MainWindow::openComparisonFile(const QString& file) {
    Comparison comparison;
    QString error;
    if (!readComparison(file, &comparison, &error)) {
        showMessage(tr("Cannot open the comparison: %1").arg(error), true);
        return false;
    }
    if (!compareRuns(comparison.runs)) return false;
    if (!comparison.metric.isEmpty() && controls_->metrics().contains(comparison.metric))
        showMetric(comparison.metric);
    return true;
}

bool MainWindow::rerun() {
    if (session_->isRunning() || openedRun_.isEmpty()) return false;
    nlohmann::json spec;
    QString error;
    if (!ExperimentForm::readRunSpec(openedRun_, &spec, &error)) {
        showMessage(tr("Cannot re-run: %1").arg(error), true);
        return false;
    }
    const QString title = tr("%1 — re-run of %2")
                              .arg(QString::fromStdString(spec.value("name", std::string("run"))),
                                   QFileInfo(openedRun_).fileName());
    startSpec(spec, form_->outputDir(), title);
    return session_->isRunning();
}

void MainWindow::updateResumeState() {
    const QString name = lastRunDir_.isEmpty() ? QString() : QFileInfo(lastRunDir_).fileName();
    controls_->setResumeTarget(name, TrainingSession::whyNotResumable(lastRunDir_));
}

bool MainWindow::resumeRun() {
    if (session_->isRunning()) return false;
    const QString dir = lastRunDir_;
    const QString whyNot = TrainingSession::whyNotResumable(dir);
    if (!whyNot.isEmpty()) {
        showMessage(tr("Cannot resume: %1").arg(whyNot), true);
        return false;
    }
    ExperimentSpec spec;
    try {
        spec = resumable_spec(dir.toStdString());
    } catch (const std::exception& e) {
        showMessage(tr("Cannot resume: %1").arg(QString::fromStdString(error_message(e))), true);
        return false;
    }
    const QString title = tr("%1 — resumed").arg(QFileInfo(dir).fileName());
    openedRun_.clear();
    compared_.clear();
    actions_->saveComparisonAction()->setEnabled(false);
    lastRunDir_.clear();
    updateResumeState();
    monitor_->begin(spec, title);
    setWindowTitle(tr("LiftLab — %1").arg(title));
    if (!session_->startResume(spec, dir)) return false;
    setRunning(true);
    showMessage(tr("Resuming %1 from its last saved state…").arg(QDir::toNativeSeparators(dir)));
    return true;
}

bool MainWindow::exportCurvesCsv(const QString& path) {
    return curvePanel()->exportCsv(path);
}

void MainWindow::copyPlotToClipboard() {
    if (!view_->copyCurrentPlot(exportDpi_ / 96.0)) return;
    showMessage(
        tr("Copied the %1 plot to the clipboard.").arg(view_->tabText(view_->currentIndex())));
}

void MainWindow::setExportDpi(int dpi) {
    exportDpi_ = std::clamp(dpi, 48, 600);
    setExportPixelRatio(exportDpi_ / 96.0);
}

void MainWindow::setDarkPalette(bool on) {
    dark_ = on;
    applyLabPalette(on);
    if (actions_->darkAction()->isChecked() != on) actions_->darkAction()->setChecked(on);
    form_->setDarkPalette(on);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (!RunHistoryPanel::runFolderFromMime(event->mimeData()).isEmpty())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QString dir = RunHistoryPanel::runFolderFromMime(event->mimeData());
    if (dir.isEmpty()) return;
    event->acceptProposedAction();
    openRun(dir);
}

}  // namespace liftlab
