// liftlab: the GUI. liftlab [--preset NAME] [--autostart] [--screenshot FILE] [--quit-when-done]
//                           [--steps N] [--out DIR] [--open RUN_DIR] [--tab NAME]
//                           [--compute-landscape] [--export-all DIR]
#include <QApplication>

#include <QCommandLineParser>
#include <QPixmap>
#include <QStyleFactory>
#include <QTimer>
#include <cstdio>
#include "passive_openmp.h"

#include "core/allocator_tuning.h"

#include "main_window.h"
#include "run_view.h"
#include "training_session.h"

namespace {

constexpr int kIdleScreenshotDelayMs = 2000;  // without --autostart: let the window settle
constexpr int kSettleMs = 250;                // after a run: let the queued replot happen

}  // namespace

int main(int argc, char** argv) {
    liftlab::ensure_passive_openmp(argv);
    liftlab::tune_allocator();  // no per-step page-fault churn (core/allocator_tuning.h)
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("LiftLab"));
    QApplication::setApplicationName(QStringLiteral("LiftLab"));
    QApplication::setApplicationVersion(QStringLiteral(LIFTLAB_VERSION));
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("LiftLab: compare closed-form last layers and their baselines, live."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption presetOpt(QStringLiteral("preset"),
                                       QStringLiteral("Built-in preset to load."),
                                       QStringLiteral("NAME"));
    const QCommandLineOption autostartOpt(QStringLiteral("autostart"),
                                          QStringLiteral("Start the run at once."));
    const QCommandLineOption screenshotOpt(
        QStringLiteral("screenshot"),
        QStringLiteral("Save a picture of the window to FILE when the run ends (or after 2 s "
                       "without --autostart)."),
        QStringLiteral("FILE"));
    const QCommandLineOption quitOpt(QStringLiteral("quit-when-done"),
                                     QStringLiteral("Quit when the run (and screenshot) is done."));
    const QCommandLineOption stepsOpt(QStringLiteral("steps"),
                                      QStringLiteral("Training steps (overrides the preset)."),
                                      QStringLiteral("N"));
    const QCommandLineOption outOpt(QStringLiteral("out"),
                                    QStringLiteral("Parent folder of the run folders."),
                                    QStringLiteral("DIR"));
    const QCommandLineOption openOpt(QStringLiteral("open"),
                                     QStringLiteral("Open a finished run folder in every panel."),
                                     QStringLiteral("RUN_DIR"));
    const QCommandLineOption tabOpt(
        QStringLiteral("tab"),
        QStringLiteral("Panel to show: curves, spectrum, landscape, escape, ablation or sweep."),
        QStringLiteral("NAME"));
    const QCommandLineOption landscapeOpt(
        QStringLiteral("compute-landscape"),
        QStringLiteral("With --open: compute (or load cached) landscapes before the screenshot."));
    const QCommandLineOption exportOpt(
        QStringLiteral("export-all"),
        QStringLiteral("Before the screenshot, export every panel as PNG into DIR."),
        QStringLiteral("DIR"));
    parser.addOptions({presetOpt, autostartOpt, screenshotOpt, quitOpt, stepsOpt, outOpt, openOpt,
                       tabOpt, landscapeOpt, exportOpt});
    parser.process(app);

    liftlab::MainWindow window;
    if (parser.isSet(presetOpt) && !window.selectPreset(parser.value(presetOpt))) {
        std::fprintf(stderr, "liftlab: unknown preset '%s' (liftlab-cli list shows them)\n",
                     qPrintable(parser.value(presetOpt)));
        return 2;
    }
    if (parser.isSet(stepsOpt)) {
        bool ok = false;
        const int steps = parser.value(stepsOpt).toInt(&ok);
        if (!ok || steps <= 0) {
            std::fprintf(stderr, "liftlab: --steps needs a positive integer, got '%s'\n",
                         qPrintable(parser.value(stepsOpt)));
            return 2;
        }
        window.setSteps(steps);
    }
    if (parser.isSet(outOpt)) window.setOutputDir(parser.value(outOpt));
    int tab = -1;
    if (parser.isSet(tabOpt)) {
        for (int i = 0; i < liftlab::RunView::TabCount; ++i)
            if (window.runView()->tabKey(i) == parser.value(tabOpt)) tab = i;
        if (tab < 0) {
            std::fprintf(stderr,
                         "liftlab: --tab must be curves, spectrum, landscape, escape, "
                         "ablation or sweep\n");
            return 2;
        }
    }
    if (parser.isSet(openOpt) && !window.openRun(parser.value(openOpt))) {
        std::fprintf(stderr, "liftlab: %s\n", qPrintable(window.statusText()));
        return 2;
    }
    if (tab >= 0) window.runView()->setCurrentIndex(tab);
    window.show();

    const QString screenshot = parser.value(screenshotOpt);
    const bool quitWhenDone = parser.isSet(quitOpt);
    int exitCode = 0;
    // Screenshot first, then quit: both only after the window has drawn its last state.
    const QString exportDir = parser.value(exportOpt);
    auto wrapUp = [&](bool quit) {
        QTimer::singleShot(kSettleMs, &window, [&, quit] {
            if (!exportDir.isEmpty()) {
                const QStringList files = window.exportAllPanels(exportDir, QStringLiteral("png"));
                for (const QString& f : files) std::printf("%s\n", qPrintable(f));
                if (files.isEmpty()) {
                    std::fprintf(stderr, "liftlab: nothing exported to %s\n",
                                 qPrintable(exportDir));
                    exitCode = 1;
                }
            }
            if (!screenshot.isEmpty() && !window.grab().save(screenshot)) {
                std::fprintf(stderr, "liftlab: could not write %s\n", qPrintable(screenshot));
                exitCode = 1;
            }
            if (quit) QApplication::exit(exitCode);
        });
    };

    if (parser.isSet(autostartOpt)) {
        QObject::connect(&window, &liftlab::MainWindow::runEnded, &window, [&](bool ok) {
            if (!ok) {
                std::fprintf(stderr, "liftlab: %s\n", qPrintable(window.statusText()));
                if (quitWhenDone) exitCode = 1;
            }
            wrapUp(quitWhenDone);
        });
        // Once the event loop runs, so the window is up before the first curve point.
        QTimer::singleShot(0, &window, [&] {
            window.startRun();
            if (!window.session()->isRunning()) {  // the form was rejected: say why
                std::fprintf(stderr, "liftlab: %s\n", qPrintable(window.statusText()));
                if (quitWhenDone) exitCode = 1;
                wrapUp(quitWhenDone);
            }
        });
    } else if (parser.isSet(landscapeOpt)) {
        QObject::connect(window.runView(), &liftlab::RunView::landscapeDone, &window,
                         [&](const QString& message, bool ok) {
                             std::fprintf(stderr, "liftlab: %s\n", qPrintable(message));
                             if (!ok) exitCode = 1;
                             wrapUp(quitWhenDone);
                         });
        QTimer::singleShot(0, &window, [&] {
            window.runView()->setCurrentIndex(liftlab::RunView::LandscapeTab);
            if (!window.runView()->computeLandscape()) {
                std::fprintf(stderr, "liftlab: %s\n",
                             qPrintable(window.runView()->landscapeStatus()));
                exitCode = 1;
                wrapUp(quitWhenDone);
            }
        });
    } else if (!screenshot.isEmpty() || !exportDir.isEmpty()) {
        QTimer::singleShot(kIdleScreenshotDelayMs, &window, [&] { wrapUp(quitWhenDone); });
    }
    const int rc = QApplication::exec();
    return rc != 0 ? rc : exitCode;
}
