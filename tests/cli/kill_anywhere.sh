#!/usr/bin/env bash
# Kill anywhere (issue 31): one preset of each family (closed-form last layer, ICNN energy model,
# CP-Flow) is SIGKILLed at 20 seeded random moments. Every folder it leaves must read back
# (liftlab-cli report, liftlab --open), hold exact prefixes of the uninterrupted run's rows with
# trajectories at most one log interval behind and a summary saying running/failed; then
# `liftlab-cli run --resume` must take it to the uninterrupted run's rows, final metrics and
# trajectories (tests/cli/kill_check.py).
# usage: kill_anywhere.sh FAMILY LIFTLAB_CLI LIFTLAB_GUI WORKDIR [KILLS]
set -euo pipefail
family=$1 cli=$2 gui=$3 work=$4 kills=${5:-20}
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
export QT_QPA_PLATFORM=offscreen OMP_WAIT_POLICY=PASSIVE
rm -rf "$work" && mkdir -p "$work" && cd "$work"
export XDG_CONFIG_HOME="$work/config"
fail() { echo "FAIL [$family kill $i]: $*" >&2; exit 1; }

log_every=20
state=(--set save_state_seconds=0)  # a state at every log point: the kills test each one
case "$family" in
closed-form) spec=(cf-regression --steps 400 --seeds 2 --set log_every=$log_every
                   --set diagnostics.spectrum_every=100 --set diagnostics.one_step_every=100) ;;
icnn) spec=(icnn-escape --steps 400 --seeds 2 --set log_every=$log_every --set icnn.width=16
            --set task.n_train=4096 --set task.n_test=1024 --set diagnostics.checkpoint_every=40) ;;
cpflow) spec=(cpflow-toy --steps 300 --seeds 2 --set log_every=$log_every --set icnn.width=16
              --set task.n_train=2048 --set task.n_test=512 --set diagnostics.checkpoint_every=40
              --set diagnostics.shoulder_every=10 --set diagnostics.trace_coordinates=4) ;;
*) echo "unknown family $family" >&2; exit 2 ;;
esac

i=0
t0=$(date +%s%N)
ref=$("$cli" run "${spec[@]}" "${state[@]}" --out ref 2>/dev/null)
span_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
RANDOM=${KILL_SEED:-31}  # the kill moments are seeded (KILL_SEED to vary them)
folders=0 finished=0 resumed=0 mid_unit=0
for i in $(seq 1 "$kills"); do
  delay_ms=$(( RANDOM * 32768 + RANDOM ))
  delay_ms=$(( delay_ms % (span_ms + 1) ))  # a moment within the run
  "$cli" run "${spec[@]}" "${state[@]}" --out "k$i" >/dev/null 2>&1 &
  pid=$!
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  # No half-made folder: either none (killed before it was published) or a readable one.
  dirs=$(find "k$i" -mindepth 1 -maxdepth 1 -type d ! -name '.*' 2>/dev/null || true)
  [ -z "$dirs" ] && continue
  dir=$dirs
  folders=$((folders + 1))
  "$py" "$here/kill_check.py" killed "$ref" "$dir" "$log_every" || fail "killed at ${delay_ms} ms"
  "$cli" report "$dir" >/dev/null 2>report.err || fail "report: $(tail -2 report.err)"
  timeout 60 "$gui" --open "$dir" --quit-when-done >/dev/null 2>gui.err || fail "liftlab --open: $(tail -2 gui.err)"
  status=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$dir/summary.json")
  if [ "$status" = ok ]; then  # it had finished before the kill: it must be the reference run
    "$py" "$here/kill_check.py" resumed "$ref" "$dir" || fail "finished before the kill, but differs"
    finished=$((finished + 1))
    continue
  fi
  "$cli" run --resume "$dir" >/dev/null 2>resume.err || fail "resume: $(tail -3 resume.err)"
  head -1 resume.err | grep -q "from step" && mid_unit=$((mid_unit + 1))
  "$py" "$here/kill_check.py" resumed "$ref" "$dir" || fail "resumed after a kill at ${delay_ms} ms"
  resumed=$((resumed + 1))
done
echo "ok [$family]: $kills kills over a ${span_ms} ms run: $folders folders read back ($finished had" \
     "finished), $resumed resumed to the uninterrupted run's numbers ($mid_unit within a unit)"
