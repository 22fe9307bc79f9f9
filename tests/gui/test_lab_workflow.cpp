// The visual lab end to end on the offscreen platform: a short ICNN run fills the curves, escape
// and landscape panels; landscapes computed on the worker (with a cache hit the second time);
// every panel switched to and exported; a run re-opened and compared with another; the queue runs
// experiments in order; Pause holds the worker and Resume lets it go on.
#include <gtest/gtest.h>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include "escape_panel.h"
#include "experiment_form.h"
#include "landscape_panel.h"
#include "loss_curve_panel.h"
#include "main_window.h"
#include "run_history_panel.h"
#include "run_view.h"
#include "spec_editor.h"
#include "sweep_panel.h"
#include "training_session.h"

using liftlab::LandscapePanel;
using liftlab::MainWindow;
using liftlab::RunView;

namespace {

constexpr int kWorkflowTimeoutMs = 180000;  // a short run on a loaded 2-core CI machine

bool waitIdle(MainWindow& w) {
    return QTest::qWaitFor([&] { return !w.session()->isRunning(); }, kWorkflowTimeoutMs);
}

// The form's log interval, set by hand (auto off).
void setLogEvery(MainWindow& w, int every) {
    w.findChild<QCheckBox*>(QStringLiteral("logEveryAuto"))->setChecked(false);
    w.findChild<QSpinBox*>(QStringLiteral("logEvery"))->setValue(every);
}

}  // namespace

TEST(LabWorkflow, IcnnRunFillsPanelsComputesLandscapesAndExportsEverything) {
    QTemporaryDir out, figures;
    MainWindow window;
    window.show();
    ASSERT_TRUE(window.selectPreset("icnn-landscape"));
    window.setSteps(40);
    window.setOutputDir(out.path());
    window.startRun();
    ASSERT_TRUE(window.session()->isRunning()) << window.statusText().toStdString();
    ASSERT_TRUE(waitIdle(window));
    ASSERT_TRUE(window.statusText().contains("Finished")) << window.statusText().toStdString();

    RunView* view = window.runView();
    EXPECT_TRUE(view->hasContent(RunView::CurvesTab));
    EXPECT_TRUE(view->hasContent(RunView::EscapeTab));  // shoulder occupancy of every method
    EXPECT_EQ(view->escape()->occupancyCount(), 3);

    // Landscapes on the worker: both spaces, progress, then the cache on the second request.
    view->findChild<QSpinBox*>("landscapeGridTheta")->setValue(5);
    view->findChild<QSpinBox*>("landscapeGridLifted")->setValue(4);
    QSignalSpy done(view, &RunView::landscapeDone);
    QSignalSpy progress(view, &RunView::landscapeProgress);
    ASSERT_TRUE(view->computeLandscape()) << view->landscapeStatus().toStdString();
    ASSERT_TRUE(QTest::qWaitFor([&] { return done.count() == 1; }, kWorkflowTimeoutMs));
    EXPECT_TRUE(done.at(0).at(1).toBool()) << done.at(0).at(0).toString().toStdString();
    EXPECT_GT(progress.count(), 0);
    EXPECT_TRUE(view->landscape()->hasGrid(LandscapePanel::Theta));
    EXPECT_TRUE(view->landscape()->hasGrid(LandscapePanel::Lifted));
    EXPECT_EQ(view->landscape()->trajectoryCount(LandscapePanel::Theta), 3);
    EXPECT_EQ(view->landscape()->trajectoryCount(LandscapePanel::Lifted), 1);
    ASSERT_TRUE(view->computeLandscape());
    ASSERT_TRUE(QTest::qWaitFor([&] { return done.count() == 2; }, kWorkflowTimeoutMs));
    EXPECT_TRUE(view->landscapeStatus().contains("from the cache"))
        << view->landscapeStatus().toStdString();

    // Every panel shown in turn, then exported at once, curves to CSV, a plot to the clipboard.
    for (int i = 0; i < RunView::TabCount; ++i) {
        view->setCurrentIndex(i);
        QTest::qWait(20);
    }
    const QStringList files = window.exportAllPanels(figures.path(), "png");
    EXPECT_GE(files.size(), 3);  // curves, landscape, escape (no σ²_Jac in this preset)
    for (const QString& f : files) EXPECT_GT(QFileInfo(f).size(), 5000) << f.toStdString();
    view->setCurrentIndex(RunView::LandscapeTab);
    EXPECT_TRUE(window.exportCurrentPanel(figures.filePath("landscape.svg")));
    EXPECT_GT(QFileInfo(figures.filePath("landscape.svg")).size(), 5000);
    EXPECT_TRUE(window.exportCurvesCsv(figures.filePath("curves.csv")));
    EXPECT_GT(QFileInfo(figures.filePath("curves.csv")).size(), 50);
    QApplication::clipboard()->clear();
    window.copyPlotToClipboard();
    EXPECT_FALSE(QApplication::clipboard()->image().isNull());

    // Re-open the finished run, then compare it with itself: every curve twice, labelled.
    const QString runDir = window.lastRunDir();
    ASSERT_TRUE(window.openRun(runDir)) << window.statusText().toStdString();
    EXPECT_EQ(window.curvePanel()->seriesCount(), 3);
    ASSERT_TRUE(window.openRun(runDir, runDir));
    EXPECT_EQ(window.curvePanel()->seriesCount(), 6);
    EXPECT_FALSE(window.openRun(out.filePath("not-a-run")));
    EXPECT_TRUE(window.statusText().contains("Cannot open")) << window.statusText().toStdString();
}

// A sweep preset run in the window: the Sweep tab draws the final metric against λ, one line per
// method, with the batch-sum caption; re-opening the run shows it again.
TEST(LabWorkflow, SweepRunFillsTheSweepTab) {
    QTemporaryDir out;
    MainWindow window;
    ASSERT_TRUE(window.selectPreset("cf-lambda-sweep"));
    ASSERT_TRUE(window.form()->setSeedsText("0"));  // one seed of the preset's three: quick
    window.setSteps(20);
    window.setOutputDir(out.path());
    window.startRun();
    ASSERT_TRUE(waitIdle(window));
    ASSERT_TRUE(window.statusText().contains("Finished")) << window.statusText().toStdString();
    RunView* view = window.runView();
    ASSERT_TRUE(view->hasContent(RunView::SweepTab));
    EXPECT_EQ(view->sweep()->seriesCount(), 2);  // adam, cf-prox
    EXPECT_EQ(view->sweep()->pointCount("cf-prox"), 6);
    EXPECT_TRUE(view->sweep()->caption().contains("SUM")) << view->sweep()->caption().toStdString();
    auto* metric = view->findChild<QComboBox*>("sweepMetric");
    ASSERT_NE(metric, nullptr);
    EXPECT_EQ(metric->itemText(0), QStringLiteral("test_loss"));
    EXPECT_GE(metric->findText("eff_rank"), 0);  // spectra at the last step
    metric->setCurrentText("eff_rank");
    EXPECT_EQ(view->sweep()->seriesCount(), 2);
    ASSERT_TRUE(window.openRun(window.lastRunDir()));
    EXPECT_TRUE(view->hasContent(RunView::SweepTab));
}

TEST(LabWorkflow, QueueRunsInOrderAndHistoryListsThem) {
    QTemporaryDir out;
    MainWindow window;
    ASSERT_TRUE(window.selectPreset("cf-regression"));
    window.setSteps(30);
    window.setOutputDir(out.path());
    window.history()->setRoot(out.path());
    ASSERT_TRUE(window.queueRun());  // idle: starts at once
    EXPECT_TRUE(window.session()->isRunning());
    ASSERT_TRUE(window.queueRun());  // waits for the first
    EXPECT_EQ(window.queuedRuns(), 1);
    ASSERT_TRUE(
        QTest::qWaitFor([&] { return window.queuedRuns() == 0 && !window.session()->isRunning(); },
                        kWorkflowTimeoutMs));
    window.history()->refresh();
    EXPECT_EQ(window.history()->runCount(), 2);
}

TEST(LabWorkflow, PauseHoldsTheWorkerAndResumeGoesOn) {
    QTemporaryDir out;
    MainWindow window;
    ASSERT_TRUE(window.selectPreset("cf-regression"));
    window.setSteps(100000);
    window.setOutputDir(out.path());
    int lastStep = 0;
    QObject::connect(window.session(), &liftlab::TrainingSession::progress, &window,
                     [&](double, int step, int) { lastStep = step; });
    window.startRun();
    ASSERT_TRUE(QTest::qWaitFor([&] { return lastStep > 0; }, kWorkflowTimeoutMs));
    window.togglePause();
    EXPECT_TRUE(window.session()->isPaused());
    QTest::qWait(300);  // let a report already on its way arrive
    const int held = lastStep;
    QTest::qWait(500);
    EXPECT_EQ(lastStep, held);  // no step while paused
    window.togglePause();
    EXPECT_FALSE(window.session()->isPaused());
    ASSERT_TRUE(QTest::qWaitFor([&] { return lastStep > held; }, kWorkflowTimeoutMs));
    window.stopRun();
    ASSERT_TRUE(waitIdle(window));
    EXPECT_TRUE(window.statusText().contains("cancelled")) << window.statusText().toStdString();
}

TEST(LabWorkflow, AllSettingsTableEditsAnySpecKeyAndNamesBadValues) {
    QTemporaryDir out;
    MainWindow window;
    ASSERT_TRUE(window.selectPreset("cf-regression"));
    auto* editor = window.specEditor();
    EXPECT_GT(editor->rowCount(), 10);  // task.*, diagnostics.*, log_every, …
    ASSERT_TRUE(editor->setValue("task.n_train", "[broken"));
    window.startRun();
    EXPECT_FALSE(window.session()->isRunning());
    EXPECT_TRUE(window.statusText().contains("task.n_train")) << window.statusText().toStdString();
    editor->resetAll();
    EXPECT_TRUE(editor->changedPaths().isEmpty());
    // task.n_test 256 and log every 5 (the form's own field) over 10 steps: steps 0, 5 and 10.
    ASSERT_TRUE(editor->setValue("task.n_test", "256"));
    EXPECT_EQ(editor->changedPaths(), QStringList{"task.n_test"});
    EXPECT_FALSE(editor->setValue("log_every", "5"));  // the form's field owns it
    setLogEvery(window, 5);
    window.setSteps(10);
    window.setOutputDir(out.path());
    window.startRun();
    ASSERT_TRUE(window.session()->isRunning()) << window.statusText().toStdString();
    ASSERT_TRUE(waitIdle(window));
    for (const QString& label : window.methodLabels())
        EXPECT_EQ(window.curvePanel()->pointCount(label), 3) << label.toStdString();
}

TEST(LabWorkflow, SeveralSeedsEndAsMeanCurvesNotInterleavedSeeds) {
    QTemporaryDir out;
    MainWindow window;
    ASSERT_TRUE(window.selectPreset("cf-regression"));
    ASSERT_TRUE(window.form()->setSeedsText("0, 1"));
    setLogEvery(window, 5);
    window.setSteps(10);
    window.setOutputDir(out.path());
    window.startRun();
    ASSERT_TRUE(window.session()->isRunning()) << window.statusText().toStdString();
    ASSERT_TRUE(waitIdle(window));
    // Steps 0, 5 and 10 once per method (mean over the two seeds), not interleaved seeds.
    for (const QString& label : window.methodLabels())
        EXPECT_EQ(window.curvePanel()->pointCount(label), 3) << label.toStdString();
    EXPECT_EQ(window.openedRun(), window.lastRunDir());
}

TEST(LabWorkflow, PanelOptionsAndExportResolutionSurviveARestart) {
    {
        MainWindow window;
        window.show();
        window.runView()->findChild<QSpinBox*>("landscapeGridTheta")->setValue(13);
        window.runView()->setSmoothing(0.6);
        window.setExportDpi(200);
        window.close();  // saves the settings
    }
    MainWindow again;
    EXPECT_EQ(again.runView()->findChild<QSpinBox*>("landscapeGridTheta")->value(), 13);
    EXPECT_DOUBLE_EQ(again.runView()->smoothing(), 0.6);
    EXPECT_EQ(again.exportDpi(), 200);
    again.runView()->findChild<QSpinBox*>("landscapeGridTheta")->setValue(41);
    again.runView()->setSmoothing(0.0);
    again.setExportDpi(144);
    again.close();
}
