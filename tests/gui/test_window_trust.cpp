// A window a newcomer can trust (issue "A window a newcomer can trust"), driven through its real
// widgets on the offscreen platform: the form starts what the preset says (seeds, steps, batch);
// an opened run restores the form and Re-run repeats it to an identical spec.json; a comparison
// keeps each method's colour, tells runs apart by line style and reopens from its file; a model
// that does not fit is refused when picked, with the whole message; every tab shows a plot or
// says why not; the controls stay in view, Paused reads Paused, the wheel leaves unfocused
// fields alone and a preset switch asks before dropping edits; every field names its spec key.
//
// With LIFTLAB_DOCS_SCREENSHOTS=DIR set, the tests also save the screenshots the user guide shows
// (DIR/compare.png, DIR/model-refused.png, DIR/empty-*.png).
#include <gtest/gtest.h>
#include <qcustomplot.h>
#include <sys/wait.h>
#include <unistd.h>
#include <QAbstractSpinBox>
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalSpy>
#include <QSpinBox>
#include <QSysInfo>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QTreeView>
#include <QTreeWidget>
#include <QWheelEvent>
#include <cstdio>
#include <functional>
#include <memory>
#include <set>

#include "ablation_panel.h"
#include "claims_panel.h"
#include "comparison_file.h"
#include "escape_panel.h"
#include "experiment_form.h"
#include "landscape_panel.h"
#include "loss_curve_panel.h"
#include "main_window.h"
#include "method_colors.h"
#include "methods/method_registry.h"
#include "model_file_box.h"
#include "run_controls.h"
#include "run_history_panel.h"
#include "run_view.h"
#include "spec/presets.h"
#include "spec_editor.h"
#include "training_session.h"
#include "user_guide.h"

using liftlab::MainWindow;
using liftlab::RunView;

namespace {

constexpr int kTrustRunTimeoutMs = 180000;  // a short run on a loaded 2-core machine
constexpr int kProbeTimeoutMs = 60000;

QString exampleModel(const char* name) {
    return QStringLiteral(LIFTLAB_SOURCE_DIR "/resources/models/") + QString::fromLatin1(name);
}

QJsonObject readSpecJson(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

bool waitTrustIdle(MainWindow& w) {
    return QTest::qWaitFor([&] { return !w.session()->isRunning(); }, kTrustRunTimeoutMs);
}

// Clicks the toolbar's button for `name` (start, queue, pause, stop, rerun).
void clickTool(MainWindow& w, const char* name) {
    QToolButton* button = nullptr;
    for (auto* b : w.findChildren<QToolButton*>(QLatin1String(name)))
        if (qobject_cast<QToolBar*>(b->parentWidget())) button = b;
    ASSERT_NE(button, nullptr) << name;
    ASSERT_TRUE(button->isEnabled())
        << name << " is off: " << w.runControls()->startBlockedReason().toStdString();
    QTest::mouseClick(button, Qt::LeftButton);
}

// Replaces the text of a field as a user does: select all, type.
void typeInto(QWidget* field, const QString& text) {
    field->setFocus();
    QTest::keyClick(field, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(field, text);
    QTest::keyClick(field, Qt::Key_Tab);
}

// The folder a run started from the window writes (the only one under `out`), once its
// spec.json exists.
QString waitForRunFolder(const QString& out) {
    QString found;
    (void)QTest::qWaitFor(
        [&] {
            for (const QFileInfo& d : QDir(out).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot))
                if (QFileInfo::exists(d.filePath() + "/spec.json")) found = d.filePath();
            return !found.isEmpty();
        },
        kTrustRunTimeoutMs);
    return found;
}

bool pickModel(liftlab::ModelFileBox* box, const QString& file) {
    QSignalSpy done(box, &liftlab::ModelFileBox::inspected);
    box->setPath(file);
    return done.count() > 0 || done.wait(kProbeTimeoutMs);
}

// Saves a picture for the user guide when LIFTLAB_DOCS_SCREENSHOTS names a folder.
void screenshot(QWidget* w, const char* name) {
    const QString dir = qEnvironmentVariable("LIFTLAB_DOCS_SCREENSHOTS");
    if (dir.isEmpty()) return;
    QDir().mkpath(dir);
    QApplication::processEvents();
    QTest::qWait(150);  // the queued replots
    const QString file = QDir(dir).filePath(QLatin1String(name) + QStringLiteral(".png"));
    EXPECT_TRUE(w->grab().save(file)) << file.toStdString();
    std::printf("[ info     ] wrote %s\n", qPrintable(file));
}

// A synthetic run folder: two log points per method, a summary with the given status.
QString writeRun(const QString& root, const QString& folder, const QString& preset,
                 const QString& task, const QStringList& methods, int steps, int stepsDone,
                 const QString& status) {
    const QString dir = QDir(root).filePath(folder);
    QDir().mkpath(dir);
    QFile metrics(dir + "/metrics.csv");
    EXPECT_TRUE(metrics.open(QIODevice::WriteOnly));
    metrics.write("step,method,seed,metric,value\n");
    QJsonArray specMethods, runs;
    int i = 0;
    for (const QString& m : methods) {
        for (int step : {0, stepsDone / 2, stepsDone})
            metrics.write(QStringLiteral("%1,%2,0,test_loss,%3\n%1,%2,0,time_s,%4\n")
                              .arg(step)
                              .arg(m)
                              .arg(1.0 / (1 + step * (i + 1) * 0.01))
                              .arg(step * 0.001)
                              .toUtf8());
        specMethods.append(QJsonObject{{"name", m}, {"label", m}, {"lr", 0.01}});
        runs.append(QJsonObject{{"method", m},
                                {"seed", 0},
                                {"status", status},
                                {"steps_done", stepsDone},
                                {"final", QJsonObject{{"test_loss", 0.5}}}});
        ++i;
    }
    metrics.close();
    QFile spec(dir + "/spec.json");
    EXPECT_TRUE(spec.open(QIODevice::WriteOnly));
    spec.write(QJsonDocument(QJsonObject{{"name", preset},
                                         {"task", QJsonObject{{"kind", task}}},
                                         {"methods", specMethods},
                                         {"seeds", QJsonArray{0}},
                                         {"steps", steps},
                                         {"batch_size", 32}})
                   .toJson());
    spec.close();
    QFile summary(dir + "/summary.json");
    EXPECT_TRUE(summary.open(QIODevice::WriteOnly));
    summary.write(QJsonDocument(QJsonObject{{"status", status}, {"runs", runs}}).toJson());
    return QDir::cleanPath(dir);
}

int historyRow(liftlab::RunHistoryPanel* history, const QString& dir) {
    for (int r = 0; r < history->runCount(); ++r)
        if (history->runAt(r) == QDir::cleanPath(dir)) return r;
    return -1;
}

}  // namespace

// Item 1: the form shows the preset's seeds, steps and batch, and Start writes exactly those
// into spec.json (no hidden single-seed override); every preset's built spec keeps them.
TEST(WindowTrust, StartRunsTheSeedsStepsAndBatchThePresetSays) {
    QElapsedTimer clock;
    clock.start();
    MainWindow window;
    liftlab::ExperimentForm* form = window.form();
    for (const auto& preset : liftlab::builtin_presets()) {
        ASSERT_TRUE(window.selectPreset(QString::fromStdString(preset.name)));
        // A preset that ships its model (cf-linear-probe) has it checked first.
        ASSERT_TRUE(QTest::qWaitFor([&] { return !form->modelBox()->reading(); }, kProbeTimeoutMs))
            << preset.name;
        nlohmann::json spec;
        QString title, error;
        ASSERT_TRUE(form->buildSpec(&spec, &title, &error))
            << preset.name << ": " << error.toStdString();
        for (const char* key : {"seeds", "steps", "batch_size", "log_every"})
            EXPECT_EQ(spec[key], preset.spec[key]) << preset.name << " " << key;
        EXPECT_TRUE(preset.spec["seeds"].size() == 1
                        ? title.contains("seed 0")
                        : title.contains(QString::number(preset.spec["seeds"].size()) + " seeds"))
            << title.toStdString();
    }

    QTemporaryDir out;
    window.setOutputDir(out.path());
    window.show();
    auto* presets = window.findChild<QComboBox*>(QStringLiteral("preset"));
    ASSERT_NE(presets, nullptr);
    window.selectPreset("cf-regression");
    presets->setCurrentIndex(presets->findText("cf-batch-sweep"));  // as a user picks it
    EXPECT_EQ(window.findChild<QLineEdit*>(QStringLiteral("seeds"))->text(), "0, 1, 2");
    EXPECT_EQ(window.findChild<QLabel*>(QStringLiteral("seedsCount"))->text(), "3 seeds");
    EXPECT_EQ(window.findChild<QSpinBox*>(QStringLiteral("steps"))->value(), 1500);
    clickTool(window, "start");
    ASSERT_TRUE(window.session()->isRunning()) << window.statusText().toStdString();
    const QString run = waitForRunFolder(out.path());
    clickTool(window, "stop");
    ASSERT_TRUE(waitTrustIdle(window));
    const QJsonObject spec = readSpecJson(run + "/spec.json");
    EXPECT_EQ(spec["seeds"].toArray(), (QJsonArray{0, 1, 2}));
    EXPECT_EQ(spec["steps"].toInt(), 1500);
    EXPECT_EQ(spec["batch_size"].toInt(), 32);
    EXPECT_EQ(spec["log_every"].toInt(), 50);
    RecordProperty("ms", static_cast<int>(clock.elapsed()));
}

// Item 2: a run with two seeds, one method unticked and the user's backbone is opened from the
// history (double-click): the form, the title and the history row show how it ran; Re-run repeats
// it to the same spec.json; spec.json records the backbone's real feature width.
TEST(WindowTrust, OpenedRunRestoresTheFormAndReRunRepeatsIt) {
    QTemporaryDir out;
    auto window = std::make_unique<MainWindow>();
    window->setOutputDir(out.path());
    window->show();
    ASSERT_TRUE(window->selectPreset("cf-regression"));
    auto* form = window->form();
    typeInto(window->findChild<QLineEdit*>(QStringLiteral("seeds")), "0, 1");
    typeInto(window->findChild<QSpinBox*>(QStringLiteral("steps")), "12");
    auto* sgd = window->findChild<QCheckBox*>(QStringLiteral("method:sgd"));
    ASSERT_NE(sgd, nullptr);
    QTest::mouseClick(sgd, Qt::LeftButton);
    EXPECT_FALSE(sgd->isChecked());
    ASSERT_TRUE(pickModel(form->modelBox(), exampleModel("mlp_backbone.pt")));
    ASSERT_TRUE(form->modelBox()->loaded()) << form->modelBox()->error().toStdString();
    clickTool(*window, "start");
    ASSERT_TRUE(waitTrustIdle(*window));
    ASSERT_TRUE(window->statusText().contains("Finished")) << window->statusText().toStdString();
    const QString first = window->lastRunDir();
    const QJsonObject firstSpec = readSpecJson(first + "/spec.json");
    EXPECT_EQ(firstSpec["backbone"].toObject()["feature_dim"].toInt(), 64);  // not the preset's
    EXPECT_EQ(firstSpec["methods"].toArray().size(), 3);
    EXPECT_TRUE(firstSpec["log_initial"].toBool());
    // Its curves start at step 0 (the untrained model), however short the run.
    EXPECT_EQ(window->curvePanel()->rawGraph("cf-prox")->data()->begin()->key, 0.0);

    // Another preset in the form, then the run opened by a double-click in the history.
    ASSERT_TRUE(window->selectPreset("icnn-ebm-1d"));
    liftlab::RunHistoryPanel* history = window->history();
    history->setRoot(out.path());
    const int row = historyRow(history, first);
    ASSERT_GE(row, 0);
    const QRect rect = history->rowRect(row);
    // A double-click: its first press, then the double-click event.
    QTest::mouseClick(history->tree()->viewport(), Qt::LeftButton, {}, rect.center());
    QTest::mouseDClick(history->tree()->viewport(), Qt::LeftButton, {}, rect.center());
    ASSERT_EQ(form->loadedRun(), QDir::cleanPath(first)) << window->statusText().toStdString();
    EXPECT_EQ(form->presetName(), "cf-regression");
    EXPECT_EQ(form->seedsText(), "0, 1");
    EXPECT_EQ(form->steps(), 12);
    EXPECT_EQ(form->methodLabels(), (QStringList{"adam", "cf-ridge", "cf-prox"}));
    EXPECT_EQ(form->modelBox()->path(), exampleModel("mlp_backbone.pt"));
    const QString title = window->windowTitle();
    for (const char* part : {"cf-regression", "teacher-regression", "mlp_backbone.pt",
                             "adam, cf-ridge, cf-prox", "seeds 0, 1", "12 steps, ok"})
        EXPECT_TRUE(title.contains(QLatin1String(part)))
            << part << " not in " << title.toStdString();
    EXPECT_TRUE(title.contains(QRegularExpression("\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d")));
    EXPECT_EQ(history->cellText(row, liftlab::RunHistoryPanel::ColModel), "mlp_backbone.pt");
    EXPECT_EQ(history->cellText(row, liftlab::RunHistoryPanel::ColSeeds), "0, 1");
    EXPECT_EQ(history->cellText(row, liftlab::RunHistoryPanel::ColDate).size(),
              19);  // to the second

    // Re-run: the same spec.json but for what a run records beside it.
    ASSERT_TRUE(QTest::qWaitFor([&] { return !form->modelBox()->reading(); }, kProbeTimeoutMs));
    QTest::qWait(1100);  // a new folder name (timestamped to the second)
    clickTool(*window, "rerun");
    ASSERT_TRUE(window->session()->isRunning()) << window->statusText().toStdString();
    ASSERT_TRUE(waitTrustIdle(*window));
    const QString second = window->lastRunDir();
    ASSERT_NE(second, first);
    QJsonObject a = firstSpec, b = readSpecJson(second + "/spec.json");
    for (QJsonObject* o : {&a, &b}) o->remove("versions");
    EXPECT_EQ(a, b) << QJsonDocument(b).toJson().toStdString();
    window.reset();
}

// Item 3: two runs compared from the history keep 8 distinct method colours (CIEDE2000 ΔE ≥ 15)
// and 2 line styles, name each run with its real steps and status, every tab compares or says
// it cannot; the comparison is saved, reopened and exported as one figure.
TEST(WindowTrust, CompareKeepsColoursAndStylesAndReopensFromItsFile) {
    QTemporaryDir root;
    const QString a =
        writeRun(root.path(), "cf-regression-20261204-210854", "cf-regression",
                 "teacher-regression", {"adam", "sgd", "cf-ridge", "cf-prox"}, 1500, 1500, "ok");
    const QString b =
        writeRun(root.path(), "cf-regression-20261204-213010", "cf-regression",
                 "teacher-regression", {"ce", "cf-full", "cf-rls", "pgd"}, 1500, 525, "cancelled");
    auto window = std::make_unique<MainWindow>();
    window->resize(1400, 900);
    window->show();
    liftlab::RunHistoryPanel* history = window->history();
    history->setRoot(root.path());
    ASSERT_EQ(history->runCount(), 2);
    history->tree()->selectAll();
    QTest::mouseClick(history->compareButton(), Qt::LeftButton);
    ASSERT_EQ(window->comparedRuns(), (QStringList{a, b})) << window->statusText().toStdString();

    liftlab::LossCurvePanel* curves = window->curvePanel();
    ASSERT_EQ(curves->seriesCount(), 8);
    std::vector<QColor> colours;
    std::set<int> styles;
    for (const QString m : {"adam", "sgd", "cf-ridge", "cf-prox"}) {
        const QPen pen = curves->seriesPenOf(m + " (A)");
        EXPECT_EQ(pen.style(), Qt::SolidLine) << m.toStdString();
        EXPECT_EQ(pen.color(), liftlab::methodColor(m));
        colours.push_back(pen.color());
        styles.insert(pen.style());
    }
    for (const QString m : {"ce", "cf-full", "cf-rls", "pgd"}) {
        const QPen pen = curves->seriesPenOf(m + " (B)");
        EXPECT_EQ(pen.style(), Qt::DashLine) << m.toStdString();
        colours.push_back(pen.color());
        styles.insert(pen.style());
    }
    EXPECT_EQ(styles.size(), 2u);
    for (size_t i = 0; i < colours.size(); ++i)
        for (size_t j = i + 1; j < colours.size(); ++j)
            EXPECT_GE(liftlab::colourDifference(colours[i], colours[j]), 15.0) << i << " " << j;
    const QString title = window->windowTitle();
    EXPECT_TRUE(title.contains("A: cf-regression (1500 steps, ok)")) << title.toStdString();
    EXPECT_TRUE(title.contains("B: cf-regression (525 of 1500 steps, cancelled)"))
        << title.toStdString();
    EXPECT_TRUE(curves->caption().contains("B (dashed lines)")) << curves->caption().toStdString();

    RunView* view = window->runView();
    for (int i = 0; i < view->tabCount(); ++i)
        EXPECT_TRUE(view->hasContent(i) || !view->emptyReason(i).isEmpty())
            << view->tabKey(i).toStdString();
    EXPECT_TRUE(view->emptyReason(RunView::LandscapeTab).contains("one run at a time"));
    for (int i = RunView::TabCount; i < view->tabCount(); ++i)  // the cost bars compare
        if (view->tabKey(i) != "claims")  // a claims folder's table, not a run's figure
            EXPECT_TRUE(view->hasContent(i)) << view->tabKey(i).toStdString();
    view->setCurrentIndex(RunView::CurvesTab);
    screenshot(window.get(), "compare-eight-methods");

    // Saved, exported as one figure, reopened in a new window.
    const QString file = root.filePath("two-runs.liftlab-compare");
    ASSERT_TRUE(window->saveComparisonFile(file)) << window->statusText().toStdString();
    EXPECT_TRUE(window->exportCurrentPanel(root.filePath("comparison.png")));
    EXPECT_GT(QFileInfo(root.filePath("comparison.png")).size(), 5000);
    liftlab::Comparison saved;
    QString error;
    ASSERT_TRUE(liftlab::readComparison(file, &saved, &error)) << error.toStdString();
    EXPECT_EQ(saved.runs, (QStringList{a, b}));
    window.reset();
    MainWindow again;
    ASSERT_TRUE(again.openComparisonFile(file)) << again.statusText().toStdString();
    EXPECT_EQ(again.comparedRuns(), (QStringList{a, b}));
    EXPECT_EQ(again.curvePanel()->seriesCount(), 8);
    // A broken file is a message naming it and the key.
    QFile broken(root.filePath("broken.liftlab-compare"));
    ASSERT_TRUE(broken.open(QIODevice::WriteOnly));
    broken.write(R"({"liftlab_compare": 1, "runs": ["only-one"]})");
    broken.close();
    EXPECT_FALSE(again.openComparisonFile(broken.fileName()));
    EXPECT_TRUE(again.statusText().contains("broken.liftlab-compare"));
    EXPECT_TRUE(again.statusText().contains("'runs'")) << again.statusText().toStdString();
}

// Item 4: a backbone that does not fit the task is refused when it is picked, with the task's
// input shape and the whole LibTorch message in a copyable box; Start is off and says why.
TEST(WindowTrust, AModelThatDoesNotFitIsRefusedAtLoadWithTheFullMessage) {
    MainWindow window;
    window.resize(1400, 900);
    window.show();
    ASSERT_TRUE(window.selectPreset("cf-fashion-mnist"));
    liftlab::ModelFileBox* box = window.form()->modelBox();
    ASSERT_TRUE(pickModel(box, exampleModel("mlp_backbone.pt")));  // 16 inputs, not images
    EXPECT_FALSE(box->loaded());
    EXPECT_EQ(box->inputShape(), "n × 1 × 28 × 28");
    const QString error = box->error();
    EXPECT_TRUE(error.contains("mlp_backbone.pt")) << error.toStdString();
    EXPECT_TRUE(error.contains("4 × 1 × 28 × 28")) << error.toStdString();
    auto* text = box->findChild<QPlainTextEdit*>(QStringLiteral("modelError"));
    ASSERT_NE(text, nullptr);
    EXPECT_TRUE(text->isVisible());
    EXPECT_EQ(text->toPlainText(), error);  // whole, not cut off
    QTest::mouseClick(box->findChild<QPushButton*>(QStringLiteral("modelCopyError")),
                      Qt::LeftButton);
    EXPECT_EQ(QApplication::clipboard()->text(), error);
    EXPECT_FALSE(window.runControls()->startAction()->isEnabled());
    EXPECT_TRUE(window.runControls()->startBlockedReason().contains("refused"));
    EXPECT_TRUE(
        window.findChild<QLabel*>(QStringLiteral("startReason"))->text().contains("refused"));
    if (auto* scroll = window.findChild<QScrollArea*>()) scroll->ensureWidgetVisible(box);
    screenshot(&window, "model-refused");

    // The example CNN fits: 32 features per 1 × 28 × 28 image; Start is on again.
    ASSERT_TRUE(pickModel(box, exampleModel("cnn_backbone.pt")));
    ASSERT_TRUE(box->loaded()) << box->error().toStdString();
    EXPECT_EQ(box->featureDim(), 64);  // the preset's built-in CNN has 128
    EXPECT_TRUE(window.runControls()->startAction()->isEnabled());
    // Cancelling a check leaves Start off with the reason.
    box->setPath(exampleModel("cnn_backbone.pt"));
    EXPECT_TRUE(box->reading());
    EXPECT_FALSE(window.runControls()->startAction()->isEnabled());
    box->cancelCheck();
    EXPECT_FALSE(box->reading());
    EXPECT_FALSE(window.runControls()->startAction()->isEnabled());
    ASSERT_TRUE(pickModel(box, QString()));
    EXPECT_TRUE(window.runControls()->startAction()->isEnabled());
}

// Item 6: after a closed-form run and after an ICNN run every tab shows a plot or says why it
// is empty and what to do; the ICNN figures carry their reading; the Metric box lists the shown
// run's metrics only; the escape traces show one method at a time.
TEST(WindowTrust, EveryTabShowsAPlotOrAReason) {
    QTemporaryDir out;
    MainWindow window;
    window.resize(1400, 900);
    window.setOutputDir(out.path());
    window.show();
    RunView* view = window.runView();
    for (int i = 0; i < view->tabCount(); ++i)  // nothing shown yet
        EXPECT_FALSE(view->emptyReason(i).isEmpty()) << view->tabKey(i).toStdString();

    ASSERT_TRUE(window.selectPreset("cf-regression"));
    window.setSteps(10);
    clickTool(window, "start");
    ASSERT_TRUE(waitTrustIdle(window));
    ASSERT_TRUE(window.statusText().contains("Finished")) << window.statusText().toStdString();
    const QString cfRun = window.lastRunDir();
    for (int i = 0; i < view->tabCount(); ++i)
        EXPECT_TRUE(view->hasContent(i) || !view->emptyReason(i).isEmpty())
            << "cf run, tab " << view->tabKey(i).toStdString();
    EXPECT_TRUE(view->emptyReason(RunView::EscapeTab).contains("ICNN runs"));
    EXPECT_EQ(view->escape()->emptyReason(), view->emptyReason(RunView::EscapeTab));
    EXPECT_TRUE(view->emptyReason(RunView::LandscapeTab).contains("closed-form run"));
    EXPECT_TRUE(view->emptyReason(RunView::AblationTab).contains("σ²_Jac"));
    EXPECT_TRUE(window.runControls()->metrics().contains("solve_fraction"));
    EXPECT_FALSE(window.runControls()->metrics().contains("tv"));
    view->setCurrentIndex(RunView::EscapeTab);
    screenshot(view, "empty-escape-on-cf-run");

    ASSERT_TRUE(window.selectPreset("icnn-escape"));
    window.setSteps(20);
    // Three log points (each evaluates the test NLL by quadrature): the test stays quick.
    QTest::mouseClick(window.findChild<QCheckBox*>(QStringLiteral("logEveryAuto")), Qt::LeftButton);
    typeInto(window.findChild<QSpinBox*>(QStringLiteral("logEvery")), "10");
    clickTool(window, "start");
    ASSERT_TRUE(waitTrustIdle(window));
    ASSERT_TRUE(window.statusText().contains("Finished")) << window.statusText().toStdString();
    for (int i = 0; i < view->tabCount(); ++i)
        EXPECT_TRUE(view->hasContent(i) || !view->emptyReason(i).isEmpty())
            << "icnn run, tab " << view->tabKey(i).toStdString();
    EXPECT_TRUE(view->hasContent(RunView::EscapeTab));
    EXPECT_TRUE(view->emptyReason(RunView::LandscapeTab).contains("no checkpoints"));
    EXPECT_EQ(view->landscape()->emptyReason(), view->emptyReason(RunView::LandscapeTab));
    auto* compute = view->findChild<QPushButton*>(QStringLiteral("landscapeCompute"));
    EXPECT_FALSE(compute->isEnabled());
    EXPECT_TRUE(compute->toolTip().contains("checkpoint")) << compute->toolTip().toStdString();
    EXPECT_TRUE(view->emptyReason(RunView::SpectrumTab).contains("ICNN run"));
    EXPECT_TRUE(view->emptyReason(RunView::AblationTab).contains("jacobian_batches"));
    // One method's eight traces, not four methods' 32; the combo switches.
    EXPECT_EQ(view->escape()->tracesShown(), "lifter");
    EXPECT_LE(view->escape()->visibleTraceCount(), 8);
    EXPECT_GT(view->escape()->visibleTraceCount(), 0);
    auto* traces = view->findChild<QComboBox*>(QStringLiteral("escapeTraces"));
    traces->setCurrentIndex(traces->findText("softplus"));
    EXPECT_EQ(view->escape()->tracesShown(), "softplus");
    EXPECT_TRUE(view->escape()->caption().contains("cycling"));
    EXPECT_TRUE(view->escape()->statsText("lifter").contains("/coord·step"));
    EXPECT_TRUE(view->ablation()->caption().contains("has a sign"));
    // The metric box: this run's metrics, not the closed-form run's.
    EXPECT_FALSE(window.runControls()->metrics().contains("solve_fraction"));
    EXPECT_TRUE(window.runControls()->metrics().contains("shoulder_occupancy"));
    traces->setCurrentIndex(traces->findText("lifter"));
    view->setCurrentIndex(RunView::EscapeTab);
    screenshot(view, "escape-icnn-run");
    view->setCurrentIndex(RunView::LandscapeTab);
    screenshot(view, "empty-landscape-no-checkpoints");
    view->setCurrentIndex(RunView::AblationTab);
    screenshot(view, "empty-ablation-no-jacobian");
    ASSERT_TRUE(window.openRun(cfRun));
    EXPECT_TRUE(view->emptyReason(RunView::EscapeTab).contains("ICNN runs"));
}

// Item 5: the run controls are in view at 1400 × 900; Paused reads Paused; the wheel leaves an
// unfocused spin box alone; a preset switch with edits asks first; the log interval follows
// Steps.
TEST(WindowTrust, ControlsInViewPausedWheelAndPresetSwitch) {
    QTemporaryDir out;
    MainWindow window;
    window.resize(1400, 900);
    window.setOutputDir(out.path());
    window.show();
    window.activateWindow();
    ASSERT_TRUE(QTest::qWaitForWindowActive(&window));
    for (const char* name : {"start", "queue", "pause", "stop", "rerun"}) {
        QToolButton* button = nullptr;
        for (auto* b : window.findChildren<QToolButton*>(QLatin1String(name)))
            if (qobject_cast<QToolBar*>(b->parentWidget())) button = b;
        ASSERT_NE(button, nullptr) << name;
        EXPECT_TRUE(button->isVisible()) << name;
        const QRect r(button->mapTo(&window, QPoint(0, 0)), button->size());
        EXPECT_TRUE(window.rect().contains(r)) << name;
    }

    // The wheel over an unfocused Steps box scrolls the form, not the value.
    ASSERT_TRUE(window.selectPreset("cf-regression"));
    auto* steps = window.findChild<QSpinBox*>(QStringLiteral("steps"));
    window.findChild<QComboBox*>(QStringLiteral("preset"))->setFocus();
    const int before = steps->value();
    const QPoint centre = steps->rect().center();
    QWheelEvent wheel(centre, steps->mapToGlobal(centre), QPoint(), QPoint(0, -120), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(steps, &wheel);
    EXPECT_EQ(steps->value(), before);
    steps->setFocus();
    QWheelEvent focused(centre, steps->mapToGlobal(centre), QPoint(), QPoint(0, -120), Qt::NoButton,
                        Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(steps, &focused);
    EXPECT_NE(steps->value(), before);  // focused: the wheel is the user's intent

    // A preset switch with edits asks: "Keep my changes" keeps them, "Switch" loads the preset.
    typeInto(steps, "777");
    auto* presets = window.findChild<QComboBox*>(QStringLiteral("preset"));
    const auto answer = [&](const char* button) {
        QTimer::singleShot(0, [button] {
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            ASSERT_NE(box, nullptr);
            EXPECT_TRUE(box->text().contains("Steps")) << box->text().toStdString();
            QTest::mouseClick(box->findChild<QPushButton*>(QLatin1String(button)), Qt::LeftButton);
        });
    };
    answer("keepEdits");
    presets->setCurrentIndex(presets->findText("cf-lambda-sweep"));
    EXPECT_EQ(presets->currentText(), "cf-regression");
    EXPECT_EQ(steps->value(), 777);
    answer("switchPreset");
    presets->setCurrentIndex(presets->findText("cf-fashion-mnist"));
    EXPECT_EQ(presets->currentText(), "cf-fashion-mnist");
    EXPECT_EQ(steps->value(), 3000);

    // cf-fashion-mnist logs every 250 steps: a 400-step run gets 10 points and a step-0 point.
    auto* logEvery = window.findChild<QSpinBox*>(QStringLiteral("logEvery"));
    EXPECT_EQ(logEvery->value(), 250);
    typeInto(steps, "400");
    EXPECT_EQ(logEvery->value(), 40);
    EXPECT_TRUE(window.findChild<QCheckBox*>(QStringLiteral("logInitial"))->isChecked());

    // Paused reads Paused in the status bar, and stays so while reports arrive.
    ASSERT_TRUE(window.selectPreset("cf-regression"));
    window.setSteps(100000);
    int lastStep = 0;
    QObject::connect(window.session(), &liftlab::TrainingSession::progress, &window,
                     [&](double, int step, int) { lastStep = step; });
    clickTool(window, "start");
    ASSERT_TRUE(QTest::qWaitFor([&] { return lastStep > 0; }, kTrustRunTimeoutMs));
    clickTool(window, "pause");
    EXPECT_TRUE(window.statusText().startsWith("Paused")) << window.statusText().toStdString();
    QTest::qWait(400);
    EXPECT_TRUE(window.statusText().startsWith("Paused")) << window.statusText().toStdString();
    EXPECT_EQ(window.runControls()->pauseAction()->text(), "Resume");
    clickTool(window, "pause");
    EXPECT_FALSE(window.statusText().startsWith("Paused"));
    clickTool(window, "stop");
    ASSERT_TRUE(waitTrustIdle(window));
}

// Item 7: every field of the form names its spec key and default in its tooltip (the rows of
// All settings too); F1 opens the user guide, or says where it looked.
TEST(WindowTrust, EveryFieldNamesItsSpecKeyAndF1OpensTheGuide) {
    MainWindow window;
    window.show();
    window.activateWindow();
    ASSERT_TRUE(QTest::qWaitForWindowActive(&window));
    for (const char* preset : {"cf-regression", "icnn-ebm-1d"}) {
        ASSERT_TRUE(window.selectPreset(preset));
        liftlab::ExperimentForm* form = window.form();
        QList<QWidget*> fields;
        for (auto* w : form->findChildren<QAbstractSpinBox*>()) fields << w;
        for (auto* w : form->findChildren<QComboBox*>()) fields << w;
        for (auto* w : form->findChildren<QCheckBox*>()) fields << w;
        for (auto* w : form->findChildren<QLineEdit*>())
            if (!qobject_cast<QAbstractSpinBox*>(w->parentWidget()) &&
                !qobject_cast<QComboBox*>(w->parentWidget()))
                fields << w;
        int checked = 0;
        for (QWidget* w : fields) {
            if (!w->isVisibleTo(form) || w->objectName().isEmpty()) continue;
            const QString tip = w->toolTip();
            EXPECT_TRUE(tip.contains("spec key", Qt::CaseInsensitive))
                << preset << " " << w->objectName().toStdString() << ": " << tip.toStdString();
            EXPECT_TRUE(tip.contains("default", Qt::CaseInsensitive))
                << preset << " " << w->objectName().toStdString() << ": " << tip.toStdString();
            ++checked;
        }
        EXPECT_GE(checked, 10) << preset;
        auto* tree = window.specEditor()->findChild<QTreeWidget*>(QStringLiteral("specTree"));
        ASSERT_GT(tree->topLevelItemCount(), 5);
        for (int i = 0; i < tree->topLevelItemCount(); ++i) {
            const QTreeWidgetItem* row = tree->topLevelItem(i);
            EXPECT_TRUE(row->toolTip(1).startsWith("spec key " + row->text(0) + " — default: "))
                << row->toolTip(1).toStdString();
        }
        // The form's own fields are not repeated there (one place per setting).
        for (const char* owned : {"seeds", "steps", "batch_size", "log_every"})
            EXPECT_FALSE(window.specEditor()->paths().contains(owned)) << owned;
    }

    QTemporaryDir docs;
    const QString guide = docs.filePath("user-guide.md");
    QFile f(guide);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write("# LiftLab user guide\n\nThe first hour.\n");
    f.close();
    qputenv("LIFTLAB_USER_GUIDE", guide.toUtf8());
    EXPECT_EQ(liftlab::userGuidePath(), QFileInfo(guide).absoluteFilePath());
    window.activateWindow();
    QTest::keyClick(&window, Qt::Key_F1);
    auto* dialog = window.findChild<QDialog*>(QStringLiteral("userGuide"));
    ASSERT_NE(dialog, nullptr);
    EXPECT_TRUE(dialog->isVisible());
    auto* text = dialog->findChild<QTextBrowser*>(QStringLiteral("userGuideText"));
    EXPECT_TRUE(text->toPlainText().contains("LiftLab user guide"))
        << text->toPlainText().toStdString();
    dialog->close();
    // No guide anywhere: the window says where it looked.
    qputenv("LIFTLAB_USER_GUIDE", docs.filePath("missing.md").toUtf8());
    if (liftlab::userGuidePath().isEmpty()) {
        liftlab::showUserGuide(&window);
        EXPECT_TRUE(text->toPlainText().contains("not here")) << text->toPlainText().toStdString();
        EXPECT_TRUE(text->toPlainText().contains("missing.md"));
    }
    qunsetenv("LIFTLAB_USER_GUIDE");
}

// The registry's methods have distinct colours: any two differ by a CIEDE2000 ΔE of at least 15
// (about 15 just-noticeable differences), so a comparison of any methods reads.
TEST(WindowTrust, EveryRegistryMethodHasADistinctColour) {
    std::vector<std::pair<std::string, QColor>> colours;
    for (const auto& m : liftlab::method_registry())
        colours.push_back({m.name, liftlab::methodColor(QString::fromStdString(m.name))});
    ASSERT_GE(colours.size(), 18u);
    double smallest = 1e9;
    for (size_t i = 0; i < colours.size(); ++i)
        for (size_t j = i + 1; j < colours.size(); ++j) {
            const double d = liftlab::colourDifference(colours[i].second, colours[j].second);
            smallest = std::min(smallest, d);
            EXPECT_GE(d, 15.0) << colours[i].first << " vs " << colours[j].first;
        }
    std::printf("[ info     ] smallest CIEDE2000 difference between two methods: %.1f\n", smallest);
}

namespace {

// A claims folder `name` under `out` whose claims.json is `json`, opened in a new window whose form
// shows cf-regression; null (and a failure) when it cannot be written or opened.
std::unique_ptr<MainWindow> openedClaimsFolder(const QTemporaryDir& out, const QString& name,
                                               const char* json, QString* dir) {
    *dir = out.filePath(name);
    QFile file(*dir + QStringLiteral("/claims.json"));
    if (!QDir().mkpath(*dir + QStringLiteral("/runs")) || !file.open(QIODevice::WriteOnly)) {
        ADD_FAILURE() << "cannot write " << dir->toStdString();
        return nullptr;
    }
    file.write(json);
    file.close();
    auto window = std::make_unique<MainWindow>();
    window->setOutputDir(out.path());
    window->show();
    if (!window->selectPreset("cf-regression") || !window->openRun(*dir)) {
        ADD_FAILURE() << window->statusText().toStdString();
        return nullptr;
    }
    return window;
}

}  // namespace

// A claims folder whose first claim has not finished (a full tier hours into its first sub-run, or
// stopped there) opens as a claims folder: no form error, the caption says so, and the Claims tab
// says why it is empty instead of asking for a claims folder.
TEST(WindowTrust, AClaimsFolderWithNoFinishedClaimOpensAsOne) {
    QTemporaryDir out;
    QString dir;
    const auto window =
        openedClaimsFolder(out, QStringLiteral("claims-full-20261205-145828"),
                           R"({"tier": "full", "status": "running", "claims": []})", &dir);
    ASSERT_TRUE(window);
    const QString status = window->statusText();
    EXPECT_TRUE(status.contains("claims (full tier) · no claim finished yet · running"))
        << status.toStdString();
    EXPECT_FALSE(status.contains("The form keeps its values")) << status.toStdString();
    EXPECT_FALSE(status.contains("invalid")) << status.toStdString();
    auto* panel = window->findChild<liftlab::ClaimsPanel*>();
    ASSERT_NE(panel, nullptr);
    EXPECT_EQ(panel->rowCount(), 0);
    EXPECT_TRUE(panel->emptyNote().contains("No claim of this check has finished yet"))
        << panel->emptyNote().toStdString();
}

// A claims folder (`liftlab-cli claims`) opened: the status line counts its verdicts and says its
// status; the form keeps its preset without an error (the folder has no spec.json of its own) and
// Re-run stays off (a claims check is re-run from the CLI, not as a run).
TEST(WindowTrust, AClaimsFolderOpensWithItsVerdictsCountedAndNoFormError) {
    QTemporaryDir out;
    QString dir;
    const auto window = openedClaimsFolder(out, QStringLiteral("claims-full-20261205-112833"),
                                           R"({"tier": "full", "status": "running", "claims": [
        {"id": "a", "claim": "A", "tier": "full", "preset": {"verdict": "holds", "p": 1e-9}},
        {"id": "b", "claim": "B", "tier": "full", "preset": {"verdict": "refuted", "p": 0.98}},
        {"id": "c", "claim": "C", "tier": "full", "preset": {"verdict": "holds", "p": 0.01}}]})",
                                           &dir);
    ASSERT_TRUE(window);
    const QString status = window->statusText();
    EXPECT_TRUE(status.contains("claims (full tier) · 3 claims: 2 holds, 1 refuted · running"))
        << status.toStdString();
    EXPECT_FALSE(status.contains("The form keeps its values")) << status.toStdString();
    EXPECT_EQ(window->form()->presetName(), QStringLiteral("cf-regression"));
    EXPECT_FALSE(window->findChild<liftlab::RunControls*>()->rerunAction()->isEnabled());
    RunView* view = window->runView();
    for (int i = 0; i < view->tabCount(); ++i)
        if (view->tabKey(i) == "claims") EXPECT_TRUE(view->hasContent(i));
    // Its check's process named in resume/lock and gone: "running" reads stopped, with the way on.
    ASSERT_TRUE(QDir(dir).mkpath(QStringLiteral("resume")));
    const pid_t gone = ::fork();  // a child that has exited and been reaped: its pid is free
    if (gone == 0) ::_exit(0);
    ASSERT_GT(gone, 0);
    ASSERT_EQ(::waitpid(gone, nullptr, 0), gone);
    QFile lock(dir + QStringLiteral("/resume/lock"));
    ASSERT_TRUE(lock.open(QIODevice::WriteOnly));
    lock.write((QSysInfo::machineHostName() + QStringLiteral(" %1\n").arg(gone)).toUtf8());
    lock.close();
    ASSERT_TRUE(window->openRun(dir));
    EXPECT_TRUE(window->statusText().contains(
        QStringLiteral("stopped (its process, pid %1, ended; liftlab-cli claims --resume")
            .arg(gone)))
        << window->statusText().toStdString();
}
