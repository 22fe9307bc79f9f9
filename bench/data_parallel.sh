#!/usr/bin/env bash
# Data-parallel scaling on this machine: liftlab-bench-ddp at 1 rank (1 and 2 threads) and at 2
# ranks × 1 thread, all on 127.0.0.1. Prints rank 0's JSON lines and a table.
# usage: bench/data_parallel.sh [--batch B] [--n-full N] [--feature-dim D]
# LIFTLAB_BENCH_JSON, LIFTLAB_BENCH_SMOKE and LIFTLAB_BENCH_BUILT as in bench/side_by_side.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${LIFTLAB_BENCH_BUILT:-}" ]; then
  bin=$LIFTLAB_BENCH_BUILT/bench/liftlab-bench-ddp
else
  bash scripts/build.sh dev liftlab-bench-ddp >/dev/null
  bin=build/dev/bench/liftlab-bench-ddp
fi
out=$(mktemp)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
export OMP_WAIT_POLICY=PASSIVE
"$bin" --rank 0 --world-size 1 --threads 1 "$@" >>"$out"
"$bin" --rank 0 --world-size 1 --threads 2 "$@" >>"$out"
p=$(port)
"$bin" --rank 1 --world-size 2 --port "$p" --threads 1 "$@" >/dev/null &
"$bin" --rank 0 --world-size 2 --port "$p" --threads 1 "$@" >>"$out"
wait
cat "$out"
if [ -n "${LIFTLAB_BENCH_JSON:-}" ]; then cat "$out" >>"$LIFTLAB_BENCH_JSON"; fi
python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"\n{'case':<6} {'method':<8} {'ranks':>5} {'thr':>4} {'per_s':>9} {'sent B/step':>12} {'grad B':>10} {'gather B':>10}")
for d in rows:
    p, r = d["params"], d["results"]
    if d["case"] == "statistics_bytes":
        print(f"closed-form statistics per step (d={p['feature_dim']}, k={p['outputs']}): {r['statistics_bytes']} B")
        continue
    print(f"{d['case']:<6} {d['method']:<8} {p['ranks']:>5} {d['threads']:>4} {r['steps_per_s']:>9.2f} "
          f"{r['sent_bytes']:>12} {r['gradient_bytes']:>10} {r['gather_bytes']:>10}")
PY
rm -f "$out"
