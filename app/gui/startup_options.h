// The window's command line: liftlab [--preset NAME] [--model FILE [--constrained NAMES]]
// [--autostart] [--screenshot FILE] [--quit-when-done] [--steps N] [--out DIR]
// [--open RUN_DIR|FILE.liftlab-compare] [--tab NAME] [--compute-landscape] [--export-all DIR].
// --help lists every tab.
#pragma once
#include <QString>

#include <optional>

class QApplication;

namespace liftlab {

// An option's value, or nullopt when it is not given.
struct StartupOptions {
    std::optional<QString> preset;       // --preset NAME
    std::optional<QString> model;        // --model FILE
    std::optional<QString> constrained;  // --constrained NAMES, comma-separated
    std::optional<QString> steps;        // --steps N, checked by applyStartupOptions (startup.h)
    std::optional<QString> out;          // --out DIR
    std::optional<QString> open;         // --open RUN_DIR|FILE.liftlab-compare
    std::optional<QString> tab;          // --tab NAME
    bool autostart = false;
    bool computeLandscape = false;
    QString screenshot;  // --screenshot FILE ("": none)
    QString exportDir;   // --export-all DIR ("": none)
    bool quitWhenDone = false;
};

// Reads the application's arguments. --help and --version print and exit; an unknown option or a
// missing value prints Qt's message and exits with 1, as QCommandLineParser::process does.
StartupOptions parseStartupOptions(const QApplication& app);

}  // namespace liftlab
