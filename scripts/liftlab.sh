#!/usr/bin/env bash
# The lab's main job: install what is missing, build, and open the GUI. Without a display, run the
# default comparison (cf-regression: adam, sgd, cf-ridge, cf-prox) headless and say where the run
# folder and its figures are. Extra arguments go to the GUI.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh dev liftlab liftlab-cli
bin=build/dev/app
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec "$bin/gui/liftlab" "$@"
fi
echo "liftlab: no display found; running the default comparison headless (cf-regression)."
dir=$("$bin/cli/liftlab-cli" run cf-regression --out runs)
echo
echo "Run folder:  $dir"
echo "Figures:     $dir/figures/test_loss.png  $dir/figures/train_loss.png"
echo "Summary:     $dir/summary.json"
