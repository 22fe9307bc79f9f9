// Median wall time of repeated calls, after a warm-up: robust to the odd slow repetition.
#pragma once
#include <algorithm>
#include <chrono>
#include <vector>

namespace liftlab::bench {

template <typename F>
double median_seconds_per_call(F&& f, int calls_per_rep, int reps, int warmup_calls) {
    for (int i = 0; i < warmup_calls; ++i) f();
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < calls_per_rep; ++i) f();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                    calls_per_rep);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

}  // namespace liftlab::bench
