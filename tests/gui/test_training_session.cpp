// TrainingSession on its own: divergence and data errors arrive as values/signals on the GUI
// thread, and destroying a running session joins its worker promptly.
#include <gtest/gtest.h>
#include <QElapsedTimer>
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
