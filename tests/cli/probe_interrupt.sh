#!/usr/bin/env bash
# Untrusted models and Ctrl-C (issue 36, items 4 and 5): a user's TorchScript model is checked in a
# child process with a time and a memory limit, so a hang, a crash or a greedy model exits 2 naming
# the file and what happened; Ctrl-C stops the model check, a training step and a wide-feature
# spectrum within 2 s, and a second Ctrl-C ends a forward that hangs in training at once (exit
# 130), the folder resumable. The models are generated here with Debian's python3-torch.
# usage: probe_interrupt.sh SCENARIO LIFTLAB_CLI WORKDIR
set -euo pipefail
scenario=$1 cli=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
models=$(cd "$here/../../resources/models" && pwd)
py=/usr/bin/python3
rm -rf "$work" && mkdir -p "$work" && cd "$work"

fail() { echo "FAIL [$scenario]: $*" >&2; exit 1; }
now() { date +%s.%N; }
elapsed() { "$py" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$@"; }
below() { "$py" -c "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)" "$@"; }
json_check() {  # json_check FILE PYTHON_EXPR (d = the parsed file)
  "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" ||
    fail "$1: $2 does not hold: $(cat "$1")"
}
# wait_for FILE PATTERN SECONDS: until FILE has a line matching PATTERN.
wait_for() {
  local i
  for i in $(seq 1 $(($3 * 10))); do
    grep -Eq -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "no '$2' within $3 s: $(tail -c 600 "$1")"
}

# TorchScript compiles from source files, so the generator is a file, not standard input.
cat >make_models.py <<'PY'
import torch
from torch import nn
torch.manual_seed(0)

class Hang(nn.Module):  # a forward that never returns
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 8)
    def forward(self, x):
        i = 0
        while i >= 0:
            i = i + 1
        return self.lin(x)

class Greedy(nn.Module):  # asks for 8 GiB
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 8)
    def forward(self, x):
        big = torch.zeros([2147483648])
        return self.lin(x) + big[0]

class HangsInTraining(nn.Module):  # passes the check (eval mode), hangs at its 41st training call
    calls: int
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 8)
        self.calls = 0
    def forward(self, x):
        if self.training:
            self.calls += 1
            if self.calls > 40:
                i = 0
                while i >= 0:
                    i = i + 1
        return torch.tanh(self.lin(x))

class Wide(nn.Module):  # 200 000 features
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 200000)
    def forward(self, x):
        return torch.tanh(self.lin(x))

import sys
for name in sys.argv[1:]:
    m = {"hang": Hang, "greedy": Greedy, "hangs_in_training": HangsInTraining, "wide": Wide}[name]
    torch.jit.script(m()).save(name + ".pt")
PY
case "$scenario" in  # only the models this scenario needs
probe_limits) "$py" make_models.py hang greedy ;;
probe_sigint) "$py" make_models.py hang ;;
spectrum_sigint) "$py" make_models.py wide ;;
second_sigint) "$py" make_models.py hangs_in_training ;;
esac

bb=(cf-regression --out runs --set backbone.kind=torchscript)
# expect_refusal PATTERN MAX_SECONDS ARGS...: exit 2 within MAX_SECONDS, stderr matches, no folder.
expect_refusal() {
  local pattern=$1 max=$2 rc t0 t1
  shift 2
  t0=$(now)
  set +e
  timeout 120 "$cli" run "$@" >out.txt 2>err.txt
  rc=$?
  set -e
  t1=$(now)
  [ $rc -eq 2 ] || fail "exit $rc, expected 2: $* ; $(tail -c 600 err.txt)"
  grep -Eq -- "$pattern" err.txt || fail "message does not match '$pattern': $(cat err.txt)"
  below "$(elapsed "$t0" "$t1")" "$max" || fail "took $(elapsed "$t0" "$t1") s (at most $max)"
  [ ! -e runs ] || fail "a run folder was written for: $*"
  grep -q "frame #" err.txt && fail "a raw stack trace: $(cat err.txt)"
  echo "  $(elapsed "$t0" "$t1") s: $(grep -Eo -- "$pattern" err.txt | head -1)"
}

# interrupt_within SECONDS PID: SIGINT, then the process must be gone within SECONDS; its exit
# code goes to $RC.
alive() {  # alive PID: running (not exited, not a zombie waiting to be reaped)
  local state
  state=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
  [[ "$state" != Z* ]]
}
interrupt_within() {
  local max=$1 pid=$2 t0
  t0=$(now)
  kill -INT "$pid"
  while alive "$pid" && below "$(elapsed "$t0" "$(now)")" "$max"; do
    sleep 0.05
  done
  if alive "$pid"; then
    kill -KILL "$pid"
    fail "still running $(elapsed "$t0" "$(now)") s after SIGINT: $(tail -c 600 err.txt)"
  fi
  set +e
  wait "$pid"
  RC=$?
  set -e
  echo "  stopped $(elapsed "$t0" "$(now)") s after SIGINT, exit $RC"
}

case "$scenario" in
probe_limits)
  # A forward that never returns, with a 5 s limit (a LibTorch process takes ≈ 1 s to start on a
  # busy machine, more beside a heavy test under ctest -j2): exit 2 within the limit + the CLI's
  # own start.
  expect_refusal "backbone.script.*hang.pt: forward did not return within 5 s" 10 \
    "${bb[@]}" --set backbone.script=hang.pt --probe-timeout 5
  # 8 GiB asked for under a 2 GiB limit.
  expect_refusal "greedy.pt: ran out of memory \(limit 2 GiB, probe_memory_gib\) in its probe forward pass" 20 \
    "${bb[@]}" --set backbone.script=greedy.pt --probe-memory 2
  # LibTorch crashing in the child (a test hook raises the signal where a crash would happen).
  LIFTLAB_TEST_PROBE_CRASH=SIGSEGV expect_refusal \
    "mlp_backbone.pt: LibTorch crashed on this file \(SIGSEGV\) while loading it" 20 \
    "${bb[@]}" --set backbone.script="$models/mlp_backbone.pt"
  # Bad option values name the option or the spec key.
  set +e
  "$cli" run "${bb[@]}" --set backbone.script=hang.pt --probe-timeout soon 2>err.txt; rc=$?
  set -e
  [ $rc -eq 2 ] && grep -q -- "--probe-timeout needs a number" err.txt || fail "--probe-timeout soon: $(cat err.txt)"
  set +e
  "$cli" run "${bb[@]}" --set backbone.script=hang.pt --probe-memory 0.5 2>err.txt; rc=$?
  set -e
  [ $rc -eq 2 ] && grep -q "probe_memory_gib" err.txt || fail "--probe-memory 0.5: $(cat err.txt)"
  ;;
probe_sigint)
  # Ctrl-C while the child checks a model that never returns: gone within 2 s, nothing written.
  LIFTLAB_TRACE_ACTIVITY=1 "$cli" run "${bb[@]}" --set backbone.script=hang.pt >out.txt 2>err.txt &
  pid=$!
  wait_for err.txt "activity: checking .*hang.pt in a separate process" 60
  sleep 1.5  # the child starts, loads the file and enters its forward
  interrupt_within 2 $pid
  rc=$RC
  [ "$rc" -eq 130 ] || fail "exit $rc after SIGINT, expected 130: $(cat err.txt)"
  grep -q "Ctrl-C: stopping the run (now: checking .*hang.pt in a separate process).*Press Ctrl-C again" err.txt ||
    fail "no message saying what is stopped: $(cat err.txt)"
  grep -q "nothing written" err.txt || fail "$(cat err.txt)"
  [ ! -e runs ] || fail "a run folder was written"
  ;;
train_sigint)
  # Ctrl-C during training: stopped within 2 s, `cancelled`, and the folder resumes to the end.
  LIFTLAB_TRACE_ACTIVITY=1 "$cli" run "${bb[@]}" --set backbone.script="$models/mlp_backbone.pt" \
    --steps 100000 --set log_every=50 --set save_state_seconds=0 >out.txt 2>err.txt &
  pid=$!
  for _ in $(seq 1 600); do
    f=$(ls runs/*/metrics.csv 2>/dev/null | head -1 || true)
    [ -n "$f" ] && [ "$(wc -l <"$f")" -gt 20 ] && break
    sleep 0.1
  done
  interrupt_within 2 $pid
  rc=$RC
  [ "$rc" -eq 130 ] || fail "exit $rc after SIGINT, expected 130: $(tail -c 600 err.txt)"
  dir=$(cat out.txt)
  json_check "$dir/summary.json" 'd["status"]=="cancelled"'
  grep -q "Ctrl-C: stopping the run" err.txt || fail "no stop message: $(tail -c 600 err.txt)"
  ;;
spectrum_sigint)
  # 200 000 features: the feature spectrum (1 024 × 200 000, the Gram route: 4·10¹¹ flops in
  # float64, several seconds on 2 cores; each block of the Gram sum ≈ 0.1 s) is stopped within
  # 2 s. The signal goes as soon as the spectrum starts: a probe of 384 (≈ 0.3 s on a fast
  # machine) could end before it, and the message then named the log point instead.
  LIFTLAB_TRACE_ACTIVITY=1 "$cli" run "${bb[@]}" --set backbone.script=wide.pt --steps 2 \
    --set 'methods=[{"name":"cf-prox","label":"cf-prox","lambda":10}]' \
    --set diagnostics.spectrum_every=1 --set diagnostics.probe_size=1024 --set diagnostics.one_step_every=0 \
    --set task.n_train=256 --set task.n_test=1024 --set log_every=1 >out.txt 2>err.txt &
  pid=$!
  wait_for err.txt "activity: the feature spectrum of cf-prox \(1024 × 200000 features\)" 120
  interrupt_within 2 $pid
  rc=$RC
  [ "$rc" -eq 130 ] || fail "exit $rc after SIGINT, expected 130: $(tail -c 600 err.txt)"
  grep -q "Ctrl-C: stopping the run (now: the feature spectrum of cf-prox" err.txt ||
    fail "no message naming the spectrum: $(grep -v activity err.txt | tail -c 600)"
  dir=$(cat out.txt)
  json_check "$dir/summary.json" 'd["status"]=="cancelled"'
  ;;
second_sigint)
  # A forward that hangs in training (in-process): the first Ctrl-C says what it waits for, the
  # second quits at once with 130; the folder resumes from its last saved state to the end.
  "$cli" run "${bb[@]}" --set backbone.script=hangs_in_training.pt --steps 50 \
    --set 'methods=[{"name":"adam","label":"adam","lr":0.001}]' --set log_every=5 \
    --set save_state_seconds=0 >out.txt 2>err.txt &
  pid=$!
  for _ in $(seq 1 600); do
    f=$(ls runs/*/metrics.csv 2>/dev/null | head -1 || true)
    [ -n "$f" ] && grep -q "^40,adam" "$f" && break
    sleep 0.1
  done
  sleep 1
  alive $pid || fail "the run ended before it hung: $(tail -c 600 err.txt)"
  kill -INT $pid
  wait_for err.txt "Ctrl-C: stopping the run" 5
  grep -q "now: the forward pass of a TorchScript model" err.txt || fail "$(tail -c 600 err.txt)"
  sleep 1
  alive $pid || fail "the first Ctrl-C ended a forward that never returns?"
  interrupt_within 1 $pid
  rc=$RC
  [ "$rc" -eq 130 ] || fail "exit $rc after the second SIGINT, expected 130: $(tail -c 600 err.txt)"
  grep -q "second Ctrl-C: quitting now" err.txt || fail "$(tail -c 600 err.txt)"
  dir=$(ls -d runs/*/ | head -1)
  dir=${dir%/}
  # Each process counts its own calls: the resumed one finishes the last 10 steps.
  "$cli" run --resume "$dir" >resumed.txt 2>resume_err.txt || fail "resume: $(tail -c 600 resume_err.txt)"
  grep -q "resuming .*from step 40" resume_err.txt || fail "$(cat resume_err.txt)"
  json_check "$dir/summary.json" 'd["status"]=="ok" and d["runs"][0]["steps_done"]==50'
  ;;
*)
  fail "unknown scenario"
  ;;
esac
echo "ok [$scenario]"
