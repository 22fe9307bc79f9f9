// liftlab: the GUI. liftlab [--preset NAME] [--model FILE [--constrained NAMES]] [--autostart]
// [--screenshot FILE] [--quit-when-done]
//                           [--steps N] [--out DIR] [--open RUN_DIR|FILE.liftlab-compare]
//                           [--tab NAME] [--compute-landscape] [--export-all DIR]
// --help lists every tab.
#include <QApplication>

#include <sys/socket.h>
#include <unistd.h>
#include <QCommandLineParser>
#include <QEventLoop>
#include <QPixmap>
#include <QSocketNotifier>
#include <QStyleFactory>
#include <QTimer>
#include <clocale>
#include <csignal>
#include <cstdio>
#include "passive_openmp.h"

#include "core/allocator_tuning.h"
#include "nn/model_probe.h"

#include "comparison_file.h"
#include "main_window.h"
#include "method_palette.h"
#include "model_file_box.h"
#include "run_view.h"
#include "training_session.h"

namespace {

constexpr int kIdleScreenshotDelayMs = 2000;  // without --autostart: let the window settle
constexpr int kSettleMs = 250;                // after a run: let the queued replot happen

// SIGTERM / SIGINT are turned into an event-loop event through a socket pair (the only safe
// thing a handler can do is write(2)); the window then stops like the Stop button, so the run
// folder ends `cancelled`, not `running`.
int g_signalFds[2] = {-1, -1};
volatile std::sig_atomic_t g_signal = 0;

extern "C" void onTerminationSignal(int signo) {
    g_signal = signo;
    const char byte = 1;
    [[maybe_unused]] const auto n = ::write(g_signalFds[0], &byte, 1);
    std::signal(signo, SIG_DFL);  // a second signal ends the process at once
}

}  // namespace

int main(int argc, char** argv) {
    // `liftlab probe-model DIR` (hidden): the child process that checks a user's TorchScript file
    // (engine/nn/model_probe.h) for the model box and the runs. First: no Qt, nothing else.
    if (const auto code = liftlab::run_model_probe_if_asked(argc, argv)) return *code;
    liftlab::ensure_passive_openmp(argv);
    liftlab::tune_allocator();  // no per-step page-fault churn (core/allocator_tuning.h)
    QApplication app(argc, argv);
    // Qt has just set the C library's locale from the environment. Every number LiftLab writes
    // or reads goes through core/c_numbers.h, which ignores it; this is the belt to those braces
    // (LibTorch's and the C library's own formatting). The window still shows Qt's own numbers
    // as QLocale says.
    std::setlocale(LC_NUMERIC, "C");
    // LiftLab speaks English, and so do the C library's messages it quotes (strerror's "File too
    // large" in a reason of summary.json or on stderr), whatever the locale.
    std::setlocale(LC_MESSAGES, "C");
    QApplication::setOrganizationName(QStringLiteral("LiftLab"));
    QApplication::setApplicationName(QStringLiteral("LiftLab"));
    QApplication::setApplicationVersion(QStringLiteral(LIFTLAB_VERSION));
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    liftlab::installMethodPalette();

    QCommandLineParser parser;
    // --help lists every tab, with what it shows (--tab takes the key).
    QString tabs;
    for (const auto& t : liftlab::RunView::tabInfos())
        tabs += QStringLiteral("\n  %1  %2: %3").arg(t.key, -9).arg(t.title, t.tip);
    parser.setApplicationDescription(
        QStringLiteral("LiftLab: compare closed-form last layers and their baselines, live.\n"
                       "F1 in the window opens the user guide; every form field's tooltip "
                       "names its spec key and default.\n\nTabs (--tab KEY):") +
        tabs);
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
    const QCommandLineOption openOpt(
        QStringLiteral("open"),
        QStringLiteral("Open a finished run folder in every panel (and its spec in the form), or "
                       "a saved comparison (*.liftlab-compare)."),
        QStringLiteral("RUN_DIR"));
    QStringList tabKeys;
    for (const auto& t : liftlab::RunView::tabInfos()) tabKeys << t.key;
    const QCommandLineOption tabOpt(QStringLiteral("tab"),
                                    QStringLiteral("Panel to show: %1 (the tabs above).")
                                        .arg(tabKeys.join(QStringLiteral(", "))),
                                    QStringLiteral("NAME"));
    const QCommandLineOption landscapeOpt(
        QStringLiteral("compute-landscape"),
        QStringLiteral("With --open: compute (or load cached) landscapes before the screenshot."));
    const QCommandLineOption exportOpt(
        QStringLiteral("export-all"),
        QStringLiteral("Before the screenshot, export every panel as PNG into DIR."),
        QStringLiteral("DIR"));
    const QCommandLineOption modelOpt(
        QStringLiteral("model"),
        QStringLiteral("Your TorchScript backbone or ICNN for the preset (README, \"Bring your own "
                       "model\")."),
        QStringLiteral("FILE"));
    const QCommandLineOption constrainedOpt(
        QStringLiteral("constrained"),
        QStringLiteral(
            "With --model on an ICNN preset: its non-negative parameters, comma-separated."),
        QStringLiteral("NAMES"));
    parser.addOptions({modelOpt, constrainedOpt});
    parser.addOptions({presetOpt, autostartOpt, screenshotOpt, quitOpt, stepsOpt, outOpt, openOpt,
                       tabOpt, landscapeOpt, exportOpt});
    parser.process(app);

    // Writes past a file size limit fail with EFBIG (reported) instead of killing the process.
    std::signal(SIGXFSZ, SIG_IGN);
    liftlab::MainWindow window;
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, g_signalFds) == 0) {
        auto* notifier = new QSocketNotifier(g_signalFds[1], QSocketNotifier::Read, &window);
        QObject::connect(notifier, &QSocketNotifier::activated, &window, [&window, notifier] {
            char byte;
            [[maybe_unused]] const auto n = ::read(g_signalFds[1], &byte, 1);
            notifier->setEnabled(false);
            std::fprintf(stderr, "liftlab: signal %d: stopping the run and closing\n",
                         static_cast<int>(g_signal));
            window.stopRun();
            window.close();  // the session joins its worker, which writes `cancelled`
            QApplication::exit(128 + static_cast<int>(g_signal));
        });
        std::signal(SIGTERM, onTerminationSignal);
        std::signal(SIGINT, onTerminationSignal);
    }
    if (parser.isSet(presetOpt) && !window.selectPreset(parser.value(presetOpt))) {
        std::fprintf(stderr, "liftlab: unknown preset '%s' (liftlab-cli list shows them)\n",
                     qPrintable(parser.value(presetOpt)));
        return 2;
    }
    if (parser.isSet(modelOpt)) {
        auto* box = window.findChild<liftlab::ModelFileBox*>(QStringLiteral("modelFileBox"));
        if (!box || box->mode() == liftlab::ModelFileBox::Mode::Hidden) {
            std::fprintf(stderr,
                         "liftlab: --model: the preset takes no model of yours (it needs a "
                         "backbone + last-layer task or an ICNN energy model)\n");
            return 2;
        }
        // Read before anything starts (a worker reads it; the window is not up yet).
        QEventLoop wait;
        QObject::connect(box, &liftlab::ModelFileBox::inspected, &wait, &QEventLoop::quit);
        box->setPath(parser.value(modelOpt));
        if (box->reading()) wait.exec();
        if (!box->error().isEmpty()) {
            std::fprintf(stderr, "liftlab: --model: %s\n", qPrintable(box->error()));
            return 2;
        }
        if (parser.isSet(constrainedOpt)) {
            const QStringList names =
                parser.value(constrainedOpt).split(QLatin1Char(','), Qt::SkipEmptyParts);
            for (const QString& n : names)
                if (!box->parameterNames().contains(n.trimmed())) {
                    std::fprintf(stderr, "liftlab: --constrained: %s has no parameter '%s'\n",
                                 qPrintable(box->path()), qPrintable(n));
                    return 2;
                }
            QStringList trimmed;
            for (const QString& n : names) trimmed << n.trimmed();
            box->setConstrained(trimmed);
        }
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
        // A tab by its key ("timing", the name of its exported file) or by the title it shows
        // ("Cost", "escape dynamics"), case and spaces aside.
        const auto simple = [](QString s) { return s.toLower().remove(QLatin1Char(' ')); };
        const QString wanted = simple(parser.value(tabOpt));
        const liftlab::RunView* view = window.runView();
        for (int i = 0; i < view->tabCount() && tab < 0; ++i)
            if (simple(view->tabKey(i)) == wanted || simple(view->tabText(i)) == wanted) tab = i;
        if (tab < 0) {
            QStringList keys;
            for (int i = 0; i < view->tabCount(); ++i)
                keys << (simple(view->tabText(i)) == view->tabKey(i)
                             ? view->tabKey(i)
                             : view->tabKey(i) + QStringLiteral(" (") + view->tabText(i) +
                                   QStringLiteral(")"));
            std::fprintf(stderr, "liftlab: --tab must be one of %s\n",
                         qPrintable(keys.join(QStringLiteral(", "))));
            return 2;
        }
    }
    const QString toOpen = parser.value(openOpt);
    if (parser.isSet(openOpt) && !(toOpen.endsWith(QLatin1String(liftlab::kComparisonSuffix))
                                       ? window.openComparisonFile(toOpen)
                                       : window.openRun(toOpen))) {
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
    } else if (quitWhenDone) {
        // Nothing to wait for (e.g. --open DIR --quit-when-done): quit once the window is drawn.
        QTimer::singleShot(0, &window, [&] { wrapUp(true); });
    }
    const int rc = QApplication::exec();
    return rc != 0 ? rc : exitCode;
}
