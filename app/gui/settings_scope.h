// Where this process keeps its QSettings. The window reads and writes the user's LiftLab settings
// (geometry, last output folder, panel options); tests and benchmarks must never touch those, so
// they point every scope into a folder of their own, first thing in main().
#pragma once
#include <QString>

namespace liftlab {

// Every QSettings made afterwards (native and INI format, user and system scope) lives in `dir`.
// Call before the first QSettings is constructed.
void useSettingsFolder(const QString& dir);

}  // namespace liftlab
