// Run folders as the runner writes them (run_folder_info.h) and the RunHistoryPanel browsing them:
// listing, filter, file watching, the open / compare / reveal requests and drops.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QMenu>
#include <QMimeData>
#include <QPushButton>
#include <QSaveFile>
#include <QSignalSpy>
#include <QSysInfo>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>
#include <QUrl>

#include <cmath>
#include <functional>
#include <memory>
#include <tuple>

#include "run_folder_info.h"
#include "run_history_panel.h"

using liftlab::RunFolderInfo;
using liftlab::RunHistoryPanel;

namespace {

constexpr int kWatchTimeoutMs = 2000;  // file events plus the panel's 250 ms debounce

struct FinalRun {
    QString method;
    int seed;
    double testLoss;  // NaN → written as null, as the runner does for a non-finite value
    QString status = QStringLiteral("ok");
};

bool writeJson(const QString& file, const QJsonObject& o) {
    QSaveFile f(file);  // temp file + rename, like engine/run/run_store
    if (!f.open(QIODevice::WriteOnly)) return false;
    f.write(QJsonDocument(o).toJson());
    return f.commit();
}

bool writeText(const QString& file, const QByteArray& text) {
    QFile f(file);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
    return f.write(text) == text.size();
}

QJsonObject specJson(const QString& name, const QString& task, const QStringList& methods,
                     int seeds, int steps) {
    QJsonArray ms, ss;
    for (const QString& m : methods)
        ms.append(QJsonObject{{"name", m.section('-', 0, 0)}, {"label", m}, {"lr", 0.01}});
    for (int s = 0; s < seeds; ++s) ss.append(s);
    return QJsonObject{{"name", name},
                       {"task", QJsonObject{{"kind", task}, {"n_train", 512}}},
                       {"methods", ms},
                       {"seeds", ss},
                       {"steps", steps},
                       {"batch_size", 32},
                       {"versions", QJsonObject{{"liftlab", "0.1.0"}, {"libtorch", "1.13.0"}}}};
}

QJsonObject summaryJson(const QString& status, const QList<FinalRun>& runs) {
    QJsonArray arr;
    for (const FinalRun& r : runs) {
        QJsonObject fin{{"train_loss", 0.5}};
        fin["test_loss"] = std::isfinite(r.testLoss) ? QJsonValue(r.testLoss) : QJsonValue();
        arr.append(QJsonObject{{"method", r.method},
                               {"name", r.method},
                               {"seed", r.seed},
                               {"status", r.status},
                               {"steps_done", 100},
                               {"final", fin}});
    }
    return QJsonObject{{"status", status}, {"runs", arr}};
}

// A run folder `parent/folder` with spec.json, metrics.csv and (unless status is empty)
// summary.json; returns its path.
QString makeRun(const QString& parent, const QString& folder, const QJsonObject& spec,
                const QString& status, const QList<FinalRun>& runs = {}) {
    const QString dir = QDir(parent).filePath(folder);
    EXPECT_TRUE(QDir().mkpath(dir));
    EXPECT_TRUE(writeJson(QDir(dir).filePath("spec.json"), spec));
    EXPECT_TRUE(writeText(QDir(dir).filePath("metrics.csv"),
                          "step,method,seed,metric,value\n0,sgd,0,train_loss,1.5\n"));
    if (!status.isEmpty()) {
        EXPECT_TRUE(writeJson(QDir(dir).filePath("summary.json"), summaryJson(status, runs)));
    }
    return QDir::cleanPath(dir);
}

bool waitFor(const std::function<bool()>& done, int timeoutMs = kWatchTimeoutMs) {
    QElapsedTimer t;
    t.start();
    while (!done()) {
        if (t.elapsed() > timeoutMs) return false;
        QTest::qWait(20);
    }
    return true;
}

// Four runs of different presets and outcomes, created 2026-12-01 at 09:00, 10:15, 11:30 (twice,
// the second with the -2 suffix of a folder created within the same second).
struct FourRuns {
    QTemporaryDir tmp;
    QString regression, fashion, sweep, sweep2;
    FourRuns() {
        const QString root = tmp.path();
        regression = makeRun(root, "cf-regression-20261201-090000",
                             specJson("cf-regression", "teacher-regression",
                                      {"adam", "sgd", "cf-ridge", "cf-prox"}, 3, 3000),
                             "ok",
                             {{"adam", 0, 0.031},
                              {"adam", 1, 0.035},
                              {"sgd", 0, 0.052},
                              {"cf-ridge", 0, 0.027},
                              {"cf-prox", 0, 0.0121},
                              {"cf-prox", 1, 0.0125}});
        fashion = makeRun(root, "cf-fashion-mnist-20261201-101500",
                          specJson("cf-fashion-mnist", "fashion-mnist", {"ce", "cf-prox"}, 2, 3000),
                          "running", {{"ce", 0, 0.412}});
        sweep =
            makeRun(root, "cf-batch-sweep-20261201-113000",
                    specJson("cf-batch-sweep", "teacher-regression", {"cf-ridge", "sgd"}, 1, 1500),
                    "diverged", {{"cf-ridge", 0, qQNaN(), "diverged"}, {"sgd", 0, 3.8}});
        sweep2 = makeRun(root, "cf-batch-sweep-20261201-113000-2",
                         specJson("cf-batch-sweep", "teacher-regression", {"cf-prox"}, 1, 1500),
                         "cancelled", {{"cf-prox", 0, 0.094}});
    }
};

}  // namespace

TEST(RunFolderInfo, ReadsAValidFolder) {
    QTemporaryDir tmp;
    const QString dir =
        makeRun(tmp.path(), "cf-regression-20261201-101500",
                specJson("cf-regression", "teacher-regression", {"adam", "cf-prox"}, 3, 3000), "ok",
                {{"adam", 0, 0.2}, {"adam", 1, 0.4}, {"cf-prox", 0, 0.1}, {"cf-prox", 1, qQNaN()}});
    const RunFolderInfo info = liftlab::readRunFolder(dir);
    EXPECT_TRUE(info.valid) << info.error.toStdString();
    EXPECT_TRUE(info.error.isEmpty());
    EXPECT_EQ(info.path, QDir::cleanPath(QFileInfo(dir).absoluteFilePath()));
    EXPECT_EQ(info.name, "cf-regression");
    EXPECT_EQ(info.taskKind, "teacher-regression");
    EXPECT_EQ(info.status, "ok");
    EXPECT_EQ(info.methods, (QStringList{"adam", "cf-prox"}));
    EXPECT_EQ(info.seeds, 3);
    EXPECT_EQ(info.steps, 3000);
    EXPECT_EQ(info.runsDone, 4);
    EXPECT_EQ(info.runsTotal, 6);
    EXPECT_EQ(info.created, QDateTime(QDate(2026, 12, 1), QTime(10, 15, 0)));
    // Mean over seeds of the finite final test losses; the null (non-finite) one is skipped.
    ASSERT_EQ(info.bestFinal.size(), 2);
    EXPECT_NEAR(info.bestFinal.value("adam"), 0.3, 1e-12);
    EXPECT_NEAR(info.bestFinal.value("cf-prox"), 0.1, 1e-12);
    QString method;
    double loss = 0;
    ASSERT_TRUE(liftlab::bestFinalResult(info, &method, &loss));
    EXPECT_EQ(method, "cf-prox");
    EXPECT_DOUBLE_EQ(loss, 0.1);
    EXPECT_TRUE(liftlab::looksLikeRunFolder(dir));
}

// A classification run (summary finals carry test_accuracy) is ranked by the highest mean
// accuracy, not by test_loss: ce's cross-entropy is lower than nothing it could be compared with.
TEST(RunFolderInfo, ClassificationRunsAreRankedByAccuracy) {
    QTemporaryDir tmp;
    ASSERT_TRUE(tmp.isValid());
    const QString dir =
        makeRun(tmp.path(), "cf-fashion-mnist-20261203-080000",
                specJson("cf-fashion-mnist", "fashion-mnist", {"ce", "cf-prox"}, 2, 3000), "");
    QJsonArray runs;
    // (method, seed, test_loss, test_accuracy): ce has the lower loss, cf-prox the higher accuracy.
    const QList<std::tuple<QString, int, double, double>> rows = {{"ce", 0, 0.30, 0.89},
                                                                  {"ce", 1, 0.32, 0.87},
                                                                  {"cf-prox", 0, 0.015, 0.91},
                                                                  {"cf-prox", 1, 0.016, 0.90}};
    for (const auto& [m, seed, loss, acc] : rows)
        runs.append(
            QJsonObject{{"method", m},
                        {"seed", seed},
                        {"status", "ok"},
                        {"final", QJsonObject{{"test_loss", loss}, {"test_accuracy", acc}}}});
    ASSERT_TRUE(writeJson(QDir(dir).filePath("summary.json"),
                          QJsonObject{{"status", "ok"}, {"runs", runs}}));
    const RunFolderInfo info = liftlab::readRunFolder(dir);
    EXPECT_EQ(info.bestMetric, "test_accuracy");
    EXPECT_NEAR(info.bestFinal.value("ce"), 0.88, 1e-12);
    EXPECT_NEAR(info.bestFinal.value("cf-prox"), 0.905, 1e-12);
    QString method;
    double value = 0;
    ASSERT_TRUE(liftlab::bestFinalResult(info, &method, &value));
    EXPECT_EQ(method, "cf-prox");
    EXPECT_NEAR(value, 0.905, 1e-12);

    // The browser's row says so.
    RunHistoryPanel panel;
    panel.setRoot(tmp.path());
    ASSERT_EQ(panel.runCount(), 1);
    ASSERT_NE(panel.findChild<QTreeView*>(), nullptr);
    const QString best = panel.cellText(0, RunHistoryPanel::ColBest);
    EXPECT_EQ(best, "acc 0.905  cf-prox") << best.toStdString();
}

TEST(RunFolderInfo, BrokenOrMissingSpecIsInvalidWithAReadableError) {
    QTemporaryDir tmp;
    const QString broken = QDir(tmp.path()).filePath("cf-regression-20261201-101500");
    QDir().mkpath(broken);
    ASSERT_TRUE(writeText(QDir(broken).filePath("spec.json"), "{\"name\": \"cf-regr"));
    ASSERT_TRUE(writeText(QDir(broken).filePath("metrics.csv"), "step,method,seed,metric,value\n"));
    RunFolderInfo info = liftlab::readRunFolder(broken);
    EXPECT_FALSE(info.valid);
    EXPECT_EQ(info.status, "invalid");
    EXPECT_TRUE(info.error.contains("spec.json")) << info.error.toStdString();
    EXPECT_TRUE(info.error.contains("invalid JSON")) << info.error.toStdString();
    // Still dated and named from the folder, so the browser can list it.
    EXPECT_EQ(info.name, "cf-regression");
    EXPECT_EQ(info.created, QDateTime(QDate(2026, 12, 1), QTime(10, 15, 0)));

    ASSERT_TRUE(writeText(QDir(broken).filePath("spec.json"), "[1, 2]"));
    info = liftlab::readRunFolder(broken);
    EXPECT_FALSE(info.valid);
    EXPECT_TRUE(info.error.contains("not a JSON object")) << info.error.toStdString();

    const QString empty = QDir(tmp.path()).filePath("empty");
    QDir().mkpath(empty);
    info = liftlab::readRunFolder(empty);
    EXPECT_FALSE(info.valid);
    EXPECT_TRUE(info.error.contains("no spec.json")) << info.error.toStdString();
    EXPECT_FALSE(liftlab::looksLikeRunFolder(empty));

    info = liftlab::readRunFolder(QDir(tmp.path()).filePath("does-not-exist"));
    EXPECT_FALSE(info.valid);
    EXPECT_TRUE(info.error.contains("does not exist")) << info.error.toStdString();
    info = liftlab::readRunFolder(QString());
    EXPECT_FALSE(info.valid);
}

TEST(RunFolderInfo, ARunningRunWithoutWritesForHalfAnHourIsStalled) {
    QTemporaryDir tmp;
    const QString dir =
        makeRun(tmp.path(), "icnn-escape-20261201-100000",
                specJson("icnn-escape", "icnn-ebm-1d", {"lifter"}, 1, 3000), "running");
    EXPECT_EQ(liftlab::readRunFolder(dir).status, QString("running"));  // just written
    // Both files last written 31 minutes ago: the process is gone.
    const QDateTime old = QDateTime::currentDateTime().addSecs(-liftlab::kStalledAfterSeconds - 60);
    for (const char* f : {"metrics.csv", "summary.json"}) {
        QFile file(QDir(dir).filePath(f));
        if (!file.exists()) continue;
        ASSERT_TRUE(file.open(QIODevice::ReadWrite));
        ASSERT_TRUE(file.setFileTime(old, QFileDevice::FileModificationTime));
    }
    const auto info = liftlab::readRunFolder(dir);
    EXPECT_EQ(info.status, QString("stalled"));
    EXPECT_TRUE(info.error.contains("no write for 31 min")) << info.error.toStdString();
    EXPECT_TRUE(info.valid);
}

// The process writing a run names itself in resume/lock ("<host> <pid>"): on this machine, a
// "running" run whose writer no longer exists is "killed" at once, not after half an hour.
TEST(RunFolderInfo, ARunningRunWhoseWriterOnThisMachineIsGoneIsKilled) {
    QTemporaryDir tmp;
    const QString dir =
        makeRun(tmp.path(), "icnn-escape-20261201-100000",
                specJson("icnn-escape", "icnn-ebm-1d", {"lifter"}, 1, 3000), "running");
    ASSERT_TRUE(QDir(dir).mkpath("resume"));
    const QString lock = QDir(dir).filePath("resume/lock");
    const pid_t gone = ::fork();  // a child that has exited and been reaped: its pid is free
    if (gone == 0) ::_exit(0);
    ASSERT_GT(gone, 0);
    ASSERT_EQ(::waitpid(gone, nullptr, 0), gone);
    const QString host = QSysInfo::machineHostName();
    ASSERT_TRUE(writeText(lock, (host + " " + QString::number(gone) + "\n").toUtf8()));
    RunFolderInfo info = liftlab::readRunFolder(dir);
    EXPECT_EQ(info.status, QString("killed"));
    EXPECT_TRUE(info.error.contains(QString("pid %1").arg(gone))) << info.error.toStdString();
    EXPECT_TRUE(info.error.contains("before it saved a state")) << info.error.toStdString();
    EXPECT_TRUE(info.valid);
    ASSERT_TRUE(writeText(QDir(dir).filePath("resume/unit0.state"), "state"));
    info = liftlab::readRunFolder(dir);
    EXPECT_EQ(info.status, QString("killed"));
    EXPECT_TRUE(info.error.contains("Resume run continues it")) << info.error.toStdString();
    // Alive (this process), another machine's process, or a note that is not one: running.
    for (const QString& note :
         {host + " " + QString::number(::getpid()) + "\n",
          QString("elsewhere-%1 %2\n").arg(host).arg(gone), host + " x\n", QString()}) {
        ASSERT_TRUE(writeText(lock, note.toUtf8()));
        EXPECT_EQ(liftlab::readRunFolder(dir).status, QString("running")) << note.toStdString();
    }
    // A finished run is what its summary says, whoever wrote it.
    ASSERT_TRUE(writeText(lock, (host + " " + QString::number(gone) + "\n").toUtf8()));
    ASSERT_TRUE(writeJson(QDir(dir).filePath("summary.json"), summaryJson("ok", {})));
    EXPECT_EQ(liftlab::readRunFolder(dir).status, QString("ok"));
}

TEST(RunFolderInfo, MissingOrBrokenSummaryIsIncomplete) {
    QTemporaryDir tmp;
    const QString dir = makeRun(tmp.path(), "cf-width-20261201-101500",
                                specJson("cf-width", "teacher-regression", {"sgd"}, 1, 10), "");
    RunFolderInfo info = liftlab::readRunFolder(dir);
    EXPECT_TRUE(info.valid);
    EXPECT_EQ(info.status, "incomplete");
    EXPECT_TRUE(info.error.isEmpty());
    EXPECT_TRUE(info.bestFinal.isEmpty());
    EXPECT_FALSE(liftlab::bestFinalResult(info, nullptr, nullptr));
    EXPECT_TRUE(liftlab::looksLikeRunFolder(dir));  // spec.json + metrics.csv

    ASSERT_TRUE(writeText(QDir(dir).filePath("summary.json"), "{\"status\": \"ok\", \"runs\": ["));
    info = liftlab::readRunFolder(dir);
    EXPECT_TRUE(info.valid);
    EXPECT_EQ(info.status, "incomplete");
    EXPECT_TRUE(info.error.contains("summary.json")) << info.error.toStdString();
}

TEST(RunFolderInfo, DateFromTheFolderNameElseFromSpecMtime) {
    QString prefix;
    EXPECT_EQ(liftlab::timestampFromFolderName("cf-batch-sweep-20261201-113000-2", &prefix),
              QDateTime(QDate(2026, 12, 1), QTime(11, 30, 0)));
    EXPECT_EQ(prefix, "cf-batch-sweep");
    EXPECT_FALSE(liftlab::timestampFromFolderName("my-run").isValid());
    EXPECT_FALSE(liftlab::timestampFromFolderName("x-20261399-250000").isValid());  // no 13th month

    QTemporaryDir tmp;
    const QString dir =
        makeRun(tmp.path(), "my-run",
                specJson("cf-regression", "teacher-regression", {"sgd"}, 1, 10), "ok");
    const QDateTime when(QDate(2025, 3, 14), QTime(15, 9, 26));
    QFile spec(QDir(dir).filePath("spec.json"));
    ASSERT_TRUE(spec.open(QIODevice::ReadWrite));
    ASSERT_TRUE(spec.setFileTime(when, QFileDevice::FileModificationTime));
    spec.close();
    const RunFolderInfo info = liftlab::readRunFolder(dir);
    EXPECT_EQ(info.created, when);
    EXPECT_EQ(info.name, "cf-regression");  // from spec.json, not the folder
}

TEST(RunFolderInfo, FindRunFoldersFindsNestedRunsAndIgnoresTheRest) {
    QTemporaryDir tmp;
    const QString root = tmp.path();
    const QJsonObject spec = specJson("cf-regression", "teacher-regression", {"sgd"}, 1, 10);
    const QString top = makeRun(root, "a-20261201-090000", spec, "ok");
    const QString nested = makeRun(root + "/sweeps", "b-20261201-090000", spec, "");
    const QString deep = makeRun(root + "/sweeps/old/2025", "c-20251201-090000", spec, "ok");
    // Not runs: a folder with only metrics.csv, a spec.json alone, a hidden run, and a
    // "run" inside a run's figures/ folder.
    QDir().mkpath(root + "/scratch");
    writeText(root + "/scratch/metrics.csv", "step\n");
    QDir().mkpath(root + "/lonely");
    writeJson(root + "/lonely/spec.json", spec);
    makeRun(root, ".trash-20261201-090000", spec, "ok");
    makeRun(top + "/figures", "inner-20261201-090000", spec, "ok");
    writeText(root + "/notes.txt", "x");

    QStringList searched;
    const QStringList found = liftlab::findRunFolders(root, 2, &searched);
    EXPECT_EQ(found, (QStringList{top, nested}));
    EXPECT_TRUE(searched.contains(QDir::cleanPath(root)));
    EXPECT_TRUE(searched.contains(QDir::cleanPath(root + "/sweeps")));
    EXPECT_FALSE(searched.contains(top));  // a run's own folders are not searched
    EXPECT_EQ(liftlab::findRunFolders(root, 4), (QStringList{top, nested, deep}));
    EXPECT_EQ(liftlab::findRunFolders(root, 0), QStringList{});
    EXPECT_EQ(liftlab::findRunFolders(top, 0), QStringList{top});  // the root itself is a run
    EXPECT_TRUE(liftlab::findRunFolders(root + "/missing").isEmpty());
    EXPECT_TRUE(liftlab::findRunFolders(QString()).isEmpty());
    EXPECT_FALSE(liftlab::looksLikeRunFolder(root + "/scratch"));
    EXPECT_FALSE(liftlab::looksLikeRunFolder(root + "/lonely"));
}

TEST(RunHistoryPanel, ListsRunsNewestFirstWithTheirColumns) {
    FourRuns runs;
    RunHistoryPanel panel;
    panel.setRoot(runs.tmp.path());
    EXPECT_EQ(panel.root(), QDir::cleanPath(runs.tmp.path()));
    ASSERT_EQ(panel.runCount(), 4);
    EXPECT_EQ(panel.visibleRunCount(), 4);
    // 11:30 (-2 suffix: the later of the two), 11:30, 10:15, 09:00.
    EXPECT_EQ(panel.runAt(0), runs.sweep2);
    EXPECT_EQ(panel.runAt(1), runs.sweep);
    EXPECT_EQ(panel.runAt(2), runs.fashion);
    EXPECT_EQ(panel.runAt(3), runs.regression);
    EXPECT_EQ(panel.runAt(4), QString());
    EXPECT_EQ(panel.runAt(-1), QString());

    const auto reg = [&](int column) { return panel.cellText(3, column); };
    EXPECT_EQ(reg(RunHistoryPanel::ColRun), "cf-regression");  // the date has a column
    EXPECT_EQ(panel.cellText(0, RunHistoryPanel::ColRun), "cf-batch-sweep #2");
    EXPECT_EQ(reg(RunHistoryPanel::ColTask), "teacher-regression");
    EXPECT_EQ(reg(RunHistoryPanel::ColMethods), "adam, sgd, cf-ridge, cf-prox");
    EXPECT_EQ(reg(RunHistoryPanel::ColModel), "built-in");
    EXPECT_EQ(reg(RunHistoryPanel::ColSeeds), "0, 1, 2");
    EXPECT_EQ(reg(RunHistoryPanel::ColSteps), "3000");
    EXPECT_EQ(reg(RunHistoryPanel::ColStatus), "ok");
    EXPECT_EQ(reg(RunHistoryPanel::ColDate), "2026-12-01 09:00:00");  // to the second
    EXPECT_FALSE(panel.model()
                     ->indexOfPath(runs.regression, RunHistoryPanel::ColStatus)
                     .data(Qt::DecorationRole)
                     .value<QIcon>()
                     .isNull());
    // cf-prox: mean of 0.0121 and 0.0125.
    EXPECT_EQ(reg(RunHistoryPanel::ColBest), "0.0123  cf-prox");
    // Running: finished (method, seed) runs of methods × seeds.
    EXPECT_EQ(panel.cellText(2, RunHistoryPanel::ColStatus), "running 1/4");
    EXPECT_EQ(panel.runInfo(runs.fashion).status, "running");

    // Sorting by another column and back.
    panel.tree()->sortByColumn(RunHistoryPanel::ColBest, Qt::AscendingOrder);
    EXPECT_EQ(panel.runAt(0), runs.regression);
    EXPECT_EQ(panel.runAt(3), runs.sweep);  // its only finite loss is sgd's 3.8
    panel.tree()->sortByColumn(RunHistoryPanel::ColDate, Qt::DescendingOrder);
    EXPECT_EQ(panel.runAt(0), runs.sweep2);

    panel.setRoot(QString());
    EXPECT_EQ(panel.runCount(), 0);
}

TEST(RunHistoryPanel, FilterHidesRowsThatDoNotMatchEveryWord) {
    FourRuns runs;
    RunHistoryPanel panel;
    panel.setRoot(runs.tmp.path());
    panel.setFilterText("FASHION");
    EXPECT_EQ(panel.runCount(), 4);
    EXPECT_EQ(panel.visibleRunCount(), 1);
    EXPECT_FALSE(panel.isRowHidden(2));
    EXPECT_TRUE(panel.isRowHidden(3));
    panel.setFilterText("cf-prox");  // a method: regression, fashion, sweep2
    EXPECT_EQ(panel.visibleRunCount(), 3);
    panel.setFilterText("cf-prox cancelled");  // and a status
    EXPECT_EQ(panel.visibleRunCount(), 1);
    EXPECT_FALSE(panel.isRowHidden(0));
    panel.setFilterText("20261201-0900");  // the folder name, timestamp included
    EXPECT_EQ(panel.visibleRunCount(), 1);
    EXPECT_FALSE(panel.isRowHidden(3));
    panel.setFilterText("nothing-like-this");
    EXPECT_EQ(panel.visibleRunCount(), 0);
    // Selecting a hidden run clears the filter.
    panel.selectRun(runs.regression);
    EXPECT_EQ(panel.filterText(), QString());
    EXPECT_EQ(panel.visibleRunCount(), 4);
    EXPECT_EQ(panel.selectedRuns(), QStringList{runs.regression});
}

TEST(RunHistoryPanel, WatcherPicksUpNewRunFolders) {
    FourRuns runs;
    RunHistoryPanel panel;
    panel.setRoot(runs.tmp.path());
    ASSERT_EQ(panel.runCount(), 4);
    const QJsonObject spec = specJson("cf-width", "teacher-regression", {"cf-full", "sgd"}, 1, 10);

    const QString fresh = makeRun(runs.tmp.path(), "cf-width-20261202-080000", spec, "running");
    ASSERT_TRUE(waitFor([&] { return panel.runCount() == 5; }));
    EXPECT_EQ(panel.runAt(0), fresh);  // the newest

    // As the runner does it: the folder first, its files a moment later.
    const QString staged = QDir(runs.tmp.path()).filePath("cf-width-20261202-090000");
    ASSERT_TRUE(QDir().mkpath(staged));
    QTest::qWait(400);
    EXPECT_EQ(panel.runCount(), 5);
    ASSERT_TRUE(writeText(staged + "/metrics.csv", "step,method,seed,metric,value\n"));
    ASSERT_TRUE(writeJson(staged + "/spec.json", spec));
    ASSERT_TRUE(waitFor([&] { return panel.runCount() == 6; }));
    EXPECT_EQ(panel.runAt(0), QDir::cleanPath(staged));
    EXPECT_EQ(panel.runInfo(staged).status, "incomplete");

    // In a new group folder one level down.
    const QString nested =
        makeRun(runs.tmp.path() + "/sweeps", "cf-batch-sweep-20261202-100000", spec, "ok");
    ASSERT_TRUE(waitFor([&] { return panel.runCount() == 7; }));
    EXPECT_EQ(panel.runAt(0), nested);

    // A deleted run disappears.
    ASSERT_TRUE(QDir(runs.regression).removeRecursively());
    ASSERT_TRUE(waitFor([&] { return panel.runCount() == 6; }));
    EXPECT_TRUE(panel.runInfo(runs.regression).path.isEmpty());
}

TEST(RunHistoryPanel, SummaryChangesUpdateTheRow) {
    FourRuns runs;
    RunHistoryPanel panel;
    panel.setRoot(runs.tmp.path());
    panel.selectRun(runs.fashion);
    const auto statusOf = [&](const QString& path) {
        for (int r = 0; r < panel.runCount(); ++r)
            if (panel.runAt(r) == path) return panel.cellText(r, RunHistoryPanel::ColStatus);
        return QString();
    };
    ASSERT_EQ(statusOf(runs.fashion), "running 1/4");

    // Replaced atomically (temp file + rename), as the runner writes it.
    ASSERT_TRUE(writeJson(runs.fashion + "/summary.json",
                          summaryJson("running", {{"ce", 0, 0.41}, {"cf-prox", 0, 0.38}})));
    ASSERT_TRUE(waitFor([&] { return statusOf(runs.fashion) == "running 2/4"; }));
    ASSERT_TRUE(writeJson(
        runs.fashion + "/summary.json",
        summaryJson(
            "ok", {{"ce", 0, 0.41}, {"cf-prox", 0, 0.38}, {"ce", 1, 0.43}, {"cf-prox", 1, 0.36}})));
    ASSERT_TRUE(waitFor([&] { return statusOf(runs.fashion) == "ok"; }));
    EXPECT_NEAR(panel.runInfo(runs.fashion).bestFinal.value("cf-prox"), 0.37, 1e-12);

    // Rewritten in place (no rename): still followed.
    ASSERT_TRUE(writeText(runs.fashion + "/summary.json",
                          QJsonDocument(summaryJson("diverged", {})).toJson()));
    ASSERT_TRUE(waitFor([&] { return statusOf(runs.fashion) == "diverged"; }));
    // The row kept its selection through the updates.
    EXPECT_EQ(panel.selectedRuns(), QStringList{runs.fashion});
}

TEST(RunHistoryPanel, DoubleClickEnterAndOpenButtonRequestOpening) {
    FourRuns runs;
    // A folder with a broken spec.json is listed but cannot be opened.
    QDir().mkpath(runs.tmp.path() + "/broken-20261130-120000");
    writeText(runs.tmp.path() + "/broken-20261130-120000/spec.json", "{");
    writeText(runs.tmp.path() + "/broken-20261130-120000/metrics.csv", "");
    RunHistoryPanel panel;
    panel.resize(900, 300);
    panel.setRoot(runs.tmp.path());
    panel.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&panel));
    ASSERT_EQ(panel.runCount(), 5);
    QSignalSpy spy(&panel, &RunHistoryPanel::openRequested);

    QTreeView* tree = panel.tree();
    const QRect rect = panel.rowRect(2);  // fashion
    QTest::mouseClick(tree->viewport(), Qt::LeftButton, {}, rect.center());
    QTest::mouseDClick(tree->viewport(), Qt::LeftButton, {}, rect.center());
    ASSERT_EQ(spy.count(), 1);
    EXPECT_EQ(spy.takeFirst().at(0).toString(), runs.fashion);

    panel.selectRun(runs.regression);
    tree->setFocus();
    QTest::keyClick(tree, Qt::Key_Return);
    ASSERT_EQ(spy.count(), 1);
    EXPECT_EQ(spy.takeFirst().at(0).toString(), runs.regression);

    EXPECT_TRUE(panel.openButton()->isEnabled());
    QTest::mouseClick(panel.openButton(), Qt::LeftButton);
    ASSERT_EQ(spy.count(), 1);
    EXPECT_EQ(spy.takeFirst().at(0).toString(), runs.regression);

    // The broken one is the oldest row: greyed, not openable.
    const QString broken = panel.runAt(4);
    EXPECT_FALSE(panel.runInfo(broken).valid);
    EXPECT_EQ(panel.cellText(4, RunHistoryPanel::ColStatus), "invalid");
    panel.selectRun(broken);
    EXPECT_FALSE(panel.openButton()->isEnabled());
    QTest::keyClick(tree, Qt::Key_Enter);
    const QRect brokenRect = panel.rowRect(4);
    QTest::mouseDClick(tree->viewport(), Qt::LeftButton, {}, brokenRect.center());
    EXPECT_EQ(spy.count(), 0);
}

TEST(RunHistoryPanel, CompareNeedsTwoOrThreeSelected) {
    FourRuns runs;
    RunHistoryPanel panel;
    panel.setRoot(runs.tmp.path());
    QSignalSpy spy(&panel, &RunHistoryPanel::compareRequested);
    EXPECT_FALSE(panel.compareButton()->isEnabled());
    panel.selectRun(runs.sweep);
    EXPECT_FALSE(panel.compareButton()->isEnabled());

    panel.setRowSelected(3, true);  // regression, the oldest
    EXPECT_EQ(panel.selectedRuns(), (QStringList{runs.sweep, runs.regression}));
    EXPECT_TRUE(panel.compareButton()->isEnabled());
    EXPECT_FALSE(panel.openButton()->isEnabled());
    QTest::mouseClick(panel.compareButton(), Qt::LeftButton);
    ASSERT_EQ(spy.count(), 1);
    EXPECT_EQ(spy.at(0).at(0).toStringList(), (QStringList{runs.regression, runs.sweep}));

    // Three (solid, dashed, dotted), oldest first; four are one too many.
    panel.setRowSelected(2, true);
    EXPECT_EQ(panel.selectedRuns().size(), 3);
    EXPECT_TRUE(panel.compareButton()->isEnabled());
    QTest::mouseClick(panel.compareButton(), Qt::LeftButton);
    ASSERT_EQ(spy.count(), 2);
    EXPECT_EQ(spy.at(1).at(0).toStringList(),
              (QStringList{runs.regression, runs.fashion, runs.sweep}));
    panel.setRowSelected(0, true);
    EXPECT_EQ(panel.selectedRuns().size(), 4);
    EXPECT_FALSE(panel.compareButton()->isEnabled());
}

TEST(RunHistoryPanel, ContextMenuRevealsCopiesAndOpens) {
    FourRuns runs;
    RunHistoryPanel panel;
    panel.setRoot(runs.tmp.path());
    QSignalSpy reveal(&panel, &RunHistoryPanel::revealRequested);
    QSignalSpy open(&panel, &RunHistoryPanel::openRequested);
    QSignalSpy compare(&panel, &RunHistoryPanel::compareRequested);

    panel.selectRun(runs.fashion);
    std::unique_ptr<QMenu> menu(panel.createContextMenu(runs.fashion));
    auto action = [&](const char* name) { return menu->findChild<QAction*>(name); };
    ASSERT_TRUE(action("reveal") && action("copyPath") && action("open") && action("compare"));
    EXPECT_FALSE(action("compare")->isEnabled());
    action("reveal")->trigger();
    ASSERT_EQ(reveal.count(), 1);
    EXPECT_EQ(reveal.at(0).at(0).toString(), runs.fashion);
    action("copyPath")->trigger();
    EXPECT_EQ(QApplication::clipboard()->text(), QDir::toNativeSeparators(runs.fashion));
    action("open")->trigger();
    ASSERT_EQ(open.count(), 1);
    EXPECT_EQ(open.at(0).at(0).toString(), runs.fashion);

    // Two selected: both paths copied, compare offered.
    panel.setRowSelected(0, true);
    menu.reset(panel.createContextMenu(runs.fashion));
    EXPECT_TRUE(action("compare")->isEnabled());
    EXPECT_EQ(action("copyPath")->text(), "Copy paths");
    action("copyPath")->trigger();
    EXPECT_EQ(QApplication::clipboard()->text(), QDir::toNativeSeparators(runs.sweep2) + "\n" +
                                                     QDir::toNativeSeparators(runs.fashion));
    action("compare")->trigger();
    ASSERT_EQ(compare.count(), 1);
    EXPECT_EQ(compare.at(0).at(0).toStringList().front(), runs.fashion);
}

TEST(RunHistoryPanel, RunFolderFromMimeAndDrops) {
    FourRuns runs;
    const QString plain = QDir(runs.tmp.path()).filePath("notes.txt");
    ASSERT_TRUE(writeText(plain, "not a run"));
    const auto mimeOf = [](const QString& path) {
        auto* m = new QMimeData;
        m->setUrls({QUrl::fromLocalFile(path)});
        return m;
    };
    std::unique_ptr<QMimeData> m(mimeOf(runs.regression));
    EXPECT_EQ(RunHistoryPanel::runFolderFromMime(m.get()), runs.regression);
    m.reset(mimeOf(runs.regression + "/"));
    EXPECT_EQ(RunHistoryPanel::runFolderFromMime(m.get()), runs.regression);
    m.reset(mimeOf(runs.fashion + "/spec.json"));  // a run's own file names its folder
    EXPECT_EQ(RunHistoryPanel::runFolderFromMime(m.get()), runs.fashion);
    m.reset(mimeOf(plain));
    EXPECT_EQ(RunHistoryPanel::runFolderFromMime(m.get()), QString());
    m.reset(mimeOf(runs.tmp.path()));  // a folder of runs is not a run
    EXPECT_EQ(RunHistoryPanel::runFolderFromMime(m.get()), QString());
    m.reset(new QMimeData);
    m->setUrls({QUrl("https://example.org/run"), QUrl::fromLocalFile(runs.sweep)});
    EXPECT_EQ(RunHistoryPanel::runFolderFromMime(m.get()), runs.sweep);
    m.reset(new QMimeData);
    m->setText(runs.sweep);
    EXPECT_EQ(RunHistoryPanel::runFolderFromMime(m.get()), QString());
    EXPECT_EQ(RunHistoryPanel::runFolderFromMime(nullptr), QString());

    RunHistoryPanel panel;
    QSignalSpy open(&panel, &RunHistoryPanel::openRequested);
    const QPointF at(20, 20);
    m.reset(mimeOf(runs.sweep2));
    QDragEnterEvent enter(at.toPoint(), Qt::CopyAction, m.get(), Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&panel, &enter);
    EXPECT_TRUE(enter.isAccepted());
    QDropEvent drop(at, Qt::CopyAction, m.get(), Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&panel, &drop);
    ASSERT_EQ(open.count(), 1);
    EXPECT_EQ(open.at(0).at(0).toString(), runs.sweep2);

    m.reset(mimeOf(plain));
    QDragEnterEvent refuse(at.toPoint(), Qt::CopyAction, m.get(), Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&panel, &refuse);
    EXPECT_FALSE(refuse.isAccepted());
    QDropEvent dropPlain(at, Qt::CopyAction, m.get(), Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&panel, &dropPlain);
    EXPECT_EQ(open.count(), 1);
}

TEST(RunHistoryPanel, ScreenshotOfFourRuns) {
    FourRuns runs;
    RunHistoryPanel panel;
    panel.resize(900, 300);
    panel.setRoot(runs.tmp.path());
    panel.selectRun(runs.fashion);
    panel.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&panel));
    const QImage shot = panel.grab().toImage();
    EXPECT_EQ(shot.size() / shot.devicePixelRatio(), QSize(900, 300));
    const QString png = QDir(runs.tmp.path()).filePath("run_history.png");
    ASSERT_TRUE(shot.save(png));
    EXPECT_GT(QFileInfo(png).size(), 5000);
    const QString dir = qEnvironmentVariable("LIFTLAB_WIDGET_EXAMPLES");
    if (!dir.isEmpty()) {
        QDir().mkpath(dir);
        shot.save(QDir(dir).filePath("run_history.png"));
    }

    // The other states: no summary yet, a broken spec.json, a sweep; filtered to none of the
    // four above.
    QJsonObject sweep =
        specJson("cf-batch-sweep", "teacher-regression", {"cf-ridge", "cf-prox"}, 3, 1500);
    sweep["sweep"] = QJsonObject{{"key", "batch_size"}, {"values", QJsonArray{4, 8, 32, 128}}};
    makeRun(runs.tmp.path(), "cf-batch-sweep-20261202-090000", sweep, "running",
            {{"cf-ridge@batch_size=4", 0, 2.4}, {"cf-prox@batch_size=4", 0, 0.21}});
    makeRun(runs.tmp.path(), "cf-width-20261202-091500",
            specJson("cf-width", "teacher-regression", {"cf-full", "sgd"}, 1, 1000), "");
    QDir().mkpath(runs.tmp.path() + "/cf-dfiv-demand-20261202-093000");
    writeText(runs.tmp.path() + "/cf-dfiv-demand-20261202-093000/spec.json", "{\"name\":");
    writeText(runs.tmp.path() + "/cf-dfiv-demand-20261202-093000/metrics.csv", "");
    panel.refresh();
    panel.setFilterText("20261202");
    ASSERT_EQ(panel.visibleRunCount(), 3);
    EXPECT_EQ(panel.cellText(2, RunHistoryPanel::ColStatus), "running 2/24");
    EXPECT_EQ(panel.cellText(2, RunHistoryPanel::ColMethods), "cf-ridge, cf-prox  × batch_size");
    if (!dir.isEmpty()) panel.grab().save(QDir(dir).filePath("run_history_states.png"));
}
