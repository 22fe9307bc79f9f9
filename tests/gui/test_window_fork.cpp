// Issue 40 item 2 in the window: "Fork from step N…" on the curves forks a saved run at its latest
// kept state ≤ N with a changed setting, through the real widgets; the child folder names its
// parent and fork step, the history lists it under its parent, and the curves draw the parent up
// to the fork with the fork marked. A run without fork states offers the action disabled, saying
// why.
#include <gtest/gtest.h>
#include <qcustomplot.h>
#include <QAction>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/bounded_input.h"
#include "experiment_form.h"
#include "loss_curve_panel.h"
#include "main_window.h"
#include "run_folder_data.h"
#include "run_history_panel.h"
#include "spec_editor.h"
#include "training/resume.h"
#include "training_session.h"

using liftlab::MainWindow;

namespace {

constexpr int kForkTestTimeoutMs = 120000;

bool runToEnd(MainWindow& w) {
    w.startRun();
    if (!w.session()->isRunning()) return false;
    return QTest::qWaitFor([&] { return !w.session()->isRunning(); }, kForkTestTimeoutMs);
}

QAction* forkAction(QMenu* menu) {
    for (QAction* a : menu->actions())
        if (a->objectName() == QLatin1String("forkFromStep")) return a;
    return nullptr;
}

nlohmann::json specOf(const QString& dir) {
    return liftlab::read_json_file(dir.toStdString() + "/spec.json");
}

}  // namespace

TEST(WindowFork, ForkFromTheCurvesMakesAChildUnderItsParentWithTheForkMarked) {
    QTemporaryDir out;
    ASSERT_TRUE(out.isValid());
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    w.setOutputDir(out.path());
    ASSERT_TRUE(w.selectPreset("cf-regression"));
    w.setSteps(60);
    liftlab::LossCurvePanel* curves = w.curvePanel();

    // A run that kept no fork states: the action is there, disabled, saying what to do.
    ASSERT_TRUE(runToEnd(w)) << w.statusText().toStdString();
    const QString plain = QDir::cleanPath(w.lastRunDir());
    ASSERT_TRUE(w.openRun(plain));
    std::unique_ptr<QMenu> menu(curves->createContextMenu(&w, 30));
    QAction* fork = forkAction(menu.get());
    ASSERT_NE(fork, nullptr);
    EXPECT_FALSE(fork->isEnabled());
    EXPECT_TRUE(fork->toolTip().contains("fork_state_every")) << fork->toolTip().toStdString();
    EXPECT_FALSE(w.forkFromStep(30));

    // The parent keeps a state at every log point (the opened run's form has every key).
    ASSERT_TRUE(w.specEditor()->setValue(QStringLiteral("fork_state_every"), QStringLiteral("1")));
    ASSERT_TRUE(runToEnd(w)) << w.statusText().toStdString();
    const QString parent = QDir::cleanPath(w.lastRunDir());
    ASSERT_NE(parent, plain);
    ASSERT_TRUE(w.openRun(parent));
    const int asked = 32;
    const int kept = liftlab::latest_fork_step(parent.toStdString(), asked);
    ASSERT_GT(kept, 0);
    ASSERT_LE(kept, asked);

    // Right-click at step 32: "Fork from step 32…", enabled; the form becomes the fork.
    menu.reset(curves->createContextMenu(&w, asked));
    fork = forkAction(menu.get());
    ASSERT_NE(fork, nullptr);
    EXPECT_TRUE(fork->isEnabled()) << fork->toolTip().toStdString();
    EXPECT_TRUE(fork->text().contains(QString::number(asked))) << fork->text().toStdString();
    fork->trigger();
    EXPECT_EQ(w.form()->forkParent(), parent) << w.statusText().toStdString();
    EXPECT_EQ(w.form()->forkStep(), kept);
    auto* description = w.form()->findChild<QLabel*>(QStringLiteral("presetDescription"));
    ASSERT_NE(description, nullptr);
    EXPECT_TRUE(description->text().contains(QStringLiteral("after step %1").arg(kept)))
        << description->text().toStdString();

    // A changed setting (cf-prox's λ × 10) and a method left out; Start runs the child.
    auto* lambda = w.form()->findChild<QLineEdit*>(QStringLiteral("lambda"));
    ASSERT_NE(lambda, nullptr);
    lambda->setText(QStringLiteral("1000"));
    w.setMethodChecked(QStringLiteral("sgd"), false);
    ASSERT_TRUE(runToEnd(w)) << w.statusText().toStdString();
    const QString child = QDir::cleanPath(w.lastRunDir());
    ASSERT_NE(child, parent);
    EXPECT_TRUE(w.statusText().contains("Finished")) << w.statusText().toStdString();

    // The child folder: its parent and fork step, the changed λ, its own rows after the fork.
    const nlohmann::json spec = specOf(child);
    EXPECT_EQ(QString::fromStdString(spec.value("parent", std::string())), parent);
    EXPECT_EQ(spec.value("fork_step", -1), kept);
    bool sawProx = false;
    for (const auto& m : spec["methods"]) {
        EXPECT_NE(m.value("name", std::string()), "sgd");
        if (m.value("name", std::string()) == "cf-prox") {
            sawProx = true;
            EXPECT_EQ(m.value("lambda", 0.0), 1000.0);
        }
    }
    EXPECT_TRUE(sawProx);
    const auto childData = liftlab::read_run_folder(child.toStdString());
    const auto& childLoss = childData.metrics.at("test_loss").at("cf-prox");
    ASSERT_FALSE(childLoss.empty());
    EXPECT_GT(childLoss.begin()->first, kept);  // the child logs steps after the fork only

    // The history: the child under its parent, labelled with the fork step.
    liftlab::RunHistoryPanel* history = w.history();
    history->refresh();
    EXPECT_EQ(history->parentRun(child), parent);
    const QModelIndex childRow = history->model()->indexOfPath(child);
    ASSERT_TRUE(childRow.isValid());
    EXPECT_EQ(childRow.parent(), history->model()->indexOfPath(parent));
    EXPECT_TRUE(childRow.data().toString().contains(QStringLiteral("fork @%1").arg(kept)))
        << childRow.data().toString().toStdString();
    EXPECT_EQ(history->parentRun(plain), QString());

    // The child's curves: the parent's up to the fork step, and the fork marked.
    ASSERT_TRUE(w.openRun(child));
    const QString parentProx = QStringLiteral("cf-prox (parent)");
    ASSERT_GT(curves->pointCount(parentProx), 0);
    EXPECT_LE(curves->rawGraph(parentProx)->data()->at(curves->pointCount(parentProx) - 1)->key,
              kept);
    EXPECT_EQ(curves->seriesPenOf(parentProx).color().rgb(),
              curves->seriesPenOf(QStringLiteral("cf-prox")).color().rgb());
    const QStringList labels = curves->eventMarkerLabels();
    const int at = int(labels.indexOf(QStringLiteral("fork @%1").arg(kept)));
    ASSERT_GE(at, 0) << labels.join(", ").toStdString();
    EXPECT_EQ(curves->eventMarkerStep(at), kept);

    // Compared with its parent: aligned by step (one axis), the fork marked.
    ASSERT_TRUE(w.compareRuns({parent, child}));
    EXPECT_TRUE(curves->eventMarkerLabels().contains(QStringLiteral("fork @%1").arg(kept)));
    menu.reset(curves->createContextMenu(&w, asked));
    EXPECT_EQ(forkAction(menu.get()), nullptr);  // forks are made from one shown run
}
