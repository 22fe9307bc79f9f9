// Median wall time of repeated calls, after a warm-up: robust to the odd slow repetition.
// With LIFTLAB_BENCH_SMOKE set (not "0") every timing is one call, no warm-up: the numbers are
// then meaningless, but each bench runs in seconds and its output can be checked (ctest
// bench_smoke).
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace liftlab::bench {

inline bool smoke() {
    const char* v = std::getenv("LIFTLAB_BENCH_SMOKE");
    return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

template <typename F>
double median_seconds_per_call(F&& f, int calls_per_rep, int reps, int warmup_calls) {
    if (smoke()) calls_per_rep = reps = 1, warmup_calls = 0;
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
