// liftlab: the GUI. liftlab [--preset NAME] [--model FILE [--constrained NAMES]] [--autostart]
// [--screenshot FILE] [--quit-when-done]
//                           [--steps N] [--out DIR] [--open RUN_DIR|FILE.liftlab-compare]
//                           [--tab NAME] [--compute-landscape] [--export-all DIR]
// --help lists every tab. The options are read in startup_options.cpp and carried out in
// startup.cpp.
#include <QApplication>

#include <QStyleFactory>
#include <clocale>
#include <csignal>
#include "passive_openmp.h"

#include "core/allocator_tuning.h"
#include "training/model_probe.h"

#include "main_window.h"
#include "method_palette.h"
#include "startup.h"
#include "startup_options.h"

int main(int argc, char** argv) {
    // `liftlab probe-model DIR` (hidden): the child process that checks a user's TorchScript file
    // (engine/training/model_probe.h) for the model box and the runs. First: no Qt, nothing else.
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
    QGuiApplication::setDesktopFileName(
        QStringLiteral("io.github.liftlab.LiftLab"));  // its .desktop
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    liftlab::installMethodPalette();
    const liftlab::StartupOptions options = liftlab::parseStartupOptions(app);

    // Writes past a file size limit fail with EFBIG (reported) instead of killing the process.
    std::signal(SIGXFSZ, SIG_IGN);
    liftlab::MainWindow window;
    liftlab::installTerminationSignals(window);
    if (const int rc = liftlab::applyStartupOptions(window, options)) return rc;
    window.show();
    // Screenshot first, then quit: both only after the window has drawn its last state.
    liftlab::StartupActions actions(window, options);
    actions.schedule();
    const int rc = QApplication::exec();
    return rc != 0 ? rc : actions.exitCode();
}
