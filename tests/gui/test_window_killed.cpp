// Issue 40 item 3 in the window, a killed run: liftlab-cli is SIGKILLed once it has logged step
// 50 (as tests/cli/kill_anywhere.sh kills at random moments), the folder is opened from the run
// history with a double-click, and Resume run in the toolbar continues it — `--resume`
// semantics — to exactly the rows and final metrics of an uninterrupted run of the same spec.
#include <gtest/gtest.h>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <QToolBar>
#include <QToolButton>
#include <QTreeView>
#include <cstdio>
#include <iterator>
#include <map>
#include <string>

#include "main_window.h"
#include "run_controls.h"
#include "run_folder_data.h"
#include "run_history_panel.h"
#include "training_session.h"

using liftlab::MainWindow;

namespace {

constexpr int kKillTestTimeoutMs = 120000;

// A cf-regression run of two methods that saves a resume state at every log point (every 10
// steps), on a small data set.
QStringList cliArgs(const QString& out) {
    return {QStringLiteral("run"),       QStringLiteral("cf-regression"),
            QStringLiteral("--methods"), QStringLiteral("cf-ridge,adam"),
            QStringLiteral("--steps"),   QStringLiteral("800"),
            QStringLiteral("--set"),     QStringLiteral("log_every=10"),
            QStringLiteral("--set"),     QStringLiteral("save_state_seconds=0"),
            QStringLiteral("--set"),     QStringLiteral("task.n_train=1024"),
            QStringLiteral("--set"),     QStringLiteral("task.n_test=256"),
            QStringLiteral("--set"),     QStringLiteral("diagnostics.one_step_every=0"),
            QStringLiteral("--set"),     QStringLiteral("diagnostics.spectrum_every=0"),
            QStringLiteral("--out"),     out};
}

// The one run folder under `out` ("" when there is none or several).
QString onlyFolder(const QString& out) {
    const QStringList dirs = QDir(out).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    return dirs.size() == 1 ? QDir(out).filePath(dirs.front()) : QString();
}

// Every logged value by metric, method and step, timings left out (they differ between runs).
std::map<std::string, std::map<std::string, std::map<int, std::vector<double>>>> killedRunRows(
    const liftlab::RunFolderData& run) {
    auto metrics = run.metrics;
    for (auto it = metrics.begin(); it != metrics.end();)
        it = it->first.find("time") != std::string::npos || it->first == "solve_fraction"
                 ? metrics.erase(it)
                 : std::next(it);
    return metrics;
}

std::map<std::string, std::vector<double>> killedRunFinals(const liftlab::RunFolderData& run) {
    std::map<std::string, std::vector<double>> out;
    for (const auto& [method, metrics] : run.finals)
        for (const auto& [metric, values] : metrics)
            if (metric.find("time") == std::string::npos && metric != "solve_fraction")
                out[method + " " + metric] = values;
    return out;
}

}  // namespace

TEST(WindowResume, KilledRunOpenedFromTheHistoryResumesToTheUninterruptedRun) {
    QElapsedTimer clock;
    clock.start();
    QTemporaryDir out;
    ASSERT_TRUE(out.isValid());
    const QString killedOut = out.filePath(QStringLiteral("killed"));
    const QString refOut = out.filePath(QStringLiteral("ref"));

    // The run, SIGKILLed once it has logged step 50 (a unit state is saved at every log point).
    QProcess cli;
    cli.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    cli.start(QStringLiteral(LIFTLAB_CLI_PATH), cliArgs(killedOut));
    ASSERT_TRUE(cli.waitForStarted());
    QString killed;
    ASSERT_TRUE(QTest::qWaitFor(
        [&] {
            killed = onlyFolder(killedOut);
            if (killed.isEmpty() || !QFileInfo::exists(killed + "/resume/unit0.state"))
                return false;
            // Past step 50: the state has been replaced a few times, and rows may be logged
            // after it (the resume cuts them back).
            QFile metrics(killed + "/metrics.csv");
            return metrics.open(QIODevice::ReadOnly) && metrics.readAll().contains("\n50,");
        },
        kKillTestTimeoutMs));
    cli.kill();  // SIGKILL: no handler runs, summary.json still says running
    ASSERT_TRUE(cli.waitForFinished());
    EXPECT_EQ(cli.exitStatus(), QProcess::CrashExit);
    const liftlab::RunFolderData atKill = liftlab::read_run_folder(killed.toStdString());
    ASSERT_EQ(atKill.status, "running") << "the run ended before the kill";
    int lastStep = 0;
    for (const auto& [method, steps] : atKill.metrics.at("test_loss"))
        if (!steps.empty()) lastStep = std::max(lastStep, steps.rbegin()->first);
    std::printf("killed after step %d of 800\n", lastStep);

    // The uninterrupted run of the same spec.
    QProcess ref;
    ref.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    ref.start(QStringLiteral(LIFTLAB_CLI_PATH), cliArgs(refOut));
    ASSERT_TRUE(ref.waitForFinished(kKillTestTimeoutMs));
    ASSERT_EQ(ref.exitCode(), 0);
    const QString full = onlyFolder(refOut);
    ASSERT_FALSE(full.isEmpty());

    // The window: the killed folder opened from the history (a double-click on its row).
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    w.setOutputDir(killedOut);
    liftlab::RunHistoryPanel* history = w.history();
    history->refresh();
    const QString clean = QDir::cleanPath(QFileInfo(killed).absoluteFilePath());
    int row = -1;
    ASSERT_TRUE(QTest::qWaitFor(
        [&] {
            for (int r = 0; r < history->runCount(); ++r)
                if (QDir::cleanPath(history->runAt(r)) == clean) row = r;
            return row >= 0;
        },
        10000));
    const QRect rect = history->rowRect(row);
    // Its row says "killed" at once (its process is gone), with why in the tooltip.
    const QModelIndex at = history->tree()->indexAt(rect.center());
    QModelIndex status;
    for (int c = 0; c < history->tree()->model()->columnCount(); ++c)
        if (history->tree()->model()->headerData(c, Qt::Horizontal).toString() ==
            QLatin1String("status"))
            status = at.siblingAtColumn(c);
    ASSERT_TRUE(status.isValid());
    EXPECT_EQ(status.data().toString(), QStringLiteral("killed"));
    EXPECT_TRUE(status.data(Qt::ToolTipRole).toString().contains(QStringLiteral("Resume run")))
        << status.data(Qt::ToolTipRole).toString().toStdString();
    QTest::mouseClick(history->tree()->viewport(), Qt::LeftButton, {}, rect.center());
    QTest::mouseDClick(history->tree()->viewport(), Qt::LeftButton, {}, rect.center());
    ASSERT_EQ(w.lastRunDir(), clean) << w.statusText().toStdString();

    // Resume run is offered for it; a click continues the same folder to status ok.
    auto* resume = qobject_cast<QToolButton*>(
        w.runControls()->toolBar()->widgetForAction(w.runControls()->resumeRunAction()));
    ASSERT_NE(resume, nullptr);
    EXPECT_TRUE(resume->isEnabled()) << resume->toolTip().toStdString();
    EXPECT_TRUE(resume->toolTip().contains(QDir(clean).dirName()))
        << resume->toolTip().toStdString();
    QTest::mouseClick(resume, Qt::LeftButton);
    ASSERT_TRUE(w.session()->isRunning()) << w.statusText().toStdString();
    ASSERT_TRUE(QTest::qWaitFor([&] { return !w.session()->isRunning(); }, kKillTestTimeoutMs));
    EXPECT_TRUE(w.statusText().contains("Finished")) << w.statusText().toStdString();
    EXPECT_EQ(QDir::cleanPath(w.lastRunDir()), clean);

    // The same rows (every metric, method and step, timings aside) and final metrics as the
    // uninterrupted run, exactly (tolerance 0: the values as written, the CLI's kill tests find
    // resume bit-exact); nothing resumable is left.
    const liftlab::RunFolderData resumed = liftlab::read_run_folder(clean.toStdString());
    const liftlab::RunFolderData uninterrupted = liftlab::read_run_folder(full.toStdString());
    EXPECT_EQ(resumed.status, "ok");
    EXPECT_EQ(killedRunRows(resumed), killedRunRows(uninterrupted));
    EXPECT_EQ(killedRunFinals(resumed), killedRunFinals(uninterrupted));
    EXPECT_FALSE(killedRunFinals(resumed).empty());
    EXPECT_FALSE(resume->isEnabled());
    std::printf("killed-run test: %lld ms\n", static_cast<long long>(clock.elapsed()));
}
