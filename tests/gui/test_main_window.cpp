// The main window driving real runs of the cf-regression preset: live curves, a prompt Stop,
// and clear messages for a bad form.
#include <gtest/gtest.h>
#include <QApplication>
#include <QCheckBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QTemporaryDir>
#include <QTest>
#include <cstdio>
#include <functional>
#include <memory>

#include "loss_curve_panel.h"
#include "main_window.h"
#include "run_view.h"
#include "spec_editor.h"
#include "timing_panel.h"
#include "training_session.h"

using liftlab::MainWindow;
using liftlab::RunView;

namespace {

constexpr int kFirstCurvesTimeoutMs = 60000;  // data generation + first log points, loaded CI
constexpr int kStopBudgetMs = 2000;           // Stop must end the worker within this

int methodsWithPoints(const MainWindow& w) {
    int n = 0;
    for (const QString& label : w.methodLabels())
        if (w.curvePanel()->pointCount(label) > 0) ++n;
    return n;
}

}  // namespace

TEST(MainWindow, LiveCurvesThenStopWithinBudget) {
    QTemporaryDir out;
    ASSERT_TRUE(out.isValid());
    auto window = std::make_unique<MainWindow>();
    window->show();
    ASSERT_TRUE(window->selectPreset("cf-regression"));
    window->setSteps(100000);
    window->setOutputDir(out.path());
    window->startRun();
    ASSERT_TRUE(window->session()->isRunning()) << window->statusText().toStdString();

    ASSERT_TRUE(
        QTest::qWaitFor([&] { return methodsWithPoints(*window) >= 2; }, kFirstCurvesTimeoutMs))
        << "status: " << window->statusText().toStdString();
    EXPECT_GE(window->curvePanel()->seriesCount(), 2);

    QElapsedTimer clock;
    clock.start();
    window->stopRun();
    const bool stopped =
        QTest::qWaitFor([&] { return !window->session()->isRunning(); }, kStopBudgetMs * 5);
    const qint64 elapsed = clock.elapsed();
    ASSERT_TRUE(stopped);
    EXPECT_LT(elapsed, kStopBudgetMs);
    RecordProperty("stop_ms", static_cast<int>(elapsed));
    std::printf("stop took %lld ms\n", static_cast<long long>(elapsed));

    const QString status = window->statusText();
    EXPECT_TRUE(status.contains("cancelled", Qt::CaseInsensitive) ||
                status.contains("stopped", Qt::CaseInsensitive))
        << status.toStdString();
    // The cancelled run still left a readable folder under the chosen output directory.
    ASSERT_FALSE(window->lastRunDir().isEmpty());
    EXPECT_TRUE(window->lastRunDir().startsWith(out.path()));
    EXPECT_TRUE(QDir(window->lastRunDir()).exists("metrics.csv"));
    EXPECT_TRUE(QDir(window->lastRunDir()).exists("summary.json"));
    window.reset();  // destroying the window must not hang or crash
}

TEST(MainWindow, NoMethodTickedIsAClearErrorAndNoRun) {
    QTemporaryDir out;
    MainWindow window;
    ASSERT_TRUE(window.selectPreset("cf-regression"));
    window.setOutputDir(out.path());
    ASSERT_GE(window.methodLabels().size(), 2);
    for (const QString& label : window.methodLabels()) window.setMethodChecked(label, false);
    window.startRun();
    EXPECT_FALSE(window.session()->isRunning());
    EXPECT_TRUE(window.statusText().contains("at least one method"))
        << window.statusText().toStdString();
    EXPECT_TRUE(QDir(out.path()).isEmpty());
}

TEST(MainWindow, SpecErrorNamesTheKeyAndStartsNothing) {
    QTemporaryDir out;
    MainWindow window;
    ASSERT_TRUE(window.selectPreset("cf-regression"));
    window.setOutputDir(out.path());
    // The batch-size box allows more than the preset's 4096 training samples.
    auto* batch = window.findChild<QSpinBox*>(QStringLiteral("batchSize"));
    ASSERT_NE(batch, nullptr);
    batch->setValue(1000000);
    window.startRun();
    EXPECT_FALSE(window.session()->isRunning());
    EXPECT_TRUE(window.statusText().contains("spec key 'batch_size'"))
        << window.statusText().toStdString();
    EXPECT_TRUE(QDir(out.path()).isEmpty());
}

TEST(MainWindow, ShortRunFinishesWithCurvesAndRunFolder) {
    QTemporaryDir out;
    MainWindow window;
    ASSERT_TRUE(window.selectPreset("cf-regression"));
    window.setSteps(50);
    window.setOutputDir(out.path());
    window.startRun();
    ASSERT_TRUE(window.session()->isRunning());
    ASSERT_TRUE(QTest::qWaitFor([&] { return !window.session()->isRunning(); }, 120000))
        << window.statusText().toStdString();
    EXPECT_TRUE(window.statusText().contains("Finished")) << window.statusText().toStdString();
    EXPECT_TRUE(window.statusText().contains(QDir::toNativeSeparators(window.lastRunDir())));
    // 50 steps of a preset that logs every 25: the interval follows Steps (every 5 steps), and
    // step 0 (the untrained model) starts each curve.
    for (const QString& label : window.methodLabels())
        EXPECT_EQ(window.curvePanel()->pointCount(label), 11) << label.toStdString();
}

TEST(MainWindow, MetricPickerReplotsAnyLoggedMetricFromTheRunsHistory) {
    QTemporaryDir out;
    MainWindow window;
    ASSERT_TRUE(window.selectPreset("cf-regression"));
    window.setSteps(50);
    window.setOutputDir(out.path());
    window.startRun();
    ASSERT_TRUE(QTest::qWaitFor([&] { return !window.session()->isRunning(); }, 120000));
    // train_loss was logged every 5 steps (none at step 0: no batch trained yet) for every
    // method; switching shows it, on log y.
    window.showMetric("train_loss");
    EXPECT_EQ(window.curvePanel()->metric(), QString("train_loss"));
    EXPECT_TRUE(window.curvePanel()->logY());
    for (const QString& label : window.methodLabels())
        EXPECT_EQ(window.curvePanel()->pointCount(label), 10) << label.toStdString();
    // solve_fraction only exists for the closed forms, on a linear axis.
    window.showMetric("solve_fraction");
    EXPECT_FALSE(window.curvePanel()->logY());
    // The curves tab's "log y" box follows the axis.
    auto* logBox = window.findChild<QCheckBox*>(QStringLiteral("logY"));
    ASSERT_NE(logBox, nullptr);
    EXPECT_FALSE(logBox->isChecked());
    EXPECT_EQ(window.curvePanel()->pointCount("cf-prox"), 10);
    EXPECT_EQ(window.curvePanel()->pointCount("adam"), 0);
    window.showMetric("test_loss");
    EXPECT_EQ(window.curvePanel()->pointCount("adam"), 11);
    EXPECT_TRUE(logBox->isChecked());
}

TEST(MainWindow, SettingsLiveInTheTestsOwnFolderNeverTheUsers) {
    // test_main.cpp points every settings scope into a temporary folder.
    const QSettings settings(QStringLiteral("LiftLab"), QStringLiteral("LiftLab"));
    EXPECT_TRUE(settings.fileName().startsWith(QDir::tempPath()))
        << qPrintable(settings.fileName());
    EXPECT_FALSE(settings.fileName().startsWith(QDir::homePath() + QStringLiteral("/.config")));
}

namespace {
// Writes files into out/run (created): write("metrics.csv", text).
std::function<void(const char*, const QByteArray&)> runFolderWriter(const QTemporaryDir& out) {
    QDir(out.path()).mkpath("run");
    return [path = out.path()](const char* name, const QByteArray& text) {
        QFile f(path + QStringLiteral("/run/") + QLatin1String(name));
        ASSERT_TRUE(f.open(QIODevice::WriteOnly));
        f.write(text);
    };
}
}  // namespace

// A run whose summary carries a warning (an importance-sampling ESS below 1 %: log Z and the
// test NLL unreliable) shows it in the status line, as an error, when the run is opened.
TEST(MainWindow, OpeningARunShowsItsEssWarning) {
    QTemporaryDir out;
    ASSERT_TRUE(out.isValid());
    const auto write = runFolderWriter(out);
    write("metrics.csv", "step,method,seed,metric,value\n1,lifter,0,test_loss,30\n");
    write("spec.json", R"({"name": "icnn-ebm-latents", "task": {"kind": "icnn-ebm-nd"}})");
    write("summary.json", R"({"status": "ok", "runs": [{"method": "lifter", "seed": 0,
        "status": "ok", "final": {"test_loss": 30, "ess_fraction": 0.0001},
        "warnings": ["importance-sampling ESS fraction 0.0001 < 1 %: log_z and test_loss are unreliable"]}]})");
    MainWindow window;
    ASSERT_TRUE(window.openRun(out.filePath("run"))) << window.statusText().toStdString();
    EXPECT_TRUE(window.statusText().contains("Warning: lifter (seed 0): importance-sampling ESS"))
        << window.statusText().toStdString();
}

// A figure of the catalogue (app/feed/figure_catalogue.cpp) gets its own tab, filled when a run
// is opened: here the cost-per-step bars from the logged cumulative time_s and solve_fraction.
TEST(MainWindow, CatalogueFiguresGetATabFilledFromTheRun) {
    QTemporaryDir out;
    ASSERT_TRUE(out.isValid());
    const auto write = runFolderWriter(out);
    write("metrics.csv",
          "step,method,seed,metric,value\n"
          "10,adam,0,test_loss,1\n10,adam,0,time_s,0.02\n"
          "10,cf-prox,0,test_loss,1\n10,cf-prox,0,time_s,0.04\n10,cf-prox,0,solve_fraction,0.5\n");
    write("spec.json", R"({"name": "cf-regression", "task": {"kind": "teacher-regression"}})");
    MainWindow window;
    RunView* view = window.runView();
    int timing = -1;
    for (int i = RunView::TabCount; i < view->tabCount(); ++i)
        if (view->tabKey(i) == QLatin1String("timing")) timing = i;
    ASSERT_GE(timing, 0) << "no timing tab";
    EXPECT_FALSE(view->hasContent(timing));
    ASSERT_TRUE(window.openRun(out.filePath("run"))) << window.statusText().toStdString();
    ASSERT_TRUE(view->hasContent(timing));
    auto* panel = qobject_cast<liftlab::TimingPanel*>(view->widget(timing));
    ASSERT_NE(panel, nullptr);
    EXPECT_EQ(panel->barCount(), 2);
    EXPECT_DOUBLE_EQ(panel->solveMs(QStringLiteral("cf-prox")), 2.0);  // 4 ms per step, half
    EXPECT_DOUBLE_EQ(panel->solveMs(QStringLiteral("adam")), 0.0);
}

// A classification run where ce (cross-entropy) meets squared-loss methods opens on test
// accuracy; chosen, its test loss names each method's loss on the y axis.
TEST(MainWindow, MixedLossClassificationRunOpensOnAccuracy) {
    QTemporaryDir out;
    ASSERT_TRUE(out.isValid());
    const auto write = runFolderWriter(out);
    write("metrics.csv",
          "step,method,seed,metric,value\n"
          "10,ce,0,test_loss,0.35\n10,ce,0,test_accuracy,0.87\n"
          "10,cf-prox,0,test_loss,0.015\n10,cf-prox,0,test_accuracy,0.89\n");
    write("spec.json", R"({"name": "cf-fashion-mnist", "task": {"kind": "fashion-mnist"},
        "methods": [{"name": "ce", "label": "ce"}, {"name": "cf-prox", "label": "cf-prox"}]})");
    MainWindow window;
    window.showMetric("test_loss");
    ASSERT_TRUE(window.openRun(out.filePath("run"))) << window.statusText().toStdString();
    liftlab::LossCurvePanel* curves = window.runView()->curves();
    EXPECT_EQ(curves->metric(), QStringLiteral("test_accuracy"));
    EXPECT_EQ(curves->axisLabel(), QStringLiteral("test accuracy"));
    window.showMetric("test_loss");
    EXPECT_EQ(curves->metric(), QStringLiteral("test_loss"));
    EXPECT_EQ(curves->axisLabel(),
              QStringLiteral("test loss (cross-entropy for ce; squared error for cf-prox)"));
}

// Live: starting a classification run whose methods mix cross-entropy and squared loss switches
// the curves to test accuracy; a regression run afterwards switches back to the test loss.
TEST(MainWindow, LiveClassificationRunShowsAccuracyAndRegressionTheLossAgain) {
    QTemporaryDir out;
    ASSERT_TRUE(out.isValid());
    MainWindow window;
    window.setOutputDir(out.path());
    window.showMetric("test_loss");
    ASSERT_TRUE(window.selectPreset("cf-class-count-sweep"));
    window.setSteps(2);
    window.startRun();
    EXPECT_EQ(window.curvePanel()->metric(), QStringLiteral("test_accuracy"));
    window.stopRun();
    ASSERT_TRUE(QTest::qWaitFor([&] { return !window.session()->isRunning(); }, 120000));
    ASSERT_TRUE(window.selectPreset("cf-regression"));
    window.setSteps(2);
    window.startRun();
    EXPECT_EQ(window.curvePanel()->metric(), QStringLiteral("test_loss"));
    EXPECT_EQ(window.curvePanel()->axisLabel(), QStringLiteral("test loss"));
    window.stopRun();
    ASSERT_TRUE(QTest::qWaitFor([&] { return !window.session()->isRunning(); }, 120000));
}

// The side panel (form and run controls) fits its column: no horizontal scroll bar under it,
// whichever preset is picked (long descriptions wrap), at the first-run size and after the
// splitter is dragged (or a saved layout asks) for a narrower column.
TEST(MainWindow, SidePanelFitsItsColumnWithoutHorizontalScrolling) {
    auto window = std::make_unique<MainWindow>();
    window->show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(window.get()));
    auto* side = window->findChild<QScrollArea*>();
    ASSERT_NE(side, nullptr);
    for (const char* preset :
         {"cf-regression", "icnn-ebm-1d", "icnn-ebm-tabular", "cf-fashion-mnist"}) {
        ASSERT_TRUE(window->selectPreset(preset)) << preset;
        QApplication::processEvents();
        EXPECT_FALSE(side->horizontalScrollBar()->isVisible())
            << preset << ": panel needs " << side->widget()->minimumSizeHint().width()
            << " px, column " << side->viewport()->width() << " px";
    }
    auto* splitter = qobject_cast<QSplitter*>(window->centralWidget());
    ASSERT_NE(splitter, nullptr);
    splitter->setSizes({150, 1250});
    QApplication::processEvents();
    EXPECT_FALSE(side->horizontalScrollBar()->isVisible())
        << "column " << side->viewport()->width() << " px after a narrowing drag";
}

// "All settings" opens the spec editor under it and closes it again (closed: no empty frame).
TEST(MainWindow, AllSettingsBoxOpensAndClosesTheSpecEditor) {
    auto window = std::make_unique<MainWindow>();
    window->show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(window.get()));
    QCheckBox* toggle = nullptr;
    for (auto* box : window->findChildren<QCheckBox*>())
        if (box->text() == QStringLiteral("All settings")) toggle = box;
    ASSERT_NE(toggle, nullptr);
    EXPECT_FALSE(window->specEditor()->isVisible());
    toggle->setChecked(true);
    EXPECT_TRUE(window->specEditor()->isVisible());
    toggle->setChecked(false);
    EXPECT_FALSE(window->specEditor()->isVisible());
}
