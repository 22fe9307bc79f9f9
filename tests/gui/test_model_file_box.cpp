// The form's "Your model" box (docs/your-model.md): shown where a preset can take a
// user's TorchScript model, its parameters listed from a worker thread, the ICNN's constrained
// ones ticked, and runs started from the window with it; a bad file is a clear message, no run.
#include <gtest/gtest.h>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "experiment_form.h"
#include "main_window.h"
#include "model_file_box.h"
#include "training_session.h"

using liftlab::MainWindow;
using liftlab::ModelFileBox;

namespace {

QString example(const char* name) {
    return QStringLiteral(LIFTLAB_SOURCE_DIR "/resources/models/") + QString::fromLatin1(name);
}

ModelFileBox* modelBox(MainWindow& w) {
    return w.findChild<ModelFileBox*>(QStringLiteral("modelFileBox"));
}

QJsonObject readJson(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

// Picks `file` and waits for the worker to list (or refuse) it.
bool pick(ModelFileBox* box, const QString& file) {
    QSignalSpy done(box, &ModelFileBox::inspected);
    box->setPath(file);
    return done.count() > 0 || done.wait(20000);
}

bool finish(MainWindow& w) {
    return QTest::qWaitFor([&] { return !w.session()->isRunning(); }, 120000);
}

}  // namespace

TEST(ModelFileBox, ShownWhereAPresetCanTakeAUsersModel) {
    MainWindow window;
    auto* box = modelBox(window);
    ASSERT_NE(box, nullptr);
    const std::pair<const char*, ModelFileBox::Mode> cases[] = {
        {"cf-regression", ModelFileBox::Mode::Backbone},
        {"cf-fashion-mnist", ModelFileBox::Mode::Backbone},
        {"icnn-ebm-1d", ModelFileBox::Mode::Icnn},
        {"icnn-ebm-nd", ModelFileBox::Mode::Icnn},
        {"cf-dfiv-demand", ModelFileBox::Mode::Hidden},
        {"cpflow-toy", ModelFileBox::Mode::Hidden},
    };
    for (const auto& [preset, mode] : cases) {
        ASSERT_TRUE(window.selectPreset(preset)) << preset;
        EXPECT_EQ(box->mode(), mode) << preset;
    }
}

TEST(ModelFileBox, ScriptedBackboneRunsFromTheWindow) {
    QTemporaryDir out;
    MainWindow window;
    window.show();
    ASSERT_TRUE(window.selectPreset("cf-regression"));
    auto* box = modelBox(window);
    ASSERT_TRUE(pick(box, example("mlp_backbone.pt")));
    ASSERT_TRUE(box->loaded());
    EXPECT_EQ(box->parameterNames().size(), 6);  // three Linear layers
    window.setSteps(40);
    window.setOutputDir(out.path());
    window.startRun();
    ASSERT_TRUE(window.session()->isRunning()) << window.statusText().toStdString();
    ASSERT_TRUE(finish(window)) << window.statusText().toStdString();
    EXPECT_TRUE(window.statusText().contains("Finished")) << window.statusText().toStdString();
    const auto spec = readJson(window.lastRunDir() + "/spec.json");
    const auto backbone = spec["backbone"].toObject();
    EXPECT_EQ(backbone["kind"].toString(), "torchscript");
    EXPECT_EQ(backbone["script_sha256"].toString().size(), 64);
    EXPECT_TRUE(QFile::exists(window.lastRunDir() + "/models/cf-prox_seed0.pt"));
}

TEST(ModelFileBox, IcnnNeedsItsConstrainedParametersTicked) {
    QTemporaryDir out;
    MainWindow window;
    ASSERT_TRUE(window.selectPreset("icnn-ebm-1d"));
    auto* box = modelBox(window);
    ASSERT_TRUE(pick(box, example("icnn_1d.pt")));
    EXPECT_EQ(box->parameterNames(),
              QStringList({"w0", "b0", "wz1", "wx1", "b1", "wz2", "wx2", "b2", "w_out", "w_x"}));
    window.setSteps(20);
    ASSERT_TRUE(window.form()->setSeedsText("0"));  // one of the preset's three seeds: quick
    window.setOutputDir(out.path());
    window.startRun();
    EXPECT_FALSE(window.session()->isRunning());
    EXPECT_TRUE(window.statusText().contains("tick its non-negative parameters"))
        << window.statusText().toStdString();
    EXPECT_TRUE(QDir(out.path()).isEmpty());

    box->setConstrained({"wz1", "wz2", "w_out"});
    window.startRun();
    ASSERT_TRUE(window.session()->isRunning()) << window.statusText().toStdString();
    ASSERT_TRUE(finish(window)) << window.statusText().toStdString();
    const auto icnn = readJson(window.lastRunDir() + "/spec.json")["icnn"].toObject();
    EXPECT_EQ(icnn["constrained"].toArray().size(), 3);
    const auto summary = readJson(window.lastRunDir() + "/summary.json");
    EXPECT_EQ(summary["status"].toString(), "ok");
    for (const auto& r : summary["runs"].toArray())
        EXPECT_EQ(r.toObject()["final"].toObject()["chord_convexity_violations"].toDouble(-1), 0.0);
}

TEST(ModelFileBox, ABadFileIsAMessageAndStartsNothing) {
    QTemporaryDir out;
    QFile bad(out.filePath("notes.pt"));
    ASSERT_TRUE(bad.open(QIODevice::WriteOnly));
    bad.write("not a model\n");
    bad.close();
    MainWindow window;
    ASSERT_TRUE(window.selectPreset("cf-regression"));
    auto* box = modelBox(window);
    ASSERT_TRUE(pick(box, bad.fileName()));
    EXPECT_FALSE(box->loaded());
    auto* message = box->findChild<QPlainTextEdit*>(QStringLiteral("modelError"));
    ASSERT_NE(message, nullptr);
    EXPECT_TRUE(message->toPlainText().contains("not a TorchScript archive"))
        << message->toPlainText().toStdString();
    window.setOutputDir(out.filePath("runs"));
    window.startRun();
    EXPECT_FALSE(window.session()->isRunning());
    EXPECT_TRUE(window.statusText().contains("not a TorchScript archive"))
        << window.statusText().toStdString();
    EXPECT_FALSE(QDir(out.filePath("runs")).exists());
    // Back to the built-in model: the preset runs as before.
    ASSERT_TRUE(pick(box, QString()));
    window.setSteps(20);
    window.startRun();
    EXPECT_TRUE(window.session()->isRunning()) << window.statusText().toStdString();
    ASSERT_TRUE(finish(window));
}

TEST(ModelFileBox, ACrashWhileReadingIsAMessageAndTheWindowLivesOn) {
    MainWindow window;
    ASSERT_TRUE(window.selectPreset("cf-regression"));
    auto* box = modelBox(window);
    // The child that reads the file crashes as LibTorch would (a test hook raises SIGSEGV there).
    qputenv("LIFTLAB_TEST_PROBE_CRASH", "SIGSEGV");
    const bool read = pick(box, example("mlp_backbone.pt"));
    qunsetenv("LIFTLAB_TEST_PROBE_CRASH");
    ASSERT_TRUE(read);
    EXPECT_FALSE(box->loaded());
    EXPECT_TRUE(box->error().contains("LibTorch crashed on this file (SIGSEGV)"))
        << box->error().toStdString();
    ASSERT_TRUE(pick(box, example("mlp_backbone.pt")));  // this process is unharmed
    EXPECT_TRUE(box->loaded());
}
