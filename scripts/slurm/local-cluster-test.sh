#!/usr/bin/env bash
# Opt-in (not in ctest): starts a one-node Slurm cluster with munge on localhost, runs
# sweep.sbatch (4 shards + the dependent merge) and ddp.sbatch (2 ranks on the one node) through
# it, checks the results, and stops the daemons it started. Needs root (slurmd runs jobs as their
# user and manages cgroups-free process tracking here) and Debian's slurmctld, slurmd,
# slurm-client and munge:
#   apt-get install --no-install-recommends slurmctld slurmd slurm-client munge
# usage: scripts/slurm/local-cluster-test.sh [BUILD_DIR]     (default build/dev)
# Everything lives in a temporary folder; only 127.0.0.1 is used.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$repo/build/dev}" && pwd)
cli="$build/app/cli/liftlab-cli"
[ -x "$cli" ] || { echo "local-cluster-test: no $cli; build liftlab-cli first" >&2; exit 2; }
for tool in slurmctld slurmd sbatch squeue sinfo munged; do
  command -v "$tool" >/dev/null || {
    echo "local-cluster-test: '$tool' missing: apt-get install --no-install-recommends slurmctld slurmd slurm-client munge" >&2
    exit 2
  }
done
[ "$(id -u)" = 0 ] || { echo "local-cluster-test: run as root (slurmd must start jobs)" >&2; exit 2; }

tmp=$(mktemp -d /tmp/liftlab-slurm.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 1
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  echo "local-cluster-test: logs kept in $tmp"
}
trap cleanup EXIT

# munge: a private key and socket, so the system's munge (if any) is untouched.
mkdir -p "$tmp/munge" "$tmp/spool" "$tmp/state" "$tmp/out"
chmod 700 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
munged --force --key-file "$tmp/munge/munge.key" --socket "$tmp/munge/munge.socket" \
  --pid-file "$tmp/munge/munged.pid" --log-file "$tmp/munge/munged.log" \
  --seed-file "$tmp/munge/munged.seed"
sleep 1
pids+=("$(cat "$tmp/munge/munged.pid")")

cpus=$(nproc)
cat > "$tmp/slurm.conf" <<CONF
ClusterName=liftlab-local
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
export SLURM_CONF="$tmp/slurm.conf"
slurmctld -f "$SLURM_CONF" -i
slurmd -f "$SLURM_CONF" -N localhost
sleep 2
pids+=("$(cat "$tmp/slurmctld.pid")" "$(cat "$tmp/slurmd.pid")")
for _ in $(seq 30); do
  state=$(sinfo -h -o %T 2>/dev/null || true)
  [[ "$state" == idle* ]] && break
  sleep 1
done
echo "local-cluster-test: node state: $(sinfo -h -o '%N %T %c')"

wait_for_jobs() {
  for _ in $(seq "$1"); do
    [ -z "$(squeue -h 2>/dev/null)" ] && return 0
    sleep 2
  done
  echo "local-cluster-test: jobs still queued after $((2 * $1)) s:" >&2
  squeue >&2
  return 1
}

cd "$tmp/out"
export LIFTLAB_CLI="$cli" QT_QPA_PLATFORM=offscreen
# A short sweep: 2 batch sizes × 2 seeds = 4 cells over 4 array tasks.
export RUN_ARGS="--steps 40 --seeds 2 --set log_every=20 --set sweep.values=[8,32]"
t0=$(date +%s)
bash "$repo/scripts/slurm/submit-sweep.sh" cf-batch-sweep 4 "$tmp/out/sweep" --cpus-per-task=1
wait_for_jobs 300
merged=$(ls -d "$tmp"/out/sweep/cf-batch-sweep-* 2>/dev/null | head -n 1 || true)
[ -n "$merged" ] || { echo "FAIL: no merged sweep folder"; cat "$tmp"/out/liftlab-sweep-*.out; exit 1; }
runs=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['runs']))" "$merged/summary.json")
echo "local-cluster-test: sweep merged in $(( $(date +%s) - t0 )) s: $merged ($runs runs)"
[ "$runs" = 12 ] || { echo "FAIL: expected 12 runs (2 values x 2 seeds x 3 methods)"; exit 1; }

t0=$(date +%s)
sbatch --parsable --nodes=1 --ntasks-per-node=2 --cpus-per-task=1 \
  --export="ALL,PRESET=cf-regression,OUT=$tmp/out/ddp,RUN_ARGS=--steps 60 --set log_every=20" \
  "$repo/scripts/slurm/ddp.sbatch"
wait_for_jobs 300
ddp=$(ls -d "$tmp"/out/ddp/cf-regression-* 2>/dev/null | head -n 1 || true)
[ -n "$ddp" ] || { echo "FAIL: no data-parallel run folder"; cat "$tmp"/out/liftlab-ddp-*.out; exit 1; }
world=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['world_size'])" "$ddp/spec.json")
echo "local-cluster-test: ddp run in $(( $(date +%s) - t0 )) s: $ddp (world_size $world)"
[ "$world" = 2 ] || { echo "FAIL: expected world_size 2"; exit 1; }
cat "$tmp"/out/liftlab-ddp-*.out
echo "local-cluster-test: OK"
