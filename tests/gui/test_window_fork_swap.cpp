// Issue 40 item 2 in the window, a method swapped in the fork: the fork form unticks cf-ridge and
// adds cf-prox (Add method), "New methods start from" picks cf-ridge, and the child's cf-prox
// starts from the parent's cf-ridge weights at the fork step (spec key fork_source, as
// `liftlab-cli run --fork … --fork-from-method cf-ridge`); a fork the engine refuses says why in
// the form before anything starts, leaving no folder and the form as the user left it.
#include <gtest/gtest.h>
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QSlider>
#include <QTemporaryDir>
#include <QTest>
#include <QToolBar>
#include <QToolButton>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/bounded_input.h"
#include "experiment_form.h"
#include "fork_point_slider.h"
#include "loss_curve_panel.h"
#include "main_window.h"
#include "run_controls.h"
#include "run_folder_data.h"
#include "spec_editor.h"
#include "training/resume.h"
#include "training_session.h"

using liftlab::MainWindow;

namespace {

constexpr int kSwapTestTimeoutMs = 120000;

QToolButton* startButton(MainWindow& w) {
    return qobject_cast<QToolButton*>(
        w.runControls()->toolBar()->widgetForAction(w.runControls()->startAction()));
}

bool clickStartAndWait(MainWindow& w) {
    QToolButton* start = startButton(w);
    if (!start) return false;
    QTest::mouseClick(start, Qt::LeftButton);
    if (!w.session()->isRunning()) return false;
    return QTest::qWaitFor([&] { return !w.session()->isRunning(); }, kSwapTestTimeoutMs);
}

QCheckBox* methodBox(MainWindow& w, const QString& label) {
    return w.form()->findChild<QCheckBox*>(QStringLiteral("method:") + label);
}

// Ticks or unticks a method by clicking its box.
void clickMethod(MainWindow& w, const QString& label, bool ticked) {
    QCheckBox* box = methodBox(w, label);
    ASSERT_NE(box, nullptr) << label.toStdString();
    // On its indicator (the box may be wider than its text: its centre is not a hit).
    if (box->isChecked() != ticked)
        QTest::mouseClick(box, Qt::LeftButton, {}, QPoint(6, box->height() / 2));
    ASSERT_EQ(box->isChecked(), ticked) << label.toStdString();
}

// A short cf-regression parent of two methods (cf-ridge, adam) that keeps a fork state at every
// log point, on a small data set: 60 steps, logged every 6.
QString runParent(MainWindow& w, const QString& out) {
    w.setOutputDir(out);
    EXPECT_TRUE(w.selectPreset("cf-regression"));
    w.setSteps(60);
    clickMethod(w, QStringLiteral("sgd"), false);
    clickMethod(w, QStringLiteral("cf-prox"), false);
    for (const auto& [key, value] : {std::pair{"fork_state_every", "1"},
                                     {"task.n_train", "1024"},
                                     {"task.n_test", "256"},
                                     {"diagnostics.one_step_every", "0"},
                                     {"diagnostics.spectrum_every", "0"}})
        EXPECT_TRUE(w.specEditor()->setValue(QLatin1String(key), QLatin1String(value))) << key;
    if (!clickStartAndWait(w)) return QString();
    return QDir::cleanPath(w.lastRunDir());
}

// Right-click at `step` on the parent's curves, "Fork from step N…": the form becomes the fork.
int forkAt(MainWindow& w, const QString& parent, int step) {
    if (!w.openRun(parent)) return -1;
    std::unique_ptr<QMenu> menu(w.curvePanel()->createContextMenu(&w, step));
    for (QAction* a : menu->actions())
        if (a->objectName() == QLatin1String("forkFromStep") && a->isEnabled()) {
            a->trigger();
            return w.form()->forkParent() == parent ? w.form()->forkStep() : -1;
        }
    return -1;
}

// "Add method": picks `name` in the combo and clicks the button.
void addMethod(MainWindow& w, const QString& name) {
    auto* combo = w.form()->findChild<QComboBox*>(QStringLiteral("addMethodName"));
    auto* add = w.form()->findChild<QPushButton*>(QStringLiteral("addMethod"));
    ASSERT_TRUE(combo && add);
    ASSERT_TRUE(combo->isVisible() && add->isEnabled());
    const int at = combo->findText(name);
    ASSERT_GE(at, 0) << name.toStdString() << " not offered";
    combo->setCurrentIndex(at);
    QTest::mouseClick(add, Qt::LeftButton);
    ASSERT_NE(methodBox(w, name), nullptr);
}

int folderCount(const QString& out) {
    return int(QDir(out).entryList(QDir::Dirs | QDir::NoDotAndDotDot).size());
}

// Each test's shown window, its output folder and its clock (started first).
struct ForkWindow {
    QElapsedTimer clock;
    QTemporaryDir out;
    MainWindow w;
    ForkWindow() {
        clock.start();
        w.resize(1400, 900);
        w.show();
    }
};

}  // namespace

TEST(WindowFork, SwappedMethodStartsFromTheParentsMethodAtTheForkStep) {
    ForkWindow fixture;
    ASSERT_TRUE(fixture.out.isValid());
    QElapsedTimer& clock = fixture.clock;
    const QTemporaryDir& out = fixture.out;
    MainWindow& w = fixture.w;
    const QString parent = runParent(w, out.path());
    ASSERT_FALSE(parent.isEmpty()) << w.statusText().toStdString();
    const int kept = forkAt(w, parent, 32);
    ASSERT_GT(kept, 0) << w.statusText().toStdString();
    ASSERT_EQ(kept, liftlab::latest_fork_step(parent.toStdString(), 32));

    // The fork form: Add method offers what the task can run and the form lacks; no source row
    // until the fork adds a method.
    auto* source = w.form()->findChild<QComboBox*>(QStringLiteral("forkSource"));
    ASSERT_NE(source, nullptr);
    EXPECT_FALSE(source->isVisible());
    const QStringList addable = w.form()->addableMethods();
    EXPECT_TRUE(addable.contains("cf-prox") && addable.contains("sgd"))
        << addable.join(", ").toStdString();
    EXPECT_FALSE(addable.contains("cf-ridge") || addable.contains("ce") ||
                 addable.contains("lifter"))
        << addable.join(", ").toStdString();

    // cf-ridge swapped for cf-prox: untick cf-ridge, add cf-prox. The source defaults to the
    // method of its family the fork leaves out.
    clickMethod(w, QStringLiteral("cf-ridge"), false);
    addMethod(w, QStringLiteral("cf-prox"));
    EXPECT_TRUE(source->isVisible());
    EXPECT_EQ(source->currentData().toString(), QStringLiteral("cf-ridge"));
    EXPECT_EQ(w.form()->forkSource(), QStringLiteral("cf-ridge"));
    EXPECT_NE(w.form()->findChild<QLineEdit*>(QStringLiteral("lambda")), nullptr);  // its λ
    if (const QByteArray png = qgetenv("LIFTLAB_FORK_SWAP_PNG"); !png.isEmpty()) {
        QTest::qWait(100);  // the form laid out
        EXPECT_TRUE(w.grab().save(QString::fromLocal8Bit(png)));
    }

    ASSERT_TRUE(clickStartAndWait(w)) << w.statusText().toStdString();
    EXPECT_TRUE(w.statusText().contains("Finished")) << w.statusText().toStdString();
    const QString child = QDir::cleanPath(w.lastRunDir());
    ASSERT_NE(child, parent);

    // spec.json: the parent, the fork step and the source, as --fork-from-method records it.
    const nlohmann::json spec = liftlab::read_json_file(child.toStdString() + "/spec.json");
    EXPECT_EQ(QString::fromStdString(spec.value("parent", std::string())), parent);
    EXPECT_EQ(spec.value("fork_step", -1), kept);
    EXPECT_EQ(spec.value("fork_source", std::string()), "cf-ridge");
    std::vector<std::string> names;
    for (const auto& m : spec["methods"]) names.push_back(m.value("name", std::string()));
    EXPECT_EQ(names, (std::vector<std::string>{"adam", "cf-prox"}));

    // The child's cf-prox starts where the parent's cf-ridge was: its first logged test loss, at
    // the fork step, equals the parent's cf-ridge test loss there — exactly (tolerance 0: the
    // same backbone and the same closed-form solve; cli_interactive_crossfork finds the same
    // text), and it trains on after it.
    const auto childData = liftlab::read_run_folder(child.toStdString());
    const auto parentData = liftlab::read_run_folder(parent.toStdString());
    const auto& prox = childData.metrics.at("test_loss").at("cf-prox");
    const auto& ridge = parentData.metrics.at("test_loss").at("cf-ridge");
    ASSERT_FALSE(prox.empty());
    EXPECT_EQ(prox.begin()->first, kept);
    ASSERT_EQ(ridge.count(kept), 1u);
    EXPECT_EQ(prox.begin()->second, ridge.at(kept));
    std::printf("cf-prox at the fork step %d: %.9g (parent's cf-ridge %.9g)\n", kept,
                prox.begin()->second.front(), ridge.at(kept).front());
    EXPECT_GT(prox.rbegin()->first, kept);
    EXPECT_NE(prox.rbegin()->second, ridge.at(kept));

    // The fork is marked on the child's curves.
    ASSERT_TRUE(w.openRun(child));
    EXPECT_TRUE(w.curvePanel()->eventMarkerLabels().contains(QStringLiteral("fork @%1").arg(kept)))
        << w.curvePanel()->eventMarkerLabels().join(", ").toStdString();
    std::printf("swap test: %lld ms\n", static_cast<long long>(clock.elapsed()));
}

TEST(WindowFork, RefusedForkSaysWhyInTheFormAndStartsNothing) {
    ForkWindow fixture;
    ASSERT_TRUE(fixture.out.isValid());
    QElapsedTimer& clock = fixture.clock;
    const QTemporaryDir& out = fixture.out;
    MainWindow& w = fixture.w;
    const QString parent = runParent(w, out.path());
    ASSERT_FALSE(parent.isEmpty()) << w.statusText().toStdString();
    const int kept = forkAt(w, parent, 32);
    ASSERT_GT(kept, 0) << w.statusText().toStdString();

    // cf-prox added beside both of the parent's methods (adam and cf-ridge, one family): no
    // source is picked for it, and Start is refused with the engine's reason, in the form.
    addMethod(w, QStringLiteral("cf-prox"));
    auto* source = w.form()->findChild<QComboBox*>(QStringLiteral("forkSource"));
    ASSERT_NE(source, nullptr);
    EXPECT_TRUE(source->isVisible());
    EXPECT_EQ(w.form()->forkSource(), QString());
    auto* lambda = w.form()->findChild<QLineEdit*>(QStringLiteral("lambda"));
    ASSERT_NE(lambda, nullptr);
    lambda->setText(QStringLiteral("10"));
    const int before = folderCount(out.path());
    QTest::mouseClick(startButton(w), Qt::LeftButton);
    EXPECT_FALSE(w.session()->isRunning());
    auto* problem = w.form()->findChild<QLabel*>(QStringLiteral("forkProblem"));
    ASSERT_NE(problem, nullptr);
    EXPECT_TRUE(problem->isVisible());
    EXPECT_TRUE(problem->text().contains("method 'cf-prox' has no state in the parent"))
        << problem->text().toStdString();
    EXPECT_TRUE(w.statusText().contains("Cannot fork")) << w.statusText().toStdString();
    EXPECT_EQ(folderCount(out.path()), before);  // nothing started, no folder
    if (const QByteArray png = qgetenv("LIFTLAB_FORK_REFUSED_PNG"); !png.isEmpty()) {
        QTest::qWait(100);  // the form laid out
        EXPECT_TRUE(w.grab().save(QString::fromLocal8Bit(png)));
    }

    // The form is as the user left it: still the fork, cf-prox added, λ typed.
    EXPECT_EQ(w.form()->forkParent(), parent);
    EXPECT_EQ(w.form()->forkStep(), kept);
    ASSERT_NE(methodBox(w, QStringLiteral("cf-prox")), nullptr);
    EXPECT_TRUE(methodBox(w, QStringLiteral("cf-prox"))->isChecked());
    EXPECT_EQ(lambda->text(), QStringLiteral("10"));

    // Choosing the source (adam) in the box: the fork starts, and the refusal goes.
    source->setCurrentIndex(source->findData(QStringLiteral("adam")));
    ASSERT_TRUE(clickStartAndWait(w)) << w.statusText().toStdString();
    EXPECT_FALSE(problem->isVisible());
    const nlohmann::json spec =
        liftlab::read_json_file(w.lastRunDir().toStdString() + "/spec.json");
    EXPECT_EQ(spec.value("fork_source", std::string()), "adam");
    EXPECT_EQ(folderCount(out.path()), before + 1);
    std::printf("refusal test: %lld ms\n", static_cast<long long>(clock.elapsed()));
}

// The checkpoint slider under the curves: its positions are the run's kept fork steps (the
// handle cannot stand between two), it follows the keyboard, and its button forks from the step
// under the handle; it is hidden while a run goes on and in a comparison.
TEST(WindowFork, CheckpointSliderSnapsToKeptStepsAndForksFromTheOneChosen) {
    ForkWindow fixture;
    ASSERT_TRUE(fixture.out.isValid());
    QElapsedTimer& clock = fixture.clock;
    const QTemporaryDir& out = fixture.out;
    MainWindow& w = fixture.w;
    const QString parent = runParent(w, out.path());
    ASSERT_FALSE(parent.isEmpty()) << w.statusText().toStdString();
    ASSERT_TRUE(w.openRun(parent));
    auto* points = w.findChild<liftlab::ForkPointSlider*>();
    ASSERT_NE(points, nullptr);
    EXPECT_TRUE(points->isVisible());
    const std::vector<int> kept = liftlab::kept_fork_steps(parent.toStdString());
    ASSERT_GE(kept.size(), 3u);
    EXPECT_EQ(std::vector<int>(points->steps().begin(), points->steps().end()), kept);
    QSlider* slider = points->slider();
    EXPECT_EQ(slider->maximum() - slider->minimum() + 1, int(kept.size()));  // one position a step
    EXPECT_EQ(points->currentStep(), kept.back());

    // The keyboard walks the kept steps: Home → the first, → twice → the third.
    slider->setFocus();
    QTest::keyClick(slider, Qt::Key_Home);
    EXPECT_EQ(points->currentStep(), kept[0]);
    QTest::keyClick(slider, Qt::Key_Right);
    QTest::keyClick(slider, Qt::Key_Right);
    EXPECT_EQ(points->currentStep(), kept[2]);
    auto* stepLabel = points->findChild<QLabel*>(QStringLiteral("forkPointStep"));
    ASSERT_NE(stepLabel, nullptr);
    EXPECT_EQ(stepLabel->text(), QStringLiteral("step %1").arg(kept[2]));
    EXPECT_EQ(points->forkButton()->text(), QStringLiteral("Fork from step %1…").arg(kept[2]));
    // A step between two kept ones snaps to the nearer (a tie to the earlier).
    points->setNearestStep(kept[1] + (kept[2] - kept[1]) / 2);
    EXPECT_EQ(points->currentStep(), kept[1]);
    points->setNearestStep(kept[2] + 1);
    EXPECT_EQ(points->currentStep(), kept[2]);

    // Fork from step N… : the form is the fork from exactly that kept state.
    QTest::mouseClick(points->forkButton(), Qt::LeftButton);
    EXPECT_EQ(w.form()->forkParent(), parent) << w.statusText().toStdString();
    EXPECT_EQ(w.form()->forkStep(), kept[2]);
    QTest::mouseClick(startButton(w), Qt::LeftButton);
    ASSERT_TRUE(w.session()->isRunning()) << w.statusText().toStdString();
    EXPECT_FALSE(points->isVisible());  // not while a run goes on
    ASSERT_TRUE(QTest::qWaitFor([&] { return !w.session()->isRunning(); }, kSwapTestTimeoutMs));
    const QString child = QDir::cleanPath(w.lastRunDir());
    const nlohmann::json spec = liftlab::read_json_file(child.toStdString() + "/spec.json");
    EXPECT_EQ(spec.value("fork_step", -1), kept[2]);
    ASSERT_TRUE(w.compareRuns({parent, child}));
    EXPECT_FALSE(points->isVisible());  // nor in a comparison
    std::printf("checkpoint slider test: %lld ms\n", static_cast<long long>(clock.elapsed()));
}

// An ICNN fork the engine refuses for another reason than a missing source: softplus-wide (an
// ICNN widened to the lifter's parameter count) cannot start from the parent's softplus, whose
// ICNN has another width. The reason shows in the form; nothing starts, no folder.
TEST(WindowFork, IcnnForkOfAnotherWidthIsRefusedWithTheEngineReason) {
    ForkWindow fixture;
    ASSERT_TRUE(fixture.out.isValid());
    QElapsedTimer& clock = fixture.clock;
    const QTemporaryDir& out = fixture.out;
    MainWindow& w = fixture.w;
    w.setOutputDir(out.path());
    ASSERT_TRUE(w.selectPreset("icnn-escape"));
    w.setSteps(20);
    clickMethod(w, QStringLiteral("lifter"), false);
    clickMethod(w, QStringLiteral("softplus-const"), false);
    for (const auto& [key, value] : {std::pair{"fork_state_every", "1"},
                                     {"icnn.width", "16"},
                                     {"icnn.quadrature_points", "500"},
                                     {"task.n_train", "1024"},
                                     {"task.n_test", "256"}})
        ASSERT_TRUE(w.specEditor()->setValue(QLatin1String(key), QLatin1String(value))) << key;
    ASSERT_TRUE(clickStartAndWait(w)) << w.statusText().toStdString();
    const QString parent = QDir::cleanPath(w.lastRunDir());
    const int kept = forkAt(w, parent, 10);
    ASSERT_GT(kept, 0) << w.statusText().toStdString();

    // Add method offers the positivity strategies only (no closed form on an ICNN task).
    const QStringList addable = w.form()->addableMethods();
    EXPECT_TRUE(addable.contains("softplus-wide") && addable.contains("lifter"))
        << addable.join(", ").toStdString();
    EXPECT_FALSE(addable.contains("cf-prox") || addable.contains("adam"))
        << addable.join(", ").toStdString();
    addMethod(w, QStringLiteral("softplus-wide"));
    auto* source = w.form()->findChild<QComboBox*>(QStringLiteral("forkSource"));
    ASSERT_NE(source, nullptr);
    source->setCurrentIndex(source->findData(QStringLiteral("softplus")));
    ASSERT_EQ(w.form()->forkSource(), QStringLiteral("softplus"));
    const int before = folderCount(out.path());
    QTest::mouseClick(startButton(w), Qt::LeftButton);
    EXPECT_FALSE(w.session()->isRunning());
    auto* problem = w.form()->findChild<QLabel*>(QStringLiteral("forkProblem"));
    ASSERT_NE(problem, nullptr);
    EXPECT_TRUE(problem->isVisible());
    EXPECT_TRUE(problem->text().contains("softplus-wide trains a wider ICNN than the others"))
        << problem->text().toStdString();
    EXPECT_EQ(folderCount(out.path()), before);
    EXPECT_EQ(w.form()->forkParent(), parent);
    EXPECT_EQ(w.form()->forkSource(), QStringLiteral("softplus"));  // the user's pick stays
    std::printf("icnn refusal test: %lld ms\n", static_cast<long long>(clock.elapsed()));
}
