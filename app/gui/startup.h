// What the window does with its command line (startup_options.h) before and after it shows:
// SIGTERM/SIGINT stop the run like the Stop button, the options fill the window, and
// --autostart, --compute-landscape, --screenshot, --export-all and --quit-when-done run.
#pragma once

#include "startup_options.h"

namespace liftlab {

class MainWindow;

// SIGTERM and SIGINT become an event-loop event (through a socket pair: all a handler may do is
// write(2)); the window then stops like the Stop button and closes, so the run folder ends
// `cancelled`, not `running`, and the process exits with 128 + the signal. A second signal ends
// the process at once.
void installTerminationSignals(MainWindow& window);

// --preset, --model and --constrained, --steps, --out, --tab and --open, before the window shows.
// Returns 0, or 2 after printing what is wrong ("liftlab: …" on stderr).
int applyStartupOptions(MainWindow& window, const StartupOptions& options);

// --autostart, --compute-landscape, --screenshot, --export-all and --quit-when-done, once the
// event loop runs. Lives as long as the event loop.
class StartupActions {
public:
    StartupActions(MainWindow& window, const StartupOptions& options)
        : window_(window), options_(options) {}
    // Schedules what the options ask for (nothing when none of them is given).
    void schedule();
    // The process's exit code when the event loop's is 0: 1 when a run, landscape, export or
    // screenshot failed.
    int exitCode() const { return exitCode_; }

private:
    // Export and screenshot once the window has drawn its last state, then quit when `quit`.
    void wrapUp(bool quit);
    void scheduleAutostart();
    void scheduleLandscape();

    MainWindow& window_;
    const StartupOptions options_;
    int exitCode_ = 0;
};

}  // namespace liftlab
