#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang) and runs each on its seed corpus.
# usage: scripts/fuzz.sh [SECONDS_PER_TARGET (default 10)] [TARGET ...]
#   scripts/fuzz.sh 10                 the CI smoke: every target for 10 s
#   FUZZ_RUNS=1000000 scripts/fuzz.sh 0 spec   a fixed number of executions instead of a time
# New inputs go to build/fuzz/corpus/<target> (the committed seeds stay untouched); a crash
# leaves its reproducer in build/fuzz/artifacts/ and fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(spec csv idx cifar run_folder)
if [ ! -f build/fuzz/build.ninja ]; then
  cmake -S tests/fuzz -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build build/fuzz -j 2 --target "${targets[@]/#/fuzz_}"
mkdir -p build/fuzz/artifacts
# LibTorch and its dependencies keep global allocations alive at exit.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export OMP_NUM_THREADS=1
for t in "${targets[@]}"; do
  mkdir -p "build/fuzz/corpus/$t"
  limit=(-max_total_time="$seconds")
  [ -n "${FUZZ_RUNS:-}" ] && limit=(-runs="$FUZZ_RUNS")
  echo "fuzz: $t (${FUZZ_RUNS:-$seconds s})"
  # A fixed seed (FUZZ_SEED, default 1) keeps the CI smoke reproducible; longer runs may vary it.
  "build/fuzz/fuzz_$t" "${limit[@]}" -seed="${FUZZ_SEED:-1}" -max_len=65536 -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix="build/fuzz/artifacts/$t-" -print_final_stats=1 \
    "build/fuzz/corpus/$t" "tests/fuzz/corpus/$t" 2>"build/fuzz/$t.log" \
    || { tail -40 "build/fuzz/$t.log"; echo "fuzz: $t FAILED" >&2; exit 1; }
  grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "build/fuzz/$t.log" | tail -2
done
