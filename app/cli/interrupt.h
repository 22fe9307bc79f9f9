// Ctrl-C for liftlab-cli's long commands (run, landscape; README "Stopping a run"). The first
// SIGINT raises the stop flag and says what it is stopping (engine/core/activity.h) and that a
// second Ctrl-C quits at once; the engine then stops within about a second in any phase (the
// model check's child, a training step, the feature spectrum, a landscape, log Z), closing the run
// folder as `cancelled` and resumable. The second SIGINT ends the process at once with exit code
// 130, whatever it is doing (a user's forward that never returns): the folder is then resumable
// from its last saved state, as after a kill.
#pragma once
#include <atomic>
#include <string>
#include <thread>

namespace liftlab::cli {

class InterruptHandler {
public:
    // `what`: the command's work in a few words ("the run", "the landscape"); `after`: said after
    // the stop, e.g. where the results stay.
    InterruptHandler(std::string what, std::string after);
    ~InterruptHandler();  // the default SIGINT action again
    InterruptHandler(const InterruptHandler&) = delete;
    InterruptHandler& operator=(const InterruptHandler&) = delete;

    const std::atomic<bool>* flag() const;
    bool interrupted() const;

private:
    std::thread watcher_;  // prints the first Ctrl-C's message (a handler may only write(2))
};

}  // namespace liftlab::cli
