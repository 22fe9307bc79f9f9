#!/usr/bin/env bash
# Builds the benchmarks in the dev tree and prints LiftLab against Debian's PyTorch on the same
# training steps and thread counts, then the proximal-step cost table and the GUI figures.
# usage: bench/side_by_side.sh [TRAINING_QUADRATURE_NODES]   (after scripts/install-deps.sh)
# The ICNN steps use the training log Z rule's default 512 Gauss–Legendre nodes unless given.
# Every bench prints JSON lines of one schema (bench/check_bench_output.py); this script turns
# them into tables. Environment:
#   LIFTLAB_BENCH_JSON=FILE   also append every JSON line measured to FILE
#   LIFTLAB_BENCH_SMOKE=1     one call per timing, 1 thread, 1 s of GUI: a check that the benches
#                             run and their output parses, in seconds (ctest bench_smoke)
#   LIFTLAB_BENCH_BUILT=DIR   use the benches already built in DIR (no build)
set -euo pipefail
cd "$(dirname "$0")/.."
points=${1:-512}
if [ -n "${LIFTLAB_BENCH_BUILT:-}" ]; then
  bin=$LIFTLAB_BENCH_BUILT/bench
else
  bash scripts/build.sh dev liftlab-bench-steps liftlab-bench-prox liftlab-bench-icnn \
    liftlab-bench-gui >/dev/null
  bin=build/dev/bench
fi
thread_counts="1 2"
gui_seconds=15
if [ "${LIFTLAB_BENCH_SMOKE:-0}" != 0 ]; then thread_counts=1; gui_seconds=1; fi
# Both sides load the same OpenBLAS. Where it falls back to its SSE3 "Prescott" kernels on a CPU
# it does not know, the lab's front ends ask for better ones (engine/core/blas_core.h); the
# benchmarks get the same kernels, for LiftLab and PyTorch alike, through the environment.
if [ -z "${OPENBLAS_CORETYPE:-}" ] && [ "${LIFTLAB_BLAS_CORETYPE:-}" != keep ]; then
  core=$(/usr/bin/python3 -c 'import ctypes; f = ctypes.CDLL("libblas.so.3").openblas_get_corename
f.restype = ctypes.c_char_p; print(f().decode())' 2>/dev/null || true)
  flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
  has() { for f in "$@"; do [[ " $flags " == *" $f "* ]] || return 1; done; }
  if [ "$core" = Prescott ]; then
    if has avx512f avx512bw avx512dq avx512vl; then export OPENBLAS_CORETYPE=SkylakeX
    elif has avx2 fma; then export OPENBLAS_CORETYPE=Haswell; fi
  fi
fi
echo "OpenBLAS kernels: ${OPENBLAS_CORETYPE:-as detected}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
keep() {  # copies the JSON lines of $1 to LIFTLAB_BENCH_JSON when it is set
  if [ -n "${LIFTLAB_BENCH_JSON:-}" ]; then cat "$1" >>"$LIFTLAB_BENCH_JSON"; fi
}
ratios() {  # prints method, threads, LiftLab, PyTorch, ratio for two JSON-lines files
  keep "$2"
  keep "$3"
  /usr/bin/python3 - "$1" "$2" "$3" <<'PY'
import json, sys
def steps(path):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    return {d["method"]: d["results"]["steps_per_s"] for d in rows if d["case"] == "train_step"}
cpp, py = steps(sys.argv[2]), steps(sys.argv[3])
for m in cpp:
    a, b = cpp[m], py[m]
    print(f"{m:<8} {sys.argv[1]:>7} {a:>14.1f} {b:>14.1f} {a / b:>8.2f}")
PY
}
echo "== cf-regression training steps/s: LiftLab (LibTorch C++) vs PyTorch (python3-torch) =="
printf "%-8s %7s %14s %14s %8s\n" method threads liftlab pytorch ratio
for t in $thread_counts; do
  "$bin/liftlab-bench-steps" $t >"$tmp/cpp.json"
  # OpenBLAS's own pool at the same size as torch's, as LiftLab's set_compute_threads does (left
  # at one thread per core, its spinning workers slowed PyTorch 2.6× on a busy machine).
  OPENBLAS_NUM_THREADS=$t /usr/bin/python3 bench/reference_steps.py $t >"$tmp/py.json"
  ratios $t "$tmp/cpp.json" "$tmp/py.json"
done
echo
echo "== icnn-ebm-1d training steps/s ($points Gauss–Legendre nodes): LiftLab vs PyTorch =="
printf "%-8s %7s %14s %14s %8s\n" method threads liftlab pytorch ratio
for t in $thread_counts; do
  "$bin/liftlab-bench-icnn" $t "$points" >"$tmp/cpp.json"
  OPENBLAS_NUM_THREADS=$t /usr/bin/python3 bench/reference_icnn_step.py $t "$points" >"$tmp/py.json"
  ratios $t "$tmp/cpp.json" "$tmp/py.json"
done
/usr/bin/python3 - "$tmp/cpp.json" <<'PY'
import json, sys
for d in (json.loads(l) for l in open(sys.argv[1]) if l.strip()):
    if d["case"] == "readout_floor":
        r = d["results"]
        print(f"{d['method']}: readout passes alone {r['readout_ms']:.3f} ms of a "
              f"{r['step_ms']:.3f} ms step ({r['moved_mb']:.1f} MB, {r['readout_gb_per_s']:.1f} GB/s)")
PY
echo
echo "== proximal step vs gradient step (ms per step; ratio = prox / grad) =="
for t in $thread_counts; do
  "$bin/liftlab-bench-prox" $t >"$tmp/prox.json"
  keep "$tmp/prox.json"
  /usr/bin/python3 - "$tmp/prox.json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
p = rows[0]["params"]
print(f"threads={rows[0]['threads']}  backbone {p['input']}-{p['hidden']}-{p['hidden']}-d, "
      f"{p['outputs']} outputs, lambda={p['lambda']:g}")
cols = ["grad_ms", "prox_cholesky_ms", "prox_woodbury_ms", "w_first_ms", "cholesky_ratio",
        "woodbury_ratio", "w_first_ratio", "forward_ms", "solve_ms", "gram_ms", "factor_ms",
        "floor_ratio"]
print(f"{'d':>6} {'n':>5} " + " ".join(f"{c:>16}" for c in cols))
for d in rows:
    print(f"{d['params']['d']:>6} {d['params']['n']:>5} " +
          " ".join(f"{d['results'][c]:>16.3f}" for c in cols))
PY
  echo
done
echo
echo "== GUI responsiveness =="
# (its stderr is shown only when it fails: e.g. the fork and the landscape did not overlap)
"$bin/liftlab-bench-gui" "$gui_seconds" 2>"$tmp/gui.err" >"$tmp/gui.json" || {
  grep -v '^QStandardPaths\|propagateSizeHints' "$tmp/gui.err" >&2 || true
  exit 1
}
keep "$tmp/gui.json"
/usr/bin/python3 - "$tmp/gui.json" <<'PY'
import json, sys
for d in (json.loads(l) for l in open(sys.argv[1]) if l.strip()):
    p, r = d["params"], d["results"]
    if d["case"] == "event_loop":
        print(f"event loop while {p['methods']} methods train ({p['seconds']:g} s, "
              f"{p['points_plotted']} points plotted): median lateness "
              f"{r['median_lateness_ms']:.2f} ms, 99th percentile {r['p99_lateness_ms']:.2f} ms, "
              f"longest stall {r['longest_stall_ms']:.2f} ms (target < 20 ms: "
              f"{'met' if r['longest_stall_ms'] < 20 else 'NOT met'})")
    elif d["case"] == "event_loop_fork_landscape":
        print(f"event loop while a fork of icnn-landscape (after step {p['fork_step']}) trains "
              f"and its landscape ({p['grid_theta']}² θ, {p['grid_lifted']}² lifted cells) "
              f"computes ({r['measured_s']:.1f} s measured: landscape "
              f"{r['landscape_started_s']:.1f}–{r['landscape_finished_s']:.1f} s, fork "
              f"{r['fork_first_point_s']:.1f}–{r['fork_ended_s']:.1f} s): median lateness "
              f"{r['median_lateness_ms']:.2f} ms, 99th percentile {r['p99_lateness_ms']:.2f} ms, "
              f"longest stall {r['longest_stall_ms']:.2f} ms (target < 20 ms: "
              f"{'met' if r['longest_stall_ms'] < 20 else 'NOT met'})")
    if d["case"].startswith("event_loop"):
        print(f"  in the longest stall the GUI thread ran {r['longest_stall_gui_ran_ms']:.1f} ms "
              f"and waited {r['longest_stall_gui_waited_ms']:.1f} ms for a core; its longest "
              f"run between two ticks {r['longest_gui_run_ms']:.1f} ms, "
              f"CPU {100 * r['gui_cpu_ratio']:.1f} % of the time")
    elif d["case"].startswith("panel_replot"):
        print(f"  longest replot {p['panel']:<28} {r['longest_replot_ms']:7.2f} ms "
              f"({r['longest_replot_cpu_ms']:.2f} ms of GUI-thread CPU)")
    elif d["case"] == "curve_replot":
        print(f"curve panel, {p['points']} points at {p['width']}x{p['height']} ({p['runs']} runs): "
              f"median {r['median_ms']:.2f} ms, worst {r['worst_ms']:.2f} ms (target < 30 ms: "
              f"{'met (median)' if r['median_ms'] < 30 else 'NOT met'})")
PY
