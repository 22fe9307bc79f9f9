// liftlab-cli: list presets, run a spec headless, render a run's figures. The subcommands, their
// options and help are in subcommands.cpp (command_line.h); here, the process's set-up.
#include <QApplication>

#include <unistd.h>
#include <QDir>
#include <QFile>
#include <QLocale>
#include "passive_openmp.h"

#include <clocale>
#include <csignal>

#include <cstdio>
#include <cstdlib>
#include "core/activity.h"
#include "core/allocator_tuning.h"
#include "training/model_probe.h"

#include "command_line.h"
#include "method_palette.h"

namespace {

// Before Qt starts: the engine's activity trace, the allocator, SIGXFSZ, and the offscreen
// platform with a runtime folder.
void prepare_process() {
    // LIFTLAB_TRACE_ACTIVITY=1: every phase the engine enters, on stderr (what a Ctrl-C would
    // stop; the interrupt tests wait for a phase this way).
    if (const char* trace = std::getenv("LIFTLAB_TRACE_ACTIVITY"); trace && *trace)
        liftlab::set_activity_listener([](const std::string& what) {
            std::fprintf(stderr, "liftlab-cli: activity: %s\n", what.c_str());
        });
    liftlab::tune_allocator();  // no per-step page-fault churn (core/allocator_tuning.h)
    // Past a file size limit (ulimit -f) a write must fail with EFBIG, which the run store
    // reports (status failed, exit 3), instead of the default SIGXFSZ killing the process
    // mid-write and leaving the folder "running".
    std::signal(SIGXFSZ, SIG_IGN);
    // Figures are drawn with Qt widgets; the offscreen platform needs no display.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    // Qt warns on every start when the session has no runtime folder (CI, ssh); give it one.
    if (qEnvironmentVariableIsEmpty("XDG_RUNTIME_DIR")) {
        const QByteArray dir = QDir::tempPath().toUtf8() + "/liftlab-runtime-" +
                               QByteArray::number(static_cast<qint64>(::getuid()));
        QDir().mkpath(QString::fromUtf8(dir));
        QFile::setPermissions(QString::fromUtf8(dir), QFileDevice::ReadOwner |
                                                          QFileDevice::WriteOwner |
                                                          QFileDevice::ExeOwner);
        qputenv("XDG_RUNTIME_DIR", dir);
    }
}

// Once Qt has started: the C locale for numbers and messages, Qt's own numbers in C, the
// methods' colours for the figures.
void prepare_locale_and_figures() {
    // Qt has just set the C library's locale from the environment. Every number LiftLab writes
    // or reads goes through core/c_numbers.h, which ignores it; this is the belt to those braces
    // (LibTorch's and the C library's own formatting).
    std::setlocale(LC_NUMERIC, "C");
    // LiftLab speaks English, and so do the C library's messages it quotes (strerror's "File too
    // large" in a reason of summary.json or on stderr), whatever the locale.
    std::setlocale(LC_MESSAGES, "C");
    // Qt's own numbers too (the figures' tick labels): the CLI's output is files and logs, which
    // never change with the locale (the window, by contrast, shows the user's).
    QLocale::setDefault(QLocale::c());
    QApplication::setApplicationName("liftlab-cli");
    liftlab::installMethodPalette();  // the report's figures use the methods' colours
}

}  // namespace

int main(int argc, char** argv) {
    // `liftlab-cli probe-model DIR` (hidden): the child process that checks a user's TorchScript
    // file for a run (engine/training/model_probe.h). First: no Qt, no re-exec, nothing else.
    if (const auto code = liftlab::run_model_probe_if_asked(argc, argv)) return *code;
    liftlab::ensure_passive_openmp(argv);
    prepare_process();
    QApplication app(argc, argv);
    prepare_locale_and_figures();
    // Each subcommand's options, help and arguments: command_line.h, subcommands.cpp.
    return liftlab::cli::run_command_line(QCoreApplication::arguments());
}
