// The parts of the run history, each alone: RunFolderScanner (scan, re-read on change, fork
// parents from spec.json), RunHistoryModel (rows, fork families as a tree, in-place updates) and
// the two proxies (numeric sort with date ties; filter by every word, parents kept).
#include <gtest/gtest.h>
#include <QAbstractItemModelTester>
#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "run_folder_scanner.h"
#include "run_history_model.h"
#include "run_history_proxy.h"

using liftlab::HistoryRun;
using liftlab::RunFolderScanner;
using liftlab::RunHistoryFilterProxy;
using liftlab::RunHistoryModel;
using liftlab::RunHistorySortProxy;

namespace {

HistoryRun record(const QString& path, const QString& created, double best,
                  const QString& parent = {}, int forkStep = 0) {
    HistoryRun r;
    r.info.path = path;
    r.info.name = QStringLiteral("cf-regression");
    r.info.taskKind = QStringLiteral("teacher-regression");
    r.info.status = QStringLiteral("ok");
    r.info.methods = {QStringLiteral("adam"), QStringLiteral("cf-prox")};
    r.info.valid = true;
    r.info.created = QDateTime::fromString(created, Qt::ISODate);
    r.info.bestFinal.insert(QStringLiteral("cf-prox"), best);
    r.parent = parent;
    r.forkStep = forkStep;
    return r;
}

QMap<QString, HistoryRun> family() {
    QMap<QString, HistoryRun> runs;
    runs.insert("/r/a", record("/r/a", "2026-12-01T09:00:00", 0.5));
    runs.insert("/r/b", record("/r/b", "2026-12-01T10:00:00", 0.2));
    runs.insert("/r/a1", record("/r/a1", "2026-12-01T11:00:00", 0.3, "/r/a", 40));
    runs.insert("/r/a2", record("/r/a2", "2026-12-01T12:00:00", 0.1, "/r/a", 20));
    runs.insert("/r/a11", record("/r/a11", "2026-12-01T13:00:00", 0.4, "/r/a1", 60));
    runs.insert("/r/orphan", record("/r/orphan", "2026-12-01T08:00:00", 0.9, "/gone", 10));
    return runs;
}

// Paths of every row of `m` under `parent`, depth first, "(child)" nesting as indentation.
QStringList walkHistory(const QAbstractItemModel& m, const QModelIndex& parent = {},
                        int depth = 0) {
    QStringList out;
    for (int r = 0; r < m.rowCount(parent); ++r) {
        const QModelIndex i = m.index(r, 0, parent);
        out << QString(depth * 2, QLatin1Char(' ')) + i.data(RunHistoryModel::kPathRole).toString();
        out += walkHistory(m, i, depth + 1);
    }
    return out;
}

bool writeFile(const QString& path, const QByteArray& text) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(text) == text.size();
}

}  // namespace

TEST(RunHistoryModel, ForksAreChildrenOfTheirListedParent) {
    RunHistoryModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setRuns(family(), family().keys());
    EXPECT_EQ(model.runCount(), 6);
    EXPECT_EQ(model.rowCount(), 3);  // a, b and the orphan (its parent is not listed)
    EXPECT_EQ(walkHistory(model),
              (QStringList{"/r/a", "  /r/a1", "    /r/a11", "  /r/a2", "/r/b", "/r/orphan"}));
    EXPECT_EQ(model.parentRun("/r/a11"), "/r/a1");
    EXPECT_EQ(model.parentRun("/r/orphan"), "");
    const QModelIndex child = model.indexOfPath("/r/a1");
    EXPECT_EQ(child.parent(), model.indexOfPath("/r/a"));
    EXPECT_EQ(child.data().toString(), "a1 · fork @40");
    EXPECT_TRUE(child.data(Qt::ToolTipRole).toString().contains("forked from /r/a after step 40"));
    EXPECT_EQ(model.indexOfPath("/r/b", RunHistoryModel::ColBest).data().toString(),
              "0.2  cf-prox");
    EXPECT_EQ(model.indexOfPath("/r/b", RunHistoryModel::ColBest)
                  .data(RunHistoryModel::kSortRole)
                  .toDouble(),
              0.2);
}

TEST(RunHistoryModel, ACycleOfParentsIsListedAtTheTopLevel) {
    QMap<QString, HistoryRun> runs;
    runs.insert("/r/x", record("/r/x", "2026-12-01T09:00:00", 1, "/r/y"));
    runs.insert("/r/y", record("/r/y", "2026-12-01T10:00:00", 1, "/r/x"));
    runs.insert("/r/z", record("/r/z", "2026-12-01T11:00:00", 1, "/r/z"));
    RunHistoryModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.setRuns(runs, runs.keys());
    EXPECT_EQ(model.rowCount(), 3);
}

TEST(RunHistoryModel, AChangedRowIsUpdatedInPlaceANewRunResets) {
    RunHistoryModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    auto runs = family();
    model.setRuns(runs, runs.keys());
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    runs["/r/a2"].info.status = QStringLiteral("diverged");
    model.setRuns(runs, {"/r/a2"});
    EXPECT_EQ(changed.count(), 1);
    EXPECT_EQ(reset.count(), 0);
    EXPECT_EQ(model.indexOfPath("/r/a2", RunHistoryModel::ColStatus).data().toString(), "diverged");
    runs.insert("/r/b1", record("/r/b1", "2026-12-02T09:00:00", 0.2, "/r/b", 5));
    model.setRuns(runs, {"/r/b1"});
    EXPECT_EQ(reset.count(), 1);
    EXPECT_EQ(model.indexOfPath("/r/b1").parent(), model.indexOfPath("/r/b"));
}

TEST(RunHistoryProxies, SortKeepsFamiliesAndFilterKeepsParents) {
    RunHistoryModel model;
    RunHistorySortProxy sorted;
    RunHistoryFilterProxy filtered;
    sorted.setSourceModel(&model);
    filtered.setSourceModel(&sorted);
    model.setRuns(family(), family().keys());

    // Best result ascending: numbers compared as numbers; forks sorted among their siblings.
    filtered.sort(RunHistoryModel::ColBest, Qt::AscendingOrder);  // forwarded to `sorted`
    EXPECT_EQ(sorted.sortColumn(), RunHistoryModel::ColBest);
    EXPECT_EQ(walkHistory(filtered),
              (QStringList{"/r/b", "/r/a", "  /r/a2", "  /r/a1", "    /r/a11", "/r/orphan"}));
    // Date descending (the default view): newest first at each level.
    sorted.sort(RunHistoryModel::ColDate, Qt::DescendingOrder);
    EXPECT_EQ(walkHistory(filtered),
              (QStringList{"/r/b", "/r/a", "  /r/a2", "  /r/a1", "    /r/a11", "/r/orphan"}));
    // Equal sort keys: the date breaks the tie.
    sorted.sort(RunHistoryModel::ColTask, Qt::AscendingOrder);
    EXPECT_EQ(walkHistory(filtered).front(), "/r/orphan");  // 08:00, the oldest top-level run

    // Every word must match (case-insensitively); a matching fork keeps its parents shown.
    filtered.setWords(QStringLiteral("A11 fork"));
    EXPECT_EQ(walkHistory(filtered), (QStringList{"/r/a", "  /r/a1", "    /r/a11"}));
    filtered.setWords(QStringLiteral("cf-regression nothing"));
    EXPECT_TRUE(walkHistory(filtered).isEmpty());
    filtered.setWords(QString());
    EXPECT_EQ(walkHistory(filtered).size(), 6);
}

TEST(RunFolderScanner, ReadsForkParentsAndRereadsOnlyChangedFolders) {
    QTemporaryDir tmp;
    ASSERT_TRUE(tmp.isValid());
    const QString parent = tmp.filePath("cf-regression-20261201-090000");
    const QString child = tmp.filePath("cf-regression-20261201-100000");
    for (const QString& dir : {parent, child}) {
        ASSERT_TRUE(QDir().mkpath(dir));
        ASSERT_TRUE(writeFile(dir + "/metrics.csv", "method,seed,step,metric,value\n"));
    }
    ASSERT_TRUE(writeFile(parent + "/spec.json", R"({"name":"cf-regression","methods":[]})"));
    // A relative parent is taken from the child's folder.
    ASSERT_TRUE(writeFile(child + "/spec.json",
                          R"({"name":"cf-regression","parent":"../cf-regression-20261201-090000",)"
                          R"("fork_step":40,"methods":[]})"));
    int step = -1;
    EXPECT_EQ(liftlab::forkParentOf(child, &step), QDir::cleanPath(parent));
    EXPECT_EQ(step, 40);
    EXPECT_EQ(liftlab::forkParentOf(parent, &step), "");
    EXPECT_EQ(step, 0);

    RunFolderScanner scanner;
    QSignalSpy scanned(&scanner, &RunFolderScanner::scanned);
    scanner.setRoot(tmp.path());
    ASSERT_EQ(scanned.count(), 1);
    EXPECT_EQ(scanned.at(0).at(0).toStringList(),
              (QStringList{QDir::cleanPath(parent), QDir::cleanPath(child)}));
    EXPECT_EQ(scanned.at(0).at(1).toStringList().size(), 2);  // both read
    EXPECT_EQ(scanner.runs().value(QDir::cleanPath(child)).parent, QDir::cleanPath(parent));
    EXPECT_EQ(scanner.runs().value(QDir::cleanPath(child)).forkStep, 40);
    EXPECT_TRUE(scanner.watchedPaths().contains(QDir::cleanPath(tmp.path())));

    scanner.scan(false);  // nothing changed: nothing read again
    EXPECT_TRUE(scanned.last().at(1).toStringList().isEmpty());
    ASSERT_TRUE(writeFile(parent + "/summary.json", R"({"status":"ok","runs":[]})"));
    scanner.scan(false);
    EXPECT_EQ(scanned.last().at(1).toStringList(), QStringList{QDir::cleanPath(parent)});
    EXPECT_EQ(scanner.runs().value(QDir::cleanPath(parent)).info.status, "ok");
    scanner.scan(true);
    EXPECT_EQ(scanned.last().at(1).toStringList().size(), 2);
}
