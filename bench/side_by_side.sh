#!/usr/bin/env bash
# Builds the benchmarks in the dev tree and prints LiftLab against Debian's PyTorch on the same
# training steps and thread counts, then the proximal-step cost table.
# usage: bench/side_by_side.sh   (after scripts/install-deps.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh dev liftlab-bench-steps liftlab-bench-prox liftlab-bench-gui >/dev/null
bin=build/dev/bench
echo "== training steps/s: LiftLab (LibTorch C++) vs PyTorch (python3-torch), same algorithm =="
printf "%-8s %7s %14s %14s %8s\n" method threads liftlab pytorch ratio
for t in 1 2; do
  "$bin/liftlab-bench-steps" $t >/tmp/liftlab-bench-cpp.json
  /usr/bin/python3 bench/reference_steps.py $t >/tmp/liftlab-bench-py.json
  /usr/bin/python3 - "$t" <<'PY'
import json, sys
cpp = {d["method"]: d for d in map(json.loads, open("/tmp/liftlab-bench-cpp.json"))}
py = {d["method"]: d for d in map(json.loads, open("/tmp/liftlab-bench-py.json"))}
for m in cpp:
    a, b = cpp[m]["steps_per_s"], py[m]["steps_per_s"]
    print(f"{m:<8} {sys.argv[1]:>7} {a:>14.1f} {b:>14.1f} {a / b:>8.2f}")
PY
done
echo
echo "== proximal step vs gradient step (ms per step; ratio = prox / grad) =="
for t in 1 2; do "$bin/liftlab-bench-prox" $t; echo; done
echo
echo "== GUI responsiveness =="
"$bin/liftlab-bench-gui" 15 2>/dev/null
