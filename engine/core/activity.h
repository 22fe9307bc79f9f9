// What the engine is busy with, and the stop flag of the run it works for, as seen from deep
// inside a long phase (README "Stopping a run").
//
// Activity: a front end that is asked to stop (Ctrl-C, the window's Stop) says what it is
// stopping — "the feature spectrum of cf-prox (1024 × 200000 features)" — from
// current_activity(). A phase names itself with a scoped Activity on the thread that runs it.
//
// StopScope / stop_requested(): loops that have no RunOptions at hand (evaluation chunks, the
// spectrum's Gram blocks, a flow fit at an evaluation) poll the stop flag of the run whose thread
// they are on and throw Stopped, so that every phase ends within a fraction of a second of a stop.
// Code that catches std::exception to carry on (a diagnostic that cannot be computed) must let
// Stopped through.
#pragma once
#include <atomic>
#include <functional>
#include <stdexcept>
#include <string>

namespace liftlab {

class Activity {
public:
    explicit Activity(std::string what);
    ~Activity();
    Activity(const Activity&) = delete;
    Activity& operator=(const Activity&) = delete;
};

// The innermost activity of every thread that has one, joined by "; " ("" when idle).
std::string current_activity();

// Called with the text of every Activity entered on any thread (nothing when empty). The model
// probe's child process reports its phase this way (nn/model_probe.h).
void set_activity_listener(std::function<void(const std::string&)> listener);

// The run was stopped while a long phase was under way; what it had computed so far is dropped.
class Stopped : public std::runtime_error {
public:
    Stopped() : std::runtime_error("stopped") {}
};

// While alive, stop_requested() on this thread reads `flag` (null: never). Scopes nest.
class StopScope {
public:
    explicit StopScope(const std::atomic<bool>* flag);
    ~StopScope();
    StopScope(const StopScope&) = delete;
    StopScope& operator=(const StopScope&) = delete;

private:
    const std::atomic<bool>* previous_;
};

// The flag of this thread's innermost StopScope (nullptr outside any).
const std::atomic<bool>* current_stop_flag();
bool stop_requested();
inline void throw_if_stopped() {
    if (stop_requested()) throw Stopped();
}

}  // namespace liftlab
