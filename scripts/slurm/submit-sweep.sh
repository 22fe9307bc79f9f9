#!/usr/bin/env bash
# Submits a sharded sweep and its merge job in one go (see sweep.sbatch).
# usage: scripts/slurm/submit-sweep.sh PRESET SHARDS OUT [extra sbatch options...]
#   RUN_ARGS="--set steps=500" scripts/slurm/submit-sweep.sh cf-batch-sweep 8 $PWD/runs/batch-sweep
# Prints the array job id and the merge job id.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 PRESET SHARDS OUT [sbatch options...]" >&2
  exit 2
fi
preset=$1 shards=$2 out=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
array=$(sbatch --parsable --array="0-$((shards - 1))" "$@" \
  --export="ALL,PRESET=$preset,SHARDS=$shards,OUT=$out" "$here/sweep.sbatch")
merge=$(sbatch --parsable --dependency="afterok:${array%%;*}" "$@" \
  --export="ALL,OUT=$out" "$here/sweep.sbatch")
echo "array job ${array%%;*} (${shards} shards), merge job ${merge%%;*}; results in $out"
