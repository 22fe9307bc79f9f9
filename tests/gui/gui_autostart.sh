#!/usr/bin/env bash
# The GUI binary end to end, as a user would script it: autostart a short ICNN preset, export every
# panel when it ends, quit by itself with status 0; the figures must exist and be non-trivial.
# usage: gui_autostart.sh LIFTLAB_BINARY
set -euo pipefail
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export QT_QPA_PLATFORM=offscreen XDG_CONFIG_HOME="$work/config" OMP_WAIT_POLICY=PASSIVE
"$bin" --preset icnn-landscape --steps 30 --autostart --out "$work/runs" \
  --export-all "$work/figures" --screenshot "$work/window.png" --quit-when-done > "$work/out.txt"
for f in curves escape; do
  test -s "$work/figures/$f.png" || { echo "missing $f.png"; ls "$work/figures"; exit 1; }
  size=$(stat -c %s "$work/figures/$f.png")
  [ "$size" -gt 5000 ] || { echo "$f.png is only $size bytes"; exit 1; }
done
test -s "$work/window.png"
ls "$work"/runs/icnn-landscape-*/summary.json > /dev/null
echo "gui autostart: $(wc -l < "$work/out.txt") figures exported"

# --model: a user's TorchScript ICNN with its constrained weights, run to the end; bad uses exit 2.
models=$(cd "$(dirname "$0")/../../resources/models" && pwd)
"$bin" --preset icnn-ebm-1d --model "$models/icnn_1d.pt" --constrained wz1,wz2,w_out --steps 20 \
  --autostart --out "$work/byo" --quit-when-done
grep -q '"status": "ok"' "$work"/byo/icnn-ebm-1d-*/summary.json
ls "$work"/byo/icnn-ebm-1d-*/models/lifter_seed0.pt > /dev/null
expect2() {  # expect2 PATTERN ARGS...: exit 2 with the message
  local rc=0
  "$bin" "${@:2}" --quit-when-done > /dev/null 2> "$work/err.txt" || rc=$?
  [ $rc -eq 2 ] || { echo "exit $rc, expected 2: ${*:2}"; cat "$work/err.txt"; exit 1; }
  grep -q "$1" "$work/err.txt" || { echo "no '$1' in: $(cat "$work/err.txt")"; exit 1; }
}
expect2 "has no parameter 'wz9'" --preset icnn-ebm-1d --model "$models/icnn_1d.pt" --constrained wz1,wz9
expect2 "takes no model of yours" --preset cpflow-toy --model "$models/icnn_1d.pt"
expect2 "not a TorchScript archive" --preset cf-regression --model "$0"
echo "gui --model: ok"

# --help lists every tab (the keys --tab takes, with what each shows).
"$bin" --help > "$work/help.txt"
keys=$({ "$bin" --tab no-such-tab --quit-when-done 2>&1 >/dev/null || true; } |
  sed -n 's/.*--tab must be one of //p' |
  tr ',' '\n' | sed 's/ (.*//; s/^ *//')
[ -n "$keys" ] || { echo "no tab list from --tab"; exit 1; }
for k in $keys; do
  grep -q "^  $k " "$work/help.txt" || { echo "--help does not list tab '$k'"; cat "$work/help.txt"; exit 1; }
done
echo "gui --help: lists $(echo "$keys" | wc -w) tabs"
