#!/usr/bin/env bash
# Load (issue 31): eight liftlab-cli runs and the window, started together on the same --out with
# the same spec (so their folders' names collide to the second). Every run must get its own
# folder, end ok, and hold every row: the nine metrics.csv files are identical but for timings.
# usage: load.sh LIFTLAB_CLI LIFTLAB_GUI WORKDIR
set -euo pipefail
cli=$1 gui=$2 work=$3
py=/usr/bin/python3
export QT_QPA_PLATFORM=offscreen OMP_WAIT_POLICY=PASSIVE
rm -rf "$work" && mkdir -p "$work" && cd "$work"
export XDG_CONFIG_HOME="$work/config"
fail() { echo "FAIL: $*" >&2; exit 1; }
spec=(--steps 150 --set log_every=10 --set task.n_train=1024 --set diagnostics.spectrum_every=50)
pids=()
for i in 1 2 3 4 5 6 7 8; do
  "$cli" run cf-regression "${spec[@]}" --out shared >"cli$i.out" 2>"cli$i.err" &
  pids+=($!)
done
timeout 300 "$gui" --preset cf-regression --steps 150 --out shared --autostart --quit-when-done \
  >gui.out 2>gui.err &
pids+=($!)
for p in "${pids[@]}"; do wait "$p" || fail "a process failed: $(tail -3 ./*.err)"; done
n=$(find shared -mindepth 1 -maxdepth 1 -type d ! -name '.*' | wc -l)
[ "$n" = 9 ] || fail "$n run folders for 9 runs: $(ls shared)"
leftover=$(find shared -mindepth 1 -maxdepth 1 -name '.*' | wc -l)
[ "$leftover" = 0 ] || fail "staging folders left behind: $(ls -a shared)"
for i in 1 2 3 4 5 6 7 8; do
  d=$(tail -1 "cli$i.out")
  [ -d "$d" ] || fail "cli $i printed '$d', not a folder"
  echo "$d" >> folders.txt
done
[ "$(sort -u folders.txt | wc -l)" = 8 ] || fail "two runs printed the same folder: $(cat folders.txt)"
"$py" - shared folders.txt <<'PY' || fail "rows differ between the runs"
import csv, json, os, sys
shared = sys.argv[1]
folders = sorted(os.path.join(shared, d) for d in os.listdir(shared) if not d.startswith("."))
def rows(d):
    with open(os.path.join(d, "metrics.csv"), newline="") as f:
        return [r for r in csv.reader(f) if r[3] not in ("time_s", "solve_fraction")]
cli = sorted(os.path.normpath(l.strip()) for l in open(sys.argv[2]))
window = [d for d in folders if os.path.normpath(d) not in cli]
assert len(window) == 1, window
ref = rows(cli[0])
for d in folders:
    s = json.load(open(os.path.join(d, "summary.json")))
    assert s["status"] == "ok", (d, s["status"])
for d in cli:
    assert rows(d) == ref, f"{d}: rows differ from {cli[0]}"
# The window's run (the form's spec: the preset with 150 steps): every log point of every method.
spec = json.load(open(os.path.join(window[0], "spec.json")))
steps = [int(r[0]) for r in rows(window[0])[1:] if r[3] == "test_loss"]
want = len(spec["methods"]) * len(range(spec["log_every"], spec["steps"] + 1, spec["log_every"]))
assert len(steps) >= want, (window[0], len(steps), want)
print(f"{len(folders)} folders; the 8 CLI runs' {len(ref) - 1} rows identical; the window's complete")
PY
echo "ok: 8 CLI runs and the window on one --out"
