#!/usr/bin/env bash
# liftlab-cli beyond one machine, end to end on 127.0.0.1: two data-parallel ranks (explicit
# options and torchrun variables), a sharded sweep merged back, and the options' error messages.
# usage: cli_scale_out.sh SCENARIO LIFTLAB_CLI WORKDIR
set -euo pipefail
scenario=$1 cli=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work"
py=/usr/bin/python3

fail() { echo "FAIL [$scenario]: $*" >&2; exit 1; }
json_check() { "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" \
  || fail "$1 does not satisfy: $2"; }
free_port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
small=(--steps 40 --set log_every=20 --set batch_size=64 --set task.n_train=1024 --set task.n_test=256
       --set diagnostics.one_step_every=0 --set diagnostics.spectrum_every=20)

case "$scenario" in
data_parallel)
  one=$("$cli" run cf-regression "${small[@]}" --out one 2>one.err) || { cat one.err; fail "one process"; }
  port=$(free_port)
  "$cli" run cf-regression "${small[@]}" --out two --rank 1 --world-size 2 \
    --master "127.0.0.1:$port" --dist-timeout 60 >rank1.out 2>rank1.err &
  pid=$!
  two=$("$cli" run cf-regression "${small[@]}" --out two --rank 0 --world-size 2 \
    --master "127.0.0.1:$port" --dist-timeout 60 2>rank0.err) || { cat rank0.err rank1.err; fail "rank 0"; }
  wait $pid || { cat rank1.err; fail "rank 1 exited non-zero"; }
  [ ! -s rank1.out ] || fail "rank 1 printed a run folder: $(cat rank1.out)"
  [ "$(ls two | wc -l)" = 1 ] || fail "expected one run folder from two ranks: $(ls two)"
  json_check "$two/spec.json" 'd["world_size"]==2 and d["batch_size"]==64'
  json_check "$one/spec.json" 'd["world_size"]==1'
  # Same global batches: the closed forms agree closely, the gradient methods to float round-off.
  "$py" - "$one/summary.json" "$two/summary.json" <<'PY' || fail "two ranks differ from one process"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for ra, rb in zip(a["runs"], b["runs"]):
    x, y = ra["final"]["test_loss"], rb["final"]["test_loss"]
    assert ra["method"] == rb["method"] and rb["status"] == "ok", (ra, rb)
    assert abs(x - y) <= 1e-3 * abs(x), (ra["method"], x, y)
PY
  # torchrun's variables instead of options.
  port=$(free_port)
  RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    "$cli" run cf-regression "${small[@]}" --out env >/dev/null 2>env1.err &
  pid=$!
  env_dir=$(RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    "$cli" run cf-regression "${small[@]}" --out env 2>env0.err) || { cat env0.err; fail "torchrun rank 0"; }
  wait $pid || { cat env1.err; fail "torchrun rank 1"; }
  grep -q "rank 0 of 2 (torchrun)" env0.err || fail "rank 0 did not read torchrun variables: $(cat env0.err)"
  json_check "$env_dir/spec.json" 'd["world_size"]==2'
  ;;
dead_rank)
  # Rank 1 is killed mid-run: rank 0 must stop with a message, not hang.
  port=$(free_port)
  "$cli" run cf-regression --steps 100000 --set log_every=50 --out dead --rank 1 --world-size 2 \
    --master "127.0.0.1:$port" --dist-timeout 30 >/dev/null 2>rank1.err &
  pid1=$!
  "$cli" run cf-regression --steps 100000 --set log_every=50 --out dead --rank 0 --world-size 2 \
    --master "127.0.0.1:$port" --dist-timeout 30 >/dev/null 2>rank0.err &
  pid0=$!
  for _ in $(seq 1 150); do
    f=$(ls dead/*/metrics.csv 2>/dev/null | head -1 || true)
    [ -n "$f" ] && [ "$(wc -l <"$f")" -gt 5 ] && break
    sleep 0.2
  done
  kill -9 $pid1
  t0=$(date +%s)
  set +e
  wait $pid0; rc=$?
  set -e
  [ $rc -ne 0 ] || fail "rank 0 exited 0 after its peer died"
  [ $(( $(date +%s) - t0 )) -le 35 ] || fail "rank 0 took more than the timeout to stop"
  grep -q "another rank died" rank0.err || fail "no clear message: $(cat rank0.err)"
  ;;
shard_resume)
  # A killed shard resumes its own cells (its states are unit1, unit3, …: not a prefix from unit 0)
  # to the rows of the uninterrupted shard, and runs no cell of another shard.
  # 600 steps: unit 3's first state comes at step 20, so the kill (polled every 20 ms) has
  # 580 steps to land in, even on a fast machine beside another test.
  spec=(cf-regression --steps 600 --seeds 4 --shard 1/2 --set log_every=20 --set threads=1
        --set save_state_seconds=0 --set task.n_train=1024 --set task.n_test=256
        --set diagnostics.one_step_every=0 --set diagnostics.spectrum_every=100)
  ref=$("$cli" run "${spec[@]}" --out ref 2>/dev/null) || fail "uninterrupted shard"
  "$cli" run "${spec[@]}" --out killed >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 1 1500); do  # killed inside seed 3's unit, after seed 1's finished
    compgen -G "killed/*/resume/unit3.state" >/dev/null && break
    sleep 0.02
  done
  kill -9 $pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
  dir=$(ls -d killed/*/)
  dir=${dir%/}
  [ -f "$dir/resume/unit3.state" ] || fail "the run ended before the kill: no state of unit 3"
  json_check "$dir/summary.json" 'd["status"]!="ok"'
  "$cli" run --resume "$dir" >/dev/null 2>resume.err || { cat resume.err; fail "resume of a shard"; }
  "$py" "$here/kill_check.py" resumed "$ref" "$dir" || fail "the resumed shard differs from the uninterrupted one"
  ! cut -d, -f3 "$dir/metrics.csv" | grep -qx '[02]' || fail "the resumed shard ran another shard's seeds"
  ;;
shard_merge)
  sweep=(--steps 20 --set log_every=10 --seeds 2 --set "sweep.values=[8,32]")
  whole=$("$cli" run cf-batch-sweep "${sweep[@]}" --out whole 2>/dev/null) || fail "unsharded run"
  for k in 0 1 2 3; do
    "$cli" run cf-batch-sweep "${sweep[@]}" --out shards --shard "$k/4" >/dev/null 2>shard$k.err \
      || { cat shard$k.err; fail "shard $k"; }
  done
  grep -q "shard 2/4" shard2.err || fail "no shard line: $(cat shard2.err)"
  merged=$("$cli" merge shards/* --out merged 2>merge.err) || { cat merge.err; fail "merge"; }
  "$py" - "$whole/summary.json" "$merged/summary.json" <<'PY' || fail "merged sweep differs from the unsharded one"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
strip = lambda r: {**r, "final": {k: v for k, v in r["final"].items() if k not in ("time_s", "solve_fraction")}}
assert a["status"] == b["status"]
assert [strip(r) for r in a["runs"]] == [strip(r) for r in b["runs"]]
PY
  "$cli" report "$merged" >/dev/null 2>report.err || { cat report.err; fail "report of the merged run"; }
  # Shards of another spec are refused, naming the key.
  "$cli" run cf-batch-sweep "${sweep[@]}" --set methods.cf-prox.lambda=5 --out other --shard 3/4 \
    >/dev/null 2>/dev/null || fail "other shard"
  set +e
  "$cli" merge shards/*shard0of4* shards/*shard1of4* shards/*shard2of4* other/* --out bad 2>bad.err; rc=$?
  set -e
  [ $rc -eq 2 ] || fail "merge of different specs: exit $rc"
  grep -q "different spec" bad.err && grep -q "lambda" bad.err || fail "message: $(cat bad.err)"
  ;;
bad_args)
  expect() {  # expect EXIT_CODE MESSAGE_PART COMMAND...
    local code=$1 part=$2 rc
    shift 2
    set +e
    "$@" >/dev/null 2>err.txt; rc=$?
    set -e
    [ $rc -eq "$code" ] || fail "'$*': exit $rc, expected $code: $(cat err.txt)"
    grep -q -- "$part" err.txt || fail "'$*': message lacks '$part': $(cat err.txt)"
  }
  expect 2 "K/N" "$cli" run cf-regression --shard 4/4
  expect 2 "K/N" "$cli" run cf-regression --shard x
  expect 2 "go together" "$cli" run cf-regression --rank 1
  expect 2 "not below --world-size" "$cli" run cf-regression --rank 2 --world-size 2
  expect 2 "RANK" env RANK=x WORLD_SIZE=2 "$cli" run cf-regression
  expect 2 "needs one or more" "$cli" merge
  expect 2 "is not a shard" "$cli" merge "$("$cli" run cf-regression --steps 2 --set log_every=1 --out plain 2>/dev/null)"
  # A lone rank gives up at the rendezvous after --dist-timeout.
  expect 3 "could not join the process group" timeout 60 "$cli" run cf-regression --rank 0 \
    --world-size 2 --master "127.0.0.1:$(free_port)" --dist-timeout 2
  ;;
*) fail "unknown scenario" ;;
esac
echo "ok [$scenario]"
