// Issue 40 in the window: Resume run continues a stopped run folder through the toolbar, as
// `liftlab-cli run --resume` does, to the final metrics of an uninterrupted run; the events of a
// run folder (events.csv) are drawn on the curves as markers with their labels.
#include <gtest/gtest.h>
#include <QAction>
#include <QDir>
#include <QFile>
#include <QMenu>
#include <QMenuBar>
#include <QTemporaryDir>
#include <QTest>
#include <QToolBar>
#include <QToolButton>
#include <iterator>
#include <map>
#include <string>

#include "core/bounded_input.h"
#include "loss_curve_panel.h"
#include "main_window.h"
#include "run/run_folder_schema.h"
#include "run_controls.h"
#include "run_folder_data.h"
#include "spec/experiment_spec.h"
#include "spec/presets.h"
#include "spec_editor.h"
#include "training/runner.h"
#include "training_session.h"

using liftlab::MainWindow;

namespace {

constexpr int kResumeTestTimeoutMs = 120000;

// A short cf-regression run in the window (1 500 steps), run once and opened, so that the form
// holds its fully resolved spec.json (the All settings box then lists every key, such as
// save_state_seconds, which the preset file leaves to its default).
void prepareShortRun(MainWindow& w, const QString& out) {
    w.setOutputDir(out);
    ASSERT_TRUE(w.selectPreset("cf-regression"));
    // 1 500 steps (the preset's log point every 25): the pause below, sent from the window's
    // progress slot after step 60, lands with over a thousand steps to spare however fast the
    // machine (60 steps left a fast one ≈ 20 ms to take the pause).
    w.setSteps(1500);
    w.startRun();
    ASSERT_TRUE(w.session()->isRunning()) << w.statusText().toStdString();
    ASSERT_TRUE(QTest::qWaitFor([&] { return !w.session()->isRunning(); }, kResumeTestTimeoutMs));
    ASSERT_TRUE(w.openRun(w.lastRunDir()));
    ASSERT_EQ(w.outputDir(), out);
}

QToolButton* toolButton(MainWindow& w, QAction* action) {
    return qobject_cast<QToolButton*>(w.runControls()->toolBar()->widgetForAction(action));
}

std::string summaryStatus(const QString& dir) {
    return liftlab::read_run_folder(dir.toStdString()).status;
}

// Final metrics by "method metric", timings left out (they differ from run to run).
std::map<std::string, std::vector<double>> untimedFinals(const QString& dir) {
    std::map<std::string, std::vector<double>> out;
    for (const auto& [method, metrics] : liftlab::read_run_folder(dir.toStdString()).finals)
        for (const auto& [metric, values] : metrics)
            if (metric.find("time") == std::string::npos && metric != "solve_fraction")
                out[method + " " + metric] = values;
    return out;
}

// Every logged value by metric, method and step (timings left out): a resumed run that wrote a
// row twice or lost one differs here.
std::map<std::string, std::map<std::string, std::map<int, std::vector<double>>>> untimedCurves(
    const QString& dir) {
    auto metrics = liftlab::read_run_folder(dir.toStdString()).metrics;
    for (auto it = metrics.begin(); it != metrics.end();)
        it = it->first.find("time") != std::string::npos || it->first == "solve_fraction"
                 ? metrics.erase(it)
                 : std::next(it);
    return metrics;
}

QAction* runMenuAction(MainWindow& w, const QString& name) {
    for (QAction* top : w.menuBar()->actions())
        if (top->menu() && top->text().remove(QLatin1Char('&')) == QLatin1String("Run"))
            for (QAction* a : top->menu()->actions())
                if (a->objectName() == name) return a;
    return nullptr;
}

}  // namespace

TEST(WindowResume, StoppedRunResumedFromTheToolbarEndsAsAnUninterruptedRun) {
    QTemporaryDir out;
    ASSERT_TRUE(out.isValid());
    MainWindow w;
    w.show();
    prepareShortRun(w, out.path());
    ASSERT_FALSE(HasFatalFailure());
    // A state at every log point (the default keeps one per 30 s: none in so short a run).
    ASSERT_TRUE(
        w.specEditor()->setValue(QStringLiteral("save_state_seconds"), QStringLiteral("0")));
    QToolButton* start = toolButton(w, w.runControls()->startAction());
    QToolButton* stop = toolButton(w, w.runControls()->stopAction());
    QToolButton* resume = toolButton(w, w.runControls()->resumeRunAction());
    ASSERT_TRUE(start && stop && resume);
    EXPECT_FALSE(resume->isEnabled());  // the opened run finished
    EXPECT_TRUE(resume->toolTip().contains("Nothing to resume")) << resume->toolTip().toStdString();
    ASSERT_EQ(runMenuAction(w, QStringLiteral("resumeRun")), w.runControls()->resumeRunAction());

    // The uninterrupted run: finished, so nothing to resume.
    QTest::mouseClick(start, Qt::LeftButton);
    ASSERT_TRUE(w.session()->isRunning()) << w.statusText().toStdString();
    ASSERT_TRUE(QTest::qWaitFor([&] { return !w.session()->isRunning(); }, kResumeTestTimeoutMs));
    const QString full = w.lastRunDir();
    ASSERT_EQ(summaryStatus(full), "ok");
    EXPECT_FALSE(resume->isEnabled());
    EXPECT_TRUE(resume->toolTip().contains("finished")) << resume->toolTip().toStdString();

    // The same run held after its first log points (Pause), then stopped.
    int heldAt = -1;
    const auto hold = QObject::connect(w.session(), &liftlab::TrainingSession::progress, &w,
                                       [&](double, int step, int) {
                                           if (heldAt >= 0 || step < 60) return;
                                           heldAt = step;
                                           w.togglePause();
                                       });
    QTest::mouseClick(start, Qt::LeftButton);
    ASSERT_TRUE(w.session()->isRunning());
    EXPECT_FALSE(resume->isEnabled());  // never while a run goes on
    ASSERT_TRUE(QTest::qWaitFor([&] { return w.session()->isPaused(); }, kResumeTestTimeoutMs))
        << "the run ended before it could be held: " << w.statusText().toStdString();
    QObject::disconnect(hold);
    QTest::mouseClick(stop, Qt::LeftButton);
    ASSERT_TRUE(QTest::qWaitFor([&] { return !w.session()->isRunning(); }, kResumeTestTimeoutMs));
    const QString stopped = w.lastRunDir();
    ASSERT_FALSE(stopped.isEmpty());
    ASSERT_NE(stopped, full);
    ASSERT_EQ(summaryStatus(stopped), "cancelled") << "held at step " << heldAt;
    std::printf("held at step %d\n", heldAt);
    EXPECT_TRUE(resume->isEnabled()) << resume->toolTip().toStdString();
    EXPECT_TRUE(w.runControls()->resumeRunAction()->isEnabled());
    EXPECT_TRUE(resume->toolTip().contains(QDir(stopped).dirName()))
        << resume->toolTip().toStdString();
    EXPECT_NE(untimedFinals(stopped), untimedFinals(full));  // it did stop short

    // Resume run: the same folder continues on the worker, with live curves, to status ok.
    QTest::mouseClick(resume, Qt::LeftButton);
    ASSERT_TRUE(w.session()->isRunning()) << w.statusText().toStdString();
    EXPECT_FALSE(resume->isEnabled());
    EXPECT_TRUE(stop->isEnabled());
    ASSERT_TRUE(QTest::qWaitFor([&] { return !w.session()->isRunning(); }, kResumeTestTimeoutMs));
    EXPECT_TRUE(w.statusText().contains("Finished")) << w.statusText().toStdString();
    EXPECT_EQ(QDir::cleanPath(w.lastRunDir()), QDir::cleanPath(stopped));
    EXPECT_EQ(summaryStatus(stopped), "ok");
    for (const QString& label : w.methodLabels())
        EXPECT_GT(w.curvePanel()->pointCount(label), 0) << label.toStdString();
    const auto expected = untimedFinals(full);
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(untimedFinals(stopped), expected);
    EXPECT_EQ(untimedCurves(stopped), untimedCurves(full));
    // A finished run has nothing left to resume.
    EXPECT_FALSE(resume->isEnabled());
    // The resume wrote into its own folder: the first run, the reference and the stopped one.
    EXPECT_EQ(QDir(out.path()).entryList(QDir::Dirs | QDir::NoDotAndDotDot).size(), 3);
}

TEST(WindowResume, AFolderWithoutStatesLeavesResumeOffSayingWhy) {
    QTemporaryDir out;
    ASSERT_TRUE(out.isValid());
    MainWindow w;
    prepareShortRun(w, out.path());
    ASSERT_FALSE(HasFatalFailure());
    ASSERT_TRUE(w.specEditor()->setValue(QStringLiteral("save_state"), QStringLiteral("false")));
    w.startRun();
    ASSERT_TRUE(w.session()->isRunning());
    ASSERT_TRUE(QTest::qWaitFor([&] { return !w.session()->isRunning(); }, kResumeTestTimeoutMs));
    const QString dir = w.lastRunDir();
    QAction* resume = w.runControls()->resumeRunAction();
    EXPECT_FALSE(resume->isEnabled());
    EXPECT_TRUE(resume->toolTip().contains("finished")) << resume->toolTip().toStdString();
    // The same folder as a killed run leaves it (status running): still off, for want of states.
    const QString summaryPath = QDir(dir).filePath(QLatin1String(liftlab::run_folder::kSummary));
    nlohmann::json summary = liftlab::read_json_file(summaryPath.toStdString());
    summary["status"] = "running";
    {
        QFile f(summaryPath);
        ASSERT_TRUE(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(QByteArray::fromStdString(summary.dump(2)));
    }
    const QString why = liftlab::TrainingSession::whyNotResumable(dir);
    EXPECT_TRUE(why.contains("save_state off")) << why.toStdString();
    EXPECT_FALSE(w.resumeRun());
    EXPECT_TRUE(w.statusText().contains("Cannot resume")) << w.statusText().toStdString();
    EXPECT_FALSE(w.session()->isRunning());
}

TEST(WindowEvents, AnOpenedRunWithEventsShowsTheirMarkersAndOneWithoutNone) {
    QTemporaryDir out;
    ASSERT_TRUE(out.isValid());
    nlohmann::json j = liftlab::load_spec_source("cf-regression");
    j["steps"] = 40;
    j["log_every"] = 10;
    j["seeds"] = nlohmann::json::array({0, 1});
    j["diagnostics"]["spectrum_every"] = 0;
    j["diagnostics"]["one_step_every"] = 0;
    j["events"] = nlohmann::json::array();
    for (const char* e : {"20:cf-prox.lambda=10", "30:adam.lr=0.0005"})
        j["events"].push_back(liftlab::to_json(liftlab::parse_event_text(e)));
    liftlab::RunOptions options;
    options.out_dir = out.filePath(QStringLiteral("with")).toStdString();
    const auto withEvents = liftlab::run_experiment(liftlab::parse_spec(j), options);
    ASSERT_EQ(withEvents.status, liftlab::RunStatus::Ok);
    j.erase("events");
    options.out_dir = out.filePath(QStringLiteral("without")).toStdString();
    const auto without = liftlab::run_experiment(liftlab::parse_spec(j), options);
    ASSERT_EQ(without.status, liftlab::RunStatus::Ok);

    MainWindow w;
    ASSERT_TRUE(w.openRun(QString::fromStdString(withEvents.run_dir)));
    // Two seeds applied each event: one marker per event, in step order.
    const QStringList labels = w.curvePanel()->eventMarkerLabels();
    ASSERT_EQ(w.curvePanel()->eventMarkerCount(), 2) << labels.join(" | ").toStdString();
    EXPECT_TRUE(labels[0].startsWith(QStringLiteral("cf-prox.lambda 100")))
        << labels[0].toStdString();
    EXPECT_TRUE(labels[0].endsWith(QStringLiteral("\u219210"))) << labels[0].toStdString();
    EXPECT_TRUE(labels[1].startsWith(QStringLiteral("adam.lr "))) << labels[1].toStdString();
    // In the method's colour, kept when the shown metric changes.
    EXPECT_EQ(w.curvePanel()->eventMarkerColour(0),
              w.curvePanel()->seriesPenOf(QStringLiteral("cf-prox")).color());
    w.showMetric(QStringLiteral("train_loss"));
    EXPECT_EQ(w.curvePanel()->eventMarkerCount(), 2);

    ASSERT_TRUE(w.openRun(QString::fromStdString(without.run_dir)));
    EXPECT_EQ(w.curvePanel()->eventMarkerCount(), 0);
    EXPECT_TRUE(w.curvePanel()->eventMarkerLabels().isEmpty());
}
