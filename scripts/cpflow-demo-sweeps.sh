#!/usr/bin/env bash
# The reference's two 2-D CP-Flow sweeps (presets cpflow-demo-2d and cpflow-demo-2d-symmetric,
# 100 seeds each, on 8gaussians-demo and 2spirals-demo), spread over SHARDS shards per sweep with
# `liftlab-cli run --shard K/N` and joined with `liftlab-cli merge`. One process at a time (each
# runs two seeds side by side on the preset's 2 threads), under `nice -n ${NICE:-19}`. Re-running
# the script skips finished shards and resumes a killed one in its own folder, so it can be
# stopped and started at will. Each sweep ends in OUT/<preset>-<target>/merged/<run> with the
# report's figures (figures/final_loss_histogram.png: the final test NLL over seeds per arm) and
# scripts/cpflow-demo-stats.py's table (stats.md) beside it; each shard's progress goes to
# OUT/<preset>-<target>/shard-K-of-N.log.
#
# usage: scripts/cpflow-demo-sweeps.sh OUT_DIR [SHARDS [liftlab-cli run options...]]
#   e.g. scripts/cpflow-demo-sweeps.sh runs/cpflow-sweeps 10
#        scripts/cpflow-demo-sweeps.sh /tmp/smoke 2 --seeds 2 --steps 20   (a quick rehearsal)
# environment: LIFTLAB_CLI (default build/dev/app/cli/liftlab-cli), NICE (default 19),
#              PRESETS, TARGETS (space-separated subsets of the defaults).
# Where Linux groups processes by session for scheduling (autogroup, the default on most desktops:
# /proc/sys/kernel/sched_autogroup_enabled = 1), nice ranks processes only within one session:
# a sweep started in its own terminal or with setsid still takes an equal share beside another
# session's work. To make it yield, set its session's nice too: echo 19 > /proc/<pid>/autogroup.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: scripts/cpflow-demo-sweeps.sh OUT_DIR [SHARDS [run options...]]}
shards=${2:-10}
shift $(($# < 2 ? $# : 2))
cli=${LIFTLAB_CLI:-$root/build/dev/app/cli/liftlab-cli}
level=${NICE:-19}
presets=${PRESETS:-cpflow-demo-2d cpflow-demo-2d-symmetric}
targets=${TARGETS:-8gaussians-demo 2spirals-demo}
[ -x "$cli" ] || { echo "no liftlab-cli at $cli (build it, or set LIFTLAB_CLI)" >&2; exit 2; }
cli=$(realpath "$cli")
out=$(realpath -m "$out")
# A folder named like a preset in the working directory would be read as the spec: run from /.
cd /
[[ $shards =~ ^[1-9][0-9]*$ ]] || { echo "SHARDS must be a positive integer" >&2; exit 2; }

status_of() {  # a run folder's summary status ("none" when it has no summary yet)
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$1/summary.json" \
    2>/dev/null || echo none
}

stamp() { date '+%F %T'; }

for preset in $presets; do
  for target in $targets; do
    dir=$out/$preset-$target
    mkdir -p "$dir/shards"
    for ((k = 0; k < shards; k++)); do
      finished="" partial=""
      for d in "$dir/shards/$preset-shard${k}of${shards}-"*; do
        [ -d "$d" ] || continue
        if [ "$(status_of "$d")" = ok ]; then finished=$d; else partial=$d; fi
      done
      [ -n "$finished" ] && continue
      if [ -n "$partial" ]; then
        echo "$(stamp) $preset $target shard $k/$shards: resuming $partial"
        nice -n "$level" "$cli" run --resume "$partial" >/dev/null 2>>"$dir/shard-$k-of-$shards.log"
      else
        echo "$(stamp) $preset $target shard $k/$shards: start"
        nice -n "$level" "$cli" run "$preset" --set "task.target=$target" --shard "$k/$shards" \
          --out "$dir/shards" "$@" >/dev/null 2>>"$dir/shard-$k-of-$shards.log"
      fi
    done
    shard_dirs=()
    for ((k = 0; k < shards; k++)); do
      for d in "$dir/shards/$preset-shard${k}of${shards}-"*; do
        [ "$(status_of "$d")" = ok ] && shard_dirs+=("$d")
      done
    done
    # A merged run newer than every shard is kept: a restarted driver does not replace the folder
    # that claims folders (`liftlab-cli claims --reuse`) already name.
    kept=""
    for m in "$dir/merged/"*/; do
      [ -d "$m" ] && [ "$(status_of "$m")" = ok ] || continue
      kept=${m%/}
      for d in "${shard_dirs[@]}"; do
        [ "$m/summary.json" -nt "$d/summary.json" ] || kept=""
      done
    done
    if [ -n "$kept" ]; then
      echo "$(stamp) $preset $target merged (kept): $kept"
      continue
    fi
    rm -rf "$dir/merged"
    merged=$(nice -n "$level" "$cli" merge "${shard_dirs[@]}" --out "$dir/merged")
    nice -n "$level" "$cli" report "$merged" >/dev/null 2>>"$dir/report.log"
    python3 "$root/scripts/cpflow-demo-stats.py" "$merged" > "$merged/stats.md"
    echo "$(stamp) $preset $target merged: $merged"
  done
done
