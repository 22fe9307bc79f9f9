#include "lab_actions.h"

#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>

#include "comparison_file.h"
#include "help_menu.h"
#include "main_window.h"
#include "run_controls.h"
#include "run_view.h"
#include "user_guide.h"

namespace liftlab {

LabActions::LabActions(MainWindow* window, QDockWidget* historyDock, RunControls* controls)
    : QObject(window), window_(window) {
    buildFileMenu();
    buildRunMenu(controls);
    buildViewMenu(historyDock);
    // F1, wherever the focus is; also the Help menu's first entry.
    help_ = new QAction(tr("User guide"), window_);
    help_->setObjectName(QStringLiteral("userGuide"));
    help_->setShortcut(QKeySequence::HelpContents);
    help_->setShortcutContext(Qt::ApplicationShortcut);
    connect(help_, &QAction::triggered, window_, [this] { showUserGuide(window_); });
    window_->addAction(help_);
    addHelpMenu(window_, help_);
}

void LabActions::readSettings(const QSettings& settings) {
    openDir_ = settings.value(QStringLiteral("paths/open")).toString();
    exportDir_ = settings.value(QStringLiteral("paths/export")).toString();
}

void LabActions::writeSettings(QSettings& settings) const {
    if (!openDir_.isEmpty()) settings.setValue(QStringLiteral("paths/open"), openDir_);
    if (!exportDir_.isEmpty()) settings.setValue(QStringLiteral("paths/export"), exportDir_);
}

QString LabActions::exportDir() const {
    return exportDir_.isEmpty() ? QDir::currentPath() : exportDir_;
}

void LabActions::buildFileMenu() {
    QMenu* file = window_->menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open run folder…"), this, &LabActions::openFolder)
        ->setShortcut(QKeySequence::Open);
    file->addAction(tr("&Compare with run folder…"), this, &LabActions::compareWith);
    file->addAction(tr("Open compa&rison…"), this, &LabActions::openComparison);
    saveComparison_ = file->addAction(tr("Save compari&son…"), this, &LabActions::saveComparison);
    saveComparison_->setEnabled(false);
    file->addSeparator();
    file->addAction(tr("&Export panel…"), this, &LabActions::exportPanel)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    file->addAction(tr("Export &all panels…"), this, &LabActions::exportAll)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    file->addAction(tr("Export curves as &CSV…"), this, &LabActions::exportCsv);
    file->addAction(tr("Cop&y plot"), window_, &MainWindow::copyPlotToClipboard)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    file->addAction(tr("Export &resolution…"), this, &LabActions::chooseResolution);
    file->addSeparator();
    file->addAction(tr("&Quit"), window_, &QWidget::close)->setShortcut(QKeySequence::Quit);
}

void LabActions::buildRunMenu(RunControls* controls) {
    QMenu* run = window_->menuBar()->addMenu(tr("&Run"));
    run->addAction(controls->startAction());
    run->addAction(controls->queueAction());
    run->addAction(controls->pauseAction());
    run->addAction(controls->stopAction());
    run->addAction(controls->rerunAction());
    run->addAction(controls->resumeRunAction());
    run->addSeparator();
    run->addAction(tr("Compute &landscapes"), window_, [this] {
        RunView* view = window_->runView();
        view->setCurrentIndex(RunView::LandscapeTab);
        if (!view->computeLandscape()) window_->showMessage(view->landscapeStatus(), true);
    });
}

void LabActions::buildViewMenu(QDockWidget* historyDock) {
    QMenu* viewMenu = window_->menuBar()->addMenu(tr("&View"));
    RunView* view = window_->runView();
    for (int i = 0; i < view->tabCount(); ++i) {
        QAction* a =
            viewMenu->addAction(view->tabText(i), view, [view, i] { view->setCurrentIndex(i); });
        a->setShortcut(QKeySequence(Qt::ALT | static_cast<Qt::Key>(Qt::Key_1 + i)));
    }
    viewMenu->addSeparator();
    viewMenu->addAction(historyDock->toggleViewAction());
    dark_ = viewMenu->addAction(tr("&Dark palette"));
    dark_->setCheckable(true);
    connect(dark_, &QAction::toggled, window_, &MainWindow::setDarkPalette);
}

void LabActions::openFolder() {
    const QString dir = QFileDialog::getExistingDirectory(
        window_, tr("Open a run folder"), openDir_.isEmpty() ? window_->outputDir() : openDir_);
    if (dir.isEmpty()) return;
    openDir_ = QFileInfo(dir).path();
    window_->openRun(dir);
}

void LabActions::compareWith() {
    if (window_->openedRun().isEmpty()) {
        window_->showMessage(tr("Open a run first, then pick the run to compare it with."), true);
        return;
    }
    const QString dir = QFileDialog::getExistingDirectory(window_, tr("Compare with"),
                                                          QFileInfo(window_->openedRun()).path());
    if (dir.isEmpty()) return;
    QStringList runs = window_->comparedRuns();
    if (runs.isEmpty()) runs << window_->openedRun();
    if (runs.size() >= kMaxComparedRuns) runs.removeLast();
    window_->compareRuns(runs << dir);
}

void LabActions::openComparison() {
    const QString file = QFileDialog::getOpenFileName(
        window_, tr("Open a comparison"), openDir_.isEmpty() ? window_->outputDir() : openDir_,
        tr("LiftLab comparison (*%1);;All files (*)").arg(QLatin1String(kComparisonSuffix)));
    if (file.isEmpty()) return;
    openDir_ = QFileInfo(file).path();
    window_->openComparisonFile(file);
}

void LabActions::saveComparison() {
    const QString suggested =
        QDir(openDir_.isEmpty() ? window_->outputDir() : openDir_)
            .filePath(QStringLiteral("comparison") + QLatin1String(kComparisonSuffix));
    QString file = QFileDialog::getSaveFileName(
        window_, tr("Save the comparison"), suggested,
        tr("LiftLab comparison (*%1)").arg(QLatin1String(kComparisonSuffix)));
    if (file.isEmpty()) return;
    if (!file.endsWith(QLatin1String(kComparisonSuffix))) file += QLatin1String(kComparisonSuffix);
    openDir_ = QFileInfo(file).path();
    window_->saveComparisonFile(file);
}

void LabActions::exportPanel() {
    RunView* view = window_->runView();
    const QString suggested =
        QDir(exportDir()).filePath(view->tabKey(view->currentIndex()) + QStringLiteral(".png"));
    const QString path = QFileDialog::getSaveFileName(window_, tr("Export panel"), suggested,
                                                      tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)"));
    if (path.isEmpty()) return;
    exportDir_ = QFileInfo(path).path();
    if (window_->exportCurrentPanel(path))
        window_->showMessage(tr("Wrote %1").arg(QDir::toNativeSeparators(path)));
    else
        window_->showMessage(tr("Could not write %1 (png, svg or pdf)").arg(path), true);
}

void LabActions::exportAll() {
    const QString dir =
        QFileDialog::getExistingDirectory(window_, tr("Export every panel into"), exportDir());
    if (dir.isEmpty()) return;
    bool ok = false;
    const QString format = QInputDialog::getItem(
        window_, tr("Format"), tr("Format of the figures"),
        {QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf")}, 0, false, &ok);
    if (!ok) return;
    exportDir_ = dir;
    const QStringList files = window_->exportAllPanels(dir, format);
    window_->showMessage(
        tr("Wrote %n figure(s) to %1", nullptr, files.size()).arg(QDir::toNativeSeparators(dir)),
        files.isEmpty());
}

void LabActions::exportCsv() {
    const QString path = QFileDialog::getSaveFileName(
        window_, tr("Export curves"),
        QDir(exportDir()).filePath(window_->shownMetric() + QStringLiteral(".csv")),
        tr("CSV (*.csv)"));
    if (path.isEmpty()) return;
    if (window_->exportCurvesCsv(path))
        window_->showMessage(tr("Wrote %1").arg(QDir::toNativeSeparators(path)));
    else
        window_->showMessage(tr("Could not write %1").arg(path), true);
}

void LabActions::chooseResolution() {
    bool ok = false;
    const int dpi = QInputDialog::getInt(window_, tr("PNG resolution"),
                                         tr("Dots per inch of exported PNG figures"),
                                         window_->exportDpi(), 48, 600, 24, &ok);
    if (ok) window_->setExportDpi(dpi);
}

}  // namespace liftlab
