// The one clock of the trainers' timings (step_seconds, solve_seconds).
#pragma once
#include <chrono>

namespace liftlab {

using Clock = std::chrono::steady_clock;

// Wall seconds from `start` until now.
inline double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace liftlab
