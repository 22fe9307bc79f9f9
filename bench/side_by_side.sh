#!/usr/bin/env bash
# Builds the benchmarks in the dev tree and prints LiftLab against Debian's PyTorch on the same
# training steps and thread counts, then the proximal-step cost table and the GUI figures.
# usage: bench/side_by_side.sh [TRAINING_QUADRATURE_NODES]   (after scripts/install-deps.sh)
# The ICNN steps use the training log Z rule's default 512 Gauss–Legendre nodes unless given.
set -euo pipefail
cd "$(dirname "$0")/.."
points=${1:-512}
bash scripts/build.sh dev liftlab-bench-steps liftlab-bench-prox liftlab-bench-icnn \
  liftlab-bench-gui >/dev/null
bin=build/dev/bench
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
ratios() {  # prints method, threads, LiftLab, PyTorch, ratio for two JSON-lines files
  /usr/bin/python3 - "$1" "$2" "$3" <<'PY'
import json, sys
cpp = {d["method"]: d for d in map(json.loads, open(sys.argv[2]))}
py = {d["method"]: d for d in map(json.loads, open(sys.argv[3]))}
for m in cpp:
    a, b = cpp[m]["steps_per_s"], py[m]["steps_per_s"]
    print(f"{m:<8} {sys.argv[1]:>7} {a:>14.1f} {b:>14.1f} {a / b:>8.2f}")
PY
}
echo "== cf-regression training steps/s: LiftLab (LibTorch C++) vs PyTorch (python3-torch) =="
printf "%-8s %7s %14s %14s %8s\n" method threads liftlab pytorch ratio
for t in 1 2; do
  "$bin/liftlab-bench-steps" $t >"$tmp/cpp.json"
  # OpenBLAS's own pool at the same size as torch's, as LiftLab's set_compute_threads does (left
  # at one thread per core, its spinning workers slowed PyTorch 2.6× on a busy machine).
  OPENBLAS_NUM_THREADS=$t /usr/bin/python3 bench/reference_steps.py $t >"$tmp/py.json"
  ratios $t "$tmp/cpp.json" "$tmp/py.json"
done
echo
echo "== icnn-ebm-1d training steps/s ($points Gauss–Legendre nodes): LiftLab vs PyTorch =="
printf "%-8s %7s %14s %14s %8s\n" method threads liftlab pytorch ratio
for t in 1 2; do
  "$bin/liftlab-bench-icnn" $t "$points" >"$tmp/cpp.json"
  OPENBLAS_NUM_THREADS=$t /usr/bin/python3 bench/reference_icnn_step.py $t "$points" >"$tmp/py.json"
  ratios $t "$tmp/cpp.json" "$tmp/py.json"
done
echo
echo "== proximal step vs gradient step (ms per step; ratio = prox / grad) =="
for t in 1 2; do "$bin/liftlab-bench-prox" $t; echo; done
echo
echo "== GUI responsiveness =="
"$bin/liftlab-bench-gui" 15 2>/dev/null
