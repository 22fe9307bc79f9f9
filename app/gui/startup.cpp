#include "startup.h"

#include <sys/socket.h>
#include <unistd.h>
#include <QApplication>
#include <QEventLoop>
#include <QPixmap>
#include <QSocketNotifier>
#include <QTimer>

#include <csignal>
#include <cstdio>

#include "comparison_file.h"
#include "main_window.h"
#include "model_file_box.h"
#include "run_view.h"
#include "training_session.h"

namespace liftlab {

namespace {

constexpr int kIdleScreenshotDelayMs = 2000;  // without --autostart: let the window settle
constexpr int kSettleMs = 250;                // after a run: let the queued replot happen

int g_signalFds[2] = {-1, -1};
volatile std::sig_atomic_t g_signal = 0;

extern "C" void onTerminationSignal(int signo) {
    g_signal = signo;
    const char byte = 1;
    [[maybe_unused]] const auto n = ::write(g_signalFds[0], &byte, 1);
    std::signal(signo, SIG_DFL);  // a second signal ends the process at once
}

// --model FILE (read before anything starts: a worker reads it, the window is not up yet) and
// --constrained NAMES. Returns 0 or 2.
int applyModel(MainWindow& window, const StartupOptions& options) {
    auto* box = window.findChild<ModelFileBox*>(QStringLiteral("modelFileBox"));
    if (!box || box->mode() == ModelFileBox::Mode::Hidden) {
        std::fprintf(stderr,
                     "liftlab: --model: the preset takes no model of yours (it needs a "
                     "backbone + last-layer task or an ICNN energy model)\n");
        return 2;
    }
    QEventLoop wait;
    QObject::connect(box, &ModelFileBox::inspected, &wait, &QEventLoop::quit);
    box->setPath(*options.model);
    if (box->reading()) wait.exec();
    if (!box->error().isEmpty()) {
        std::fprintf(stderr, "liftlab: --model: %s\n", qPrintable(box->error()));
        return 2;
    }
    if (!options.constrained) return 0;
    const QStringList names = options.constrained->split(QLatin1Char(','), Qt::SkipEmptyParts);
    for (const QString& n : names)
        if (!box->parameterNames().contains(n.trimmed())) {
            std::fprintf(stderr, "liftlab: --constrained: %s has no parameter '%s'\n",
                         qPrintable(box->path()), qPrintable(n));
            return 2;
        }
    QStringList trimmed;
    for (const QString& n : names) trimmed << n.trimmed();
    box->setConstrained(trimmed);
    return 0;
}

// The tab --tab names, by its key ("timing", the name of its exported file) or by the title it
// shows ("Cost", "escape dynamics"), case and spaces aside; -1 after printing the choices.
int findTab(const RunView& view, const QString& name) {
    const auto simple = [](QString s) { return s.toLower().remove(QLatin1Char(' ')); };
    const QString wanted = simple(name);
    for (int i = 0; i < view.tabCount(); ++i)
        if (simple(view.tabKey(i)) == wanted || simple(view.tabText(i)) == wanted) return i;
    QStringList keys;
    for (int i = 0; i < view.tabCount(); ++i)
        keys << (simple(view.tabText(i)) == view.tabKey(i)
                     ? view.tabKey(i)
                     : view.tabKey(i) + QStringLiteral(" (") + view.tabText(i) +
                           QStringLiteral(")"));
    std::fprintf(stderr, "liftlab: --tab must be one of %s\n",
                 qPrintable(keys.join(QStringLiteral(", "))));
    return -1;
}

}  // namespace

void installTerminationSignals(MainWindow& window) {
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, g_signalFds) != 0) return;
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

int applyStartupOptions(MainWindow& window, const StartupOptions& options) {
    if (options.preset && !window.selectPreset(*options.preset)) {
        std::fprintf(stderr, "liftlab: unknown preset '%s' (liftlab-cli list shows them)\n",
                     qPrintable(*options.preset));
        return 2;
    }
    if (options.model)
        if (const int rc = applyModel(window, options)) return rc;
    if (options.steps) {
        bool ok = false;
        const int steps = options.steps->toInt(&ok);
        if (!ok || steps <= 0) {
            std::fprintf(stderr, "liftlab: --steps needs a positive integer, got '%s'\n",
                         qPrintable(*options.steps));
            return 2;
        }
        window.setSteps(steps);
    }
    if (options.out) window.setOutputDir(*options.out);
    const int tab = options.tab ? findTab(*window.runView(), *options.tab) : -1;
    if (options.tab && tab < 0) return 2;
    if (options.open && !(options.open->endsWith(QLatin1String(kComparisonSuffix))
                              ? window.openComparisonFile(*options.open)
                              : window.openRun(*options.open))) {
        std::fprintf(stderr, "liftlab: %s\n", qPrintable(window.statusText()));
        return 2;
    }
    if (tab >= 0) window.runView()->setCurrentIndex(tab);
    return 0;
}

void StartupActions::wrapUp(bool quit) {
    QTimer::singleShot(kSettleMs, &window_, [this, quit] {
        if (!options_.exportDir.isEmpty()) {
            const QStringList files =
                window_.exportAllPanels(options_.exportDir, QStringLiteral("png"));
            for (const QString& f : files) std::printf("%s\n", qPrintable(f));
            if (files.isEmpty()) {
                std::fprintf(stderr, "liftlab: nothing exported to %s\n",
                             qPrintable(options_.exportDir));
                exitCode_ = 1;
            }
        }
        if (!options_.screenshot.isEmpty() && !window_.grab().save(options_.screenshot)) {
            std::fprintf(stderr, "liftlab: could not write %s\n", qPrintable(options_.screenshot));
            exitCode_ = 1;
        }
        if (quit) QApplication::exit(exitCode_);
    });
}

void StartupActions::scheduleAutostart() {
    const bool quitWhenDone = options_.quitWhenDone;
    QObject::connect(&window_, &MainWindow::runEnded, &window_, [this, quitWhenDone](bool ok) {
        if (!ok) {
            std::fprintf(stderr, "liftlab: %s\n", qPrintable(window_.statusText()));
            if (quitWhenDone) exitCode_ = 1;
        }
        wrapUp(quitWhenDone);
    });
    // Once the event loop runs, so the window is up before the first curve point.
    QTimer::singleShot(0, &window_, [this, quitWhenDone] {
        window_.startRun();
        if (!window_.session()->isRunning()) {  // the form was rejected: say why
            std::fprintf(stderr, "liftlab: %s\n", qPrintable(window_.statusText()));
            if (quitWhenDone) exitCode_ = 1;
            wrapUp(quitWhenDone);
        }
    });
}

void StartupActions::scheduleLandscape() {
    RunView* view = window_.runView();
    QObject::connect(view, &RunView::landscapeDone, &window_,
                     [this](const QString& message, bool ok) {
                         std::fprintf(stderr, "liftlab: %s\n", qPrintable(message));
                         if (!ok) exitCode_ = 1;
                         wrapUp(options_.quitWhenDone);
                     });
    QTimer::singleShot(0, &window_, [this, view] {
        view->setCurrentIndex(RunView::LandscapeTab);
        if (!view->computeLandscape()) {
            std::fprintf(stderr, "liftlab: %s\n", qPrintable(view->landscapeStatus()));
            exitCode_ = 1;
            wrapUp(options_.quitWhenDone);
        }
    });
}

void StartupActions::schedule() {
    if (options_.autostart) {
        scheduleAutostart();
    } else if (options_.computeLandscape) {
        scheduleLandscape();
    } else if (!options_.screenshot.isEmpty() || !options_.exportDir.isEmpty()) {
        QTimer::singleShot(kIdleScreenshotDelayMs, &window_,
                           [this] { wrapUp(options_.quitWhenDone); });
    } else if (options_.quitWhenDone) {
        // Nothing to wait for (e.g. --open DIR --quit-when-done): quit once the window is drawn.
        QTimer::singleShot(0, &window_, [this] { wrapUp(true); });
    }
}

}  // namespace liftlab
