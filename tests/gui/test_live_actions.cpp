// Issue 40 in the window, driven through its widgets: Change setting… sends cf-prox's λ into a
// running run (held by Pause, so the change lands mid-run), and Push into the shoulder… pushes a
// third of an ICNN run's readout coordinates. Each leaves its events.csv rows, its record in
// spec.json ("live_events": a re-run of spec.json replays it) and its markers — on the curves, and
// for the push on the Escape tab, whose key then reads what the pushed coordinates did.
#include <gtest/gtest.h>
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QToolBar>
#include <QToolButton>
#include <cmath>

#include "core/bounded_input.h"
#include "escape_panel.h"
#include "live_actions.h"
#include "loss_curve_panel.h"
#include "main_window.h"
#include "run_controls.h"
#include "run_view.h"
#include "spec_editor.h"
#include "training_session.h"

using liftlab::MainWindow;

namespace {

constexpr int kLiveTimeoutMs = 180000;

void setLiveLogEvery(MainWindow& w, int every) {
    w.findChild<QCheckBox*>(QStringLiteral("logEveryAuto"))->setChecked(false);
    w.findChild<QSpinBox*>(QStringLiteral("logEvery"))->setValue(every);
}

QStringList csvRows(const QString& file) {
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return {};
    QStringList rows = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    if (!rows.isEmpty()) rows.removeFirst();  // the header
    return rows;
}

// Holds the run (Pause) once it has logged step `atLeast`; true when held. The pause goes from
// the window's progress slot (up to a drain interval late), so a held run needs many steps
// after `atLeast` (an 80-step run left a fast machine ≈ 20 ms to take the pause).
bool holdAfter(MainWindow& w, int atLeast) {
    bool held = false;
    const auto c = QObject::connect(w.session(), &liftlab::TrainingSession::progress, &w,
                                    [&](double, int step, int) {
                                        if (held || step < atLeast) return;
                                        held = true;
                                        w.togglePause();
                                    });
    const bool ok = QTest::qWaitFor([&] { return w.session()->isPaused(); }, kLiveTimeoutMs);
    QObject::disconnect(c);
    return ok;
}

QToolButton* liveToolButton(MainWindow& w, QAction* a) {
    return qobject_cast<QToolButton*>(w.runControls()->toolBar()->widgetForAction(a));
}

}  // namespace

TEST(LiveActions, ChangeSettingSendsLambdaIntoTheRunningRunAndItIsRecordedAndMarked) {
    QTemporaryDir out;
    ASSERT_TRUE(out.isValid());
    MainWindow w;
    w.show();
    w.setOutputDir(out.path());
    ASSERT_TRUE(w.selectPreset("cf-regression"));
    w.setSteps(3000);
    setLiveLogEvery(w, 10);
    QAction* change = w.liveActions()->changeSettingAction();
    QToolButton* changeButton = liveToolButton(w, change);
    ASSERT_TRUE(changeButton);
    EXPECT_FALSE(changeButton->isEnabled());  // nothing runs
    EXPECT_FALSE(w.liveActions()->pushAction()->isEnabled());
    QSignalSpy applied(w.session(), &liftlab::TrainingSession::eventsApplied);
    w.startRun();
    ASSERT_TRUE(w.session()->isRunning()) << w.statusText().toStdString();
    ASSERT_TRUE(holdAfter(w, 20)) << w.statusText().toStdString();
    EXPECT_TRUE(changeButton->isEnabled());
    EXPECT_FALSE(w.liveActions()->pushAction()->isEnabled());  // not an ICNN run
    EXPECT_TRUE(w.liveActions()->pushAction()->toolTip().contains("ICNN"));

    QTest::mouseClick(changeButton, Qt::LeftButton);
    auto* dialog = w.liveActions()->settingDialog();
    ASSERT_TRUE(dialog && dialog->isVisible());
    const int prox = dialog->methodBox()->findText(QStringLiteral("cf-prox"));
    ASSERT_GE(prox, 0);
    dialog->methodBox()->setCurrentIndex(prox);
    const int lambda = dialog->keyBox()->findText(QStringLiteral("lambda"));
    ASSERT_GE(lambda, 0) << "keys of cf-prox: " << dialog->keyBox()->count();
    dialog->keyBox()->setCurrentIndex(lambda);
    // A value that is not a number stays in the dialog with the reason; then 10 goes.
    QPushButton* ok = dialog->buttons()->button(QDialogButtonBox::Ok);
    QTest::keyClicks(dialog->valueEdit(), QStringLiteral("ten"));
    QTest::mouseClick(ok, Qt::LeftButton);
    EXPECT_TRUE(dialog->isVisible());
    EXPECT_TRUE(dialog->errorLabel()->text().contains("not a number"));
    dialog->valueEdit()->clear();
    QTest::keyClicks(dialog->valueEdit(), QStringLiteral("10"));
    QTest::mouseClick(ok, Qt::LeftButton);
    EXPECT_TRUE(QTest::qWaitFor([&] { return w.liveActions()->settingDialog() == nullptr; }, 5000));
    EXPECT_TRUE(w.statusText().contains("Sent")) << w.statusText().toStdString();
    w.togglePause();  // the run goes on and takes the change at its next log point

    // Applied while the run goes on: the marker comes from the live rows.
    ASSERT_TRUE(QTest::qWaitFor([&] { return applied.count() > 0; }, kLiveTimeoutMs));
    EXPECT_TRUE(w.curvePanel()->eventMarkerCount() >= 1);
    ASSERT_TRUE(QTest::qWaitFor([&] { return !w.session()->isRunning(); }, kLiveTimeoutMs));
    const QString dir = w.lastRunDir();
    ASSERT_FALSE(dir.isEmpty()) << w.statusText().toStdString();
    const QStringList rows = csvRows(QDir(dir).filePath(QStringLiteral("events.csv")));
    ASSERT_EQ(rows.size(), 1) << rows.join(" | ").toStdString();
    const QStringList f = rows[0].split(QLatin1Char(','));
    ASSERT_EQ(f.size(), 6);
    const int step = f[0].toInt();
    EXPECT_GE(step, 20);
    EXPECT_LT(step, 3000);
    EXPECT_EQ(f[1], QStringLiteral("cf-prox"));
    EXPECT_EQ(f[3], QStringLiteral("lambda"));
    EXPECT_EQ(f[5], QStringLiteral("10"));
    const auto spec = liftlab::read_json_file(QDir(dir).filePath("spec.json").toStdString());
    ASSERT_TRUE(spec.contains("live_events")) << spec.dump();
    EXPECT_EQ(spec["live_events"],
              nlohmann::json::array(
                  {{{"step", step}, {"method", "cf-prox"}, {"key", "lambda"}, {"value", 10.0}}}));
    // The finished run's markers (from its events.csv): one, labelled old → new.
    ASSERT_EQ(w.curvePanel()->eventMarkerCount(), 1);
    EXPECT_TRUE(w.curvePanel()->eventMarkerLabels()[0].startsWith("cf-prox.lambda "));
    EXPECT_TRUE(w.curvePanel()->eventMarkerLabels()[0].endsWith(QStringLiteral("\u219210")));
    EXPECT_FALSE(changeButton->isEnabled());
}

TEST(LiveActions, PushIntoTheShoulderPushesEveryMethodOfAnIcnnRunAndTheEscapeTabShowsIt) {
    QTemporaryDir out;
    ASSERT_TRUE(out.isValid());
    MainWindow w;
    w.show();
    w.setOutputDir(out.path());
    ASSERT_TRUE(w.selectPreset("icnn-escape"));
    w.setSteps(1000);
    setLiveLogEvery(w, 10);
    for (const QString& m : w.methodLabels())
        w.setMethodChecked(m, m == "lifter" || m == "softplus");
    for (const auto& [key, value] : {std::pair{"icnn.width", "16"},
                                     {"icnn.quadrature_points", "500"},
                                     {"task.n_train", "1024"},
                                     {"task.n_test", "256"}})
        ASSERT_TRUE(w.specEditor()->setValue(QString::fromLatin1(key), QString::fromLatin1(value)))
            << key;
    QAction* push = w.liveActions()->pushAction();
    w.startRun();
    ASSERT_TRUE(w.session()->isRunning()) << w.statusText().toStdString();
    ASSERT_TRUE(holdAfter(w, 10)) << w.statusText().toStdString();
    ASSERT_TRUE(push->isEnabled()) << push->toolTip().toStdString();
    QToolButton* pushButton = liveToolButton(w, push);
    ASSERT_TRUE(pushButton);
    QTest::mouseClick(pushButton, Qt::LeftButton);
    auto* dialog = w.liveActions()->pushDialog();
    ASSERT_TRUE(dialog && dialog->isVisible());
    dialog->layersBox()->setCurrentIndex(dialog->layersBox()->findData(QStringLiteral("readout")));
    dialog->fractionBox()->setValue(0.34);
    // The depth cannot be set above the shoulder's edge (σ(θ̃) < 0.05 ⇔ θ̃ < −2.944).
    dialog->depthBox()->setValue(-1.0);
    EXPECT_LT(dialog->depthBox()->value(), std::log(0.05 / 0.95));
    dialog->depthBox()->setValue(-4.5);
    QTest::mouseClick(dialog->buttons()->button(QDialogButtonBox::Ok), Qt::LeftButton);
    EXPECT_TRUE(QTest::qWaitFor([&] { return w.liveActions()->pushDialog() == nullptr; }, 5000));
    w.togglePause();
    // While the run goes on, the Escape tab marks the push.
    ASSERT_TRUE(QTest::qWaitFor([&] { return std::isfinite(w.runView()->escape()->pushStep()); },
                                kLiveTimeoutMs));
    const double pushedAt = w.runView()->escape()->pushStep();
    ASSERT_TRUE(QTest::qWaitFor([&] { return !w.session()->isRunning(); }, kLiveTimeoutMs));
    const QString dir = w.lastRunDir();
    const QStringList rows = csvRows(QDir(dir).filePath(QStringLiteral("events.csv")));
    ASSERT_EQ(rows.size(), 2) << rows.join(" | ").toStdString();  // lifter and softplus
    QStringList methods;
    for (const QString& r : rows) {
        const QStringList f = r.split(QLatin1Char(','));
        ASSERT_EQ(f.size(), 6);
        EXPECT_EQ(f[0].toInt(), static_cast<int>(pushedAt));
        EXPECT_EQ(f[3], QStringLiteral("push.readout"));
        // 16 readout coordinates, round(0.34 × 16) = 5 of them pushed: at least 5/16 after.
        EXPECT_GE(f[5].toDouble(), 5.0 / 16 - 1e-12) << r.toStdString();
        EXPECT_GE(f[5].toDouble(), f[4].toDouble()) << r.toStdString();
        methods << f[1];
    }
    methods.sort();
    EXPECT_EQ(methods, (QStringList{"lifter", "softplus"}));
    const auto spec = liftlab::read_json_file(QDir(dir).filePath("spec.json").toStdString());
    ASSERT_TRUE(spec.contains("live_events"));
    EXPECT_EQ(spec["live_events"], nlohmann::json::array({{{"step", static_cast<int>(pushedAt)},
                                                           {"method", "push"},
                                                           {"key", "readout"},
                                                           {"value", 0.34},
                                                           {"depth", -4.5}}}));
    // Markers on the curves; the Escape key reads the pushed coordinates' escape per method.
    EXPECT_GE(w.curvePanel()->eventMarkerCount(), 1);
    EXPECT_TRUE(w.curvePanel()->eventMarkerLabels().join(" ").contains("push.readout"));
}
