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
