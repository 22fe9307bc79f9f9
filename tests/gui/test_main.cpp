// One QApplication for every GUI test, on the offscreen platform (no display needed).
#include <gtest/gtest.h>
#include <QApplication>
#include <QStandardPaths>
#include <QTemporaryDir>

#include "method_palette.h"
#include "settings_scope.h"
#include "training/model_probe.h"

int main(int argc, char** argv) {
    // The model box and the runs check TorchScript files in a child: this program, started again.
    if (const auto code = liftlab::run_model_probe_if_asked(argc, argv)) return *code;
    qputenv("QT_QPA_PLATFORM", "offscreen");
    // Keeps QSettings (window geometry, last folders) out of the user's real configuration and
    // out of other test runs': a settings folder of this process's own, removed at exit.
    QStandardPaths::setTestModeEnabled(true);
    const QTemporaryDir settings;
    liftlab::useSettingsFolder(settings.path());
    QApplication app(argc, argv);
    liftlab::installMethodPalette();  // as the application does at start-up
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
