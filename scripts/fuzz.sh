#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang) and runs each on its seed corpus.
# usage: scripts/fuzz.sh [SECONDS_PER_TARGET (default 10)] [TARGET ...]
#        scripts/fuzz.sh --long [TARGET ...]
#   scripts/fuzz.sh 10                 the CI smoke: every target for 10 s, the committed corpus and
#                                      every regression input (tests/fuzz/regressions/<target>)
#   FUZZ_RUNS=1000000 scripts/fuzz.sh 0 spec   a fixed number of executions instead of a time
#   scripts/fuzz.sh --long             depth: each target to FUZZ_RUNS executions (default 10⁶; the
#                                      TorchScript reader, LibTorch's loader behind it, at most
#                                      FUZZ_TORCHSCRIPT_SECONDS, default 3600), then the corpus
#                                      minimised into tests/fuzz/corpus/<target> (commit it) and
#                                      any crash copied to tests/fuzz/regressions/<target>; prints
#                                      executions and crashes per target
# New inputs go to build/fuzz/corpus/<target> (the committed seeds stay untouched); a crash
# leaves its reproducer in build/fuzz/artifacts/ and fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
long=0
if [ "${1:-}" = --long ]; then
  long=1
  shift
  seconds=0
else
  seconds=${1:-10}
  shift || true
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(spec csv idx cifar run_folder state torchscript)
if [ ! -f build/fuzz/build.ninja ]; then
  cmake -S tests/fuzz -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build build/fuzz -j 2 --target "${targets[@]/#/fuzz_}"
mkdir -p build/fuzz/artifacts
# LibTorch and its dependencies keep global allocations alive at exit.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export OMP_NUM_THREADS=1
declare -A executed crashed
status=0
for t in "${targets[@]}"; do
  mkdir -p "build/fuzz/corpus/$t" "tests/fuzz/regressions/$t"
  limit=(-max_total_time="$seconds")
  [ -n "${FUZZ_RUNS:-}" ] && limit=(-runs="$FUZZ_RUNS")
  if [ $long = 1 ]; then
    limit=(-runs="${FUZZ_RUNS:-1000000}")
    # LibTorch's archive reader runs ≈ 250 inputs/s: 10⁶ of them take ≈ 70 min alone.
    [ "$t" = torchscript ] && limit+=(-max_total_time="${FUZZ_TORCHSCRIPT_SECONDS:-3600}")
  fi
  # The TorchScript fuzzer's process grows by ≈ 8–30 MB per 1000 archives loaded (LibTorch keeps
  # memory after a torch::jit::load, pytorch/pytorch#53472; measured 2026-12-04): a long run needs
  # more than 4 GB.
  rss=4096
  [ $long = 1 ] && [ "$t" = torchscript ] && rss=12288
  echo "fuzz: $t (${limit[*]})"
  # A fixed seed (FUZZ_SEED, default 1) keeps the CI smoke reproducible; longer runs may vary it.
  rc=0
  "build/fuzz/fuzz_$t" "${limit[@]}" -seed="${FUZZ_SEED:-1}" -max_len=65536 -timeout=10 -rss_limit_mb="$rss" \
    -artifact_prefix="build/fuzz/artifacts/$t-" -print_final_stats=1 \
    "build/fuzz/corpus/$t" "tests/fuzz/corpus/$t" "tests/fuzz/regressions/$t" 2>"build/fuzz/$t.log" || rc=$?
  executed[$t]=$(grep -Eo "stat::number_of_executed_units: *[0-9]+" "build/fuzz/$t.log" | grep -Eo "[0-9]+$" || echo "?")
  crashed[$t]=0
  if [ $rc != 0 ]; then
    tail -40 "build/fuzz/$t.log"
    crashed[$t]=1
    status=1
    # The reproducer becomes a regression input, replayed by every later run (and the CI smoke).
    for a in build/fuzz/artifacts/"$t"-*; do
      [ -e "$a" ] && cp "$a" "tests/fuzz/regressions/$t/" && echo "fuzz: regression input $(basename "$a")"
    done
    echo "fuzz: $t FAILED" >&2
    [ $long = 1 ] || exit 1
  else
    grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "build/fuzz/$t.log" | tail -2
  fi
  if [ $long = 1 ] && [ $rc = 0 ]; then
    # Minimise: the smallest set of inputs with the same coverage replaces the generated part of
    # the committed corpus (inputs named by their hash); the hand-written, named seeds stay.
    rm -rf "build/fuzz/min-$t" && mkdir -p "build/fuzz/min-$t"
    "build/fuzz/fuzz_$t" -merge=1 -max_len=65536 -timeout=10 -rss_limit_mb=4096 "build/fuzz/min-$t" \
      "tests/fuzz/corpus/$t" "build/fuzz/corpus/$t" 2>"build/fuzz/$t.merge.log"
    find "tests/fuzz/corpus/$t" -maxdepth 1 -regextype posix-extended -regex '.*/[0-9a-f]{40}' -delete
    for f in "build/fuzz/min-$t"/*; do
      [ -e "tests/fuzz/corpus/$t/$(basename "$f")" ] || cp "$f" "tests/fuzz/corpus/$t/"
    done
    echo "fuzz: $t corpus minimised to $(ls "tests/fuzz/corpus/$t" | wc -l) inputs"
  fi
done
if [ $long = 1 ]; then
  printf '\n%-12s %14s %8s\n' target executions crashes
  for t in "${targets[@]}"; do printf '%-12s %14s %8s\n' "$t" "${executed[$t]}" "${crashed[$t]}"; done
fi
exit $status
