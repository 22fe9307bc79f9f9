// TrainingSession on its own: divergence and data errors arrive as values/signals on the GUI
// thread, and destroying a running session joins its worker promptly; a user's model whose
// forward never returns is refused at its check's time limit, and Stop ends the check at once.
#include <gtest/gtest.h>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

#include "spec/experiment_spec.h"
#include "spec/presets.h"
#include "training_session.h"

using liftlab::SessionStatus;
using liftlab::TrainingSession;

namespace {

constexpr int kRunTimeoutMs = 120000;

nlohmann::json smallRegression(int steps) {
    nlohmann::json j = liftlab::load_spec_source("cf-regression");
    j["steps"] = steps;
    j["diagnostics"]["spectrum_every"] = 0;
    j["diagnostics"]["one_step_every"] = 0;
    return j;
}

}  // namespace

TEST(TrainingSession, DivergingMethodIsReportedAndOthersFinish) {
    nlohmann::json j = smallRegression(100);
    j["methods"] = {{{"name", "sgd"}, {"lr", 1e6}}, {{"name", "cf-prox"}, {"lambda", 1.0}}};
    TrainingSession session;
    QVector<SessionStatus> statuses;
    QObject::connect(&session, &TrainingSession::statusChanged,
                     [&](const SessionStatus& s) { statuses.push_back(s); });
    QSignalSpy finished(&session, &TrainingSession::finished);
    ASSERT_TRUE(session.start(liftlab::parse_spec(j), QString()));
    EXPECT_FALSE(session.start(liftlab::parse_spec(j), QString()));  // one run at a time
    ASSERT_TRUE(QTest::qWaitFor([&] { return finished.count() == 1; }, kRunTimeoutMs));
    EXPECT_FALSE(session.isRunning());
    EXPECT_EQ(finished.at(0).at(0).toString(), "ok");  // cf-prox still finished

    bool sgdDiverged = false, proxOk = false;
    for (const auto& s : statuses) {
        sgdDiverged = sgdDiverged || (s.method == "sgd" && s.status == "diverged" && s.step > 0);
        proxOk = proxOk || (s.method == "cf-prox" && s.status == "ok");
    }
    EXPECT_TRUE(sgdDiverged);
    EXPECT_TRUE(proxOk);
}

TEST(TrainingSession, BadDataFileIsReportedNotThrown) {
    nlohmann::json j = smallRegression(10);
    j["task"] = {{"kind", "csv-regression"}, {"csv_path", "/nonexistent/liftlab-data.csv"}};
    TrainingSession session;
    QSignalSpy failed(&session, &TrainingSession::failed);
    QSignalSpy finished(&session, &TrainingSession::finished);
    ASSERT_TRUE(session.start(liftlab::parse_spec(j), QString()));
    ASSERT_TRUE(QTest::qWaitFor([&] { return failed.count() == 1; }, kRunTimeoutMs));
    EXPECT_TRUE(failed.at(0).at(0).toString().contains("liftlab-data.csv"))
        << failed.at(0).at(0).toString().toStdString();
    EXPECT_EQ(finished.count(), 0);
    EXPECT_FALSE(session.isRunning());
}

TEST(TrainingSession, DestroyingARunningSessionJoinsPromptly) {
    QTemporaryDir out;
    auto session = std::make_unique<TrainingSession>();
    QSignalSpy progress(session.get(), &TrainingSession::progress);
    ASSERT_TRUE(session->start(liftlab::parse_spec(smallRegression(1000000)), out.path()));
    ASSERT_TRUE(QTest::qWaitFor([&] { return progress.count() > 0; }, kRunTimeoutMs));
    QElapsedTimer clock;
    clock.start();
    session.reset();
    EXPECT_LT(clock.elapsed(), 2000);
}

namespace {

// A TorchScript backbone (16 → 8) whose forward never returns, written by Debian's python3-torch
// into `dir` ("" when python3 cannot write it).
QString hangingModel(const QTemporaryDir& dir) {
    QFile script(dir.filePath(QStringLiteral("make_hang.py")));
    if (!script.open(QIODevice::WriteOnly)) return {};
    script.write(
        "import sys, torch\n"
        "class Hang(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.lin = torch.nn.Linear(16, 8)\n"
        "    def forward(self, x):\n"
        "        i = 0\n"
        "        while i >= 0:\n"
        "            i = i + 1\n"
        "        return self.lin(x)\n"
        "torch.jit.script(Hang()).save(sys.argv[1])\n");
    script.close();
    const QString model = dir.filePath(QStringLiteral("hang.pt"));
    QProcess python;
    python.start(QStringLiteral("/usr/bin/python3"), {script.fileName(), model});
    if (!python.waitForFinished(60000) || python.exitCode() != 0) return {};
    return model;
}

}  // namespace

TEST(TrainingSession, AHangingModelCheckEndsAtItsLimitOrAtStop) {
    QTemporaryDir dir;
    const QString model = hangingModel(dir);
    if (model.isEmpty()) GTEST_SKIP() << "python3-torch cannot write the test model";
    nlohmann::json j = smallRegression(100);
    j["backbone"] = {{"kind", "torchscript"}, {"script", model.toStdString()}};
    // A LibTorch process takes ≈ 1 s to start, and more than 3 s on a 2-core machine running a
    // parallel ctest beside a build: 6 s leaves the child time to reach the hanging forward.
    j["probe_timeout_seconds"] = 6;
    {
        TrainingSession session;
        QSignalSpy failed(&session, &TrainingSession::failed);
        QElapsedTimer clock;
        clock.start();
        ASSERT_TRUE(session.start(liftlab::parse_spec(j), dir.filePath(QStringLiteral("runs"))));
        ASSERT_TRUE(QTest::qWaitFor([&] { return failed.count() == 1; }, kRunTimeoutMs));
        EXPECT_LT(clock.elapsed(), 6000 + 3000);  // the limit, then SIGKILL, the reap, the signal
        EXPECT_TRUE(failed.at(0).at(0).toString().contains("forward did not return within 6 s"))
            << failed.at(0).at(0).toString().toStdString();
    }
    j["probe_timeout_seconds"] = 60;
    TrainingSession session;
    QSignalSpy finished(&session, &TrainingSession::finished);
    ASSERT_TRUE(session.start(liftlab::parse_spec(j), dir.filePath(QStringLiteral("runs"))));
    QTest::qWait(1500);  // the child is in the forward by now
    ASSERT_TRUE(session.isRunning());
    QElapsedTimer clock;
    clock.start();
    session.stop();
    ASSERT_TRUE(QTest::qWaitFor([&] { return finished.count() == 1; }, kRunTimeoutMs));
    EXPECT_LT(clock.elapsed(), 2000);
    EXPECT_EQ(finished.at(0).at(0).toString(), "cancelled");
    EXPECT_FALSE(QFile::exists(dir.filePath(QStringLiteral("runs"))));  // nothing was written
}
