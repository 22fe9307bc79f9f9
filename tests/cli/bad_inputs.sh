#!/usr/bin/env bash
# Hostile inputs, one ctest entry per finding of issue 11: each case asserts the exit code, a
# message naming the file or key, no crash (no exit by signal), no hang (timeout), and that no
# run folder claims `ok`.
# usage: bad_inputs.sh CASE LIFTLAB_CLI WORKDIR [LIFTLAB_GUI]
set -euo pipefail
case_name=$1 cli=$2 work=$3 gui=${4:-}
rm -rf "$work" && mkdir -p "$work" && cd "$work"
py=/usr/bin/python3
export QT_QPA_PLATFORM=offscreen

fail() { echo "FAIL [$case_name]: $*" >&2; exit 1; }

# No summary.json below runs/ may say "ok" (a bad input must never look like a good run).
no_ok_folder() {
  local f
  for f in $(find . -name summary.json 2>/dev/null); do
    "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(1 if d.get('status')=='ok' else 0)" "$f" \
      || fail "$f claims ok"
  done
}

# expect EXIT_CODE PATTERN CMD...: runs CMD (60 s at most), checks its exit code and that stderr
# matches the extended regex PATTERN.
expect() {
  local want=$1 pattern=$2 rc
  shift 2
  set +e
  timeout 60 "$@" >out.txt 2>err.txt
  rc=$?
  set -e
  [ $rc -ne 124 ] || fail "hung (timeout): $(echo "$*" | cut -c1-200)"
  [ $rc -lt 128 ] || fail "crashed with signal $((rc - 128)): $(echo "$*" | cut -c1-200) ; $(tail -5 err.txt)"
  [ $rc -eq "$want" ] || fail "exit code $rc, expected $want: $(echo "$*" | cut -c1-200) ; $(tail -c 600 err.txt)"
  grep -Eq -- "$pattern" err.txt || fail "message does not match '$pattern': $(head -c 600 err.txt)"
  no_ok_folder
}

nested() { "$py" -c "import sys; n=int(sys.argv[1]); print('['*n + ']'*n)" "$1"; }

# A copy of the cf-regression preset with one JSON edit (a Python statement on `d`).
spec_with() {
  "$cli" run cf-regression --steps 1 --out tmp-runs >/dev/null 2>&1 || fail "cannot make a base spec"
  "$py" - "$1" "$(ls tmp-runs/*/spec.json | head -1)" <<'PY' >spec.json
import json, sys
d = json.load(open(sys.argv[2]))
del d["versions"], d["data"]
exec(sys.argv[1])
print(json.dumps(d, indent=1))
PY
  rm -rf tmp-runs
}

fast=(--steps 20 --set log_every=10 --set task.n_train=256 --set task.n_test=64)

case "$case_name" in
deep_set)
  # 65 000-deep value through --set: was a stack overflow while building the message.
  expect 2 "spec key 'batch_size'.*nested deeper" \
    "$cli" run cf-regression --out runs --set "batch_size=$(nested 65000)"
  expect 2 "spec key 'sweep.values'.*nested deeper" \
    "$cli" run cf-regression --out runs --set "sweep.values=$(nested 60000)"
  ;;
deep_spec)
  "$py" -c "
n = 100000
open('deep.json', 'w').write('{\"name\": \"x\",\n \"description\": ' + '['*n + ']'*n + '}')"
  expect 2 "deep.json:2: JSON nested deeper than 64" "$cli" run deep.json --out runs
  ;;
fifo_spec)
  mkfifo pipe.json
  expect 2 "pipe.json: is not a regular file" "$cli" run pipe.json --out runs
  ;;
huge_numbers)
  expect 2 "spec key 'batch_size': integer 4294967328 is out of range" \
    "$cli" run cf-regression --out runs --set batch_size=4294967328
  expect 2 "spec key 'steps': integer 4294967346 is out of range" \
    "$cli" run cf-regression --out runs --set steps=4294967346
  expect 2 "spec key 'log_every': integer 1000000000000 is out of range" \
    "$cli" run cf-regression --out runs --set log_every=1000000000000
  expect 2 "spec key 'methods.99999999999999999999999'" \
    "$cli" run cf-regression --out runs --set methods.99999999999999999999999.lr=1
  expect 2 "spec key 'methods.adam.lr'.*1e400" \
    "$cli" run cf-regression --out runs --set methods.adam.lr=1e400
  spec_with 'd["noise_level"] = 0' && sed -i 's/"noise_level": 0/"x": 1e400/' spec.json
  line=$(grep -n '1e400' spec.json | cut -d: -f1)
  expect 2 "spec.json:$line: invalid JSON: .*1e400" "$cli" run spec.json --out runs
  ;;
report_deep_summary)
  mkdir -p run
  printf 'step,method,seed,metric,value\n1,adam,0,test_loss,1\n' >run/metrics.csv
  echo '{}' >run/spec.json
  "$py" -c "
n = 100000
open('run/summary.json', 'w').write('{\"status\": \"ok\", \"runs\": [{\"method\": \"adam\", \"sweep_value\": ' + '['*n + ']'*n + '}]}')"
  set +e; timeout 60 "$cli" report run >/dev/null 2>err.txt; rc=$?; set -e
  [ $rc -eq 2 ] && grep -q "run/summary.json:1: JSON nested deeper" err.txt \
    || fail "rc $rc: $(head -c 400 err.txt)"
  ;;
report_not_regular)
  mkdir -p run
  printf 'step,method,seed,metric,value\n1,adam,0,test_loss,1\n' >run/metrics.csv
  echo '{}' >run/spec.json
  ln -s /dev/zero run/summary.json
  set +e; timeout 60 "$cli" report run >/dev/null 2>err.txt; rc=$?; set -e
  [ $rc -eq 2 ] && grep -q "summary.json: is not a regular file" err.txt \
    || fail "rc $rc: $(head -c 400 err.txt)"
  rm run/summary.json && mkfifo run/summary.json
  set +e; timeout 60 "$cli" report run >/dev/null 2>err.txt; rc=$?; set -e
  [ $rc -eq 2 ] && grep -q "summary.json: is not a regular file" err.txt \
    || fail "FIFO: rc $rc: $(head -c 400 err.txt)"
  ;;
bad_csv_cells)
  # spectra.csv with a step that is not an int: a message with file and line, not "stoi".
  mkdir -p run
  printf 'step,method,seed,metric,value\n1,adam,0,test_loss,1\n' >run/metrics.csv
  printf 'step,method,seed,index,sigma\n99999999999999999999,adam,0,0,1.5\n' >run/spectra.csv
  set +e; timeout 60 "$cli" report run >/dev/null 2>err.txt; rc=$?; set -e
  [ $rc -eq 2 ] && grep -q "run/spectra.csv:2: step '99999999999999999999'" err.txt \
    || fail "rc $rc: $(cat err.txt)"
  # The writer's subnormals (1e-320) are read back.
  printf 'step,method,seed,metric,value\n1,adam,0,test_loss,9.9998886718268301e-321\n' >run/metrics.csv
  rm run/spectra.csv
  timeout 60 "$cli" report run >/dev/null 2>err.txt || fail "subnormal value refused: $(cat err.txt)"
  ;;
path_escape)
  expect 2 "spec key 'name': '../escape' is not a valid run name" \
    "$cli" run cf-regression --out runs --set name=../escape
  expect 2 "spec key 'name'" "$cli" run cf-regression --out runs --set name=/tmp/liftlab-abs
  expect 2 "spec key 'name'" "$cli" run cf-regression --out runs --set name=..
  spec_with 'd["name"] = "../../x"'
  expect 2 "spec key 'name'" "$cli" run spec.json --out runs
  # An ICNN method label leading out of the run folder, and one with a slash: refused before
  # any training (no run folder at all).
  expect 2 "spec key 'methods\[0\].label'" \
    "$cli" run icnn-landscape --out runs --set 'methods.0.label=../../../x'
  expect 2 "spec key 'methods\[0\].label'" \
    "$cli" run icnn-landscape --out runs --set 'methods.0.label=a/b'
  [ ! -e runs ] || [ -z "$(ls -A runs)" ] || fail "a refused spec left a folder: $(ls -R runs)"
  [ ! -e escape ] && [ ! -e ../escape ] && [ ! -e x ] || fail "something escaped"
  ;;
empty_out)
  expect 2 "--out needs a folder" "$cli" run cf-regression --out ""
  ;;
write_failure)
  # A file size limit stands in for a full disk: the run must end `failed` with exit 3 and the
  # reason in summary.json and on stderr (it used to exit 0 with `ok` and a cut metrics.csv).
  # (No model export and no resume state: each would hit the 24 kB limit first.)
  set +e
  (ulimit -f 24; exec timeout 120 "$cli" run cf-regression --steps 3000 --set log_every=5 \
     --set export_models=false --set save_state=false --out runs) \
    >out.txt 2>err.txt
  rc=$?
  set -e
  [ $rc -eq 3 ] || fail "exit code $rc, expected 3: $(tail -5 err.txt)"
  grep -q "run failed: cannot write .*metrics.csv: File too large" err.txt || fail "$(tail -5 err.txt)"
  dir=$(dirname "$(ls runs/*/summary.json)")
  "$py" - "$dir/summary.json" <<'PY' || fail "summary.json: $(cat "$dir/summary.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "failed", d["status"]
assert "metrics.csv" in d["reason"], d
assert all(r["status"] != "ok" and r["status"] != "running" for r in d["runs"]), d["runs"]
PY
  no_ok_folder
  # The model export writes through the same checked writer: exit 3 naming the file (LibTorch's
  # own file writer used to abort the process from a destructor).
  rm -rf runs
  set +e
  (ulimit -f 24; exec timeout 120 "$cli" run cf-regression --steps 10 --set save_state=false \
     --out runs) >out.txt 2>err.txt
  rc=$?
  set -e
  [ $rc -eq 3 ] || fail "export: exit code $rc, expected 3: $(tail -5 err.txt)"
  grep -q "run failed: cannot write .*models/.*File too large" err.txt || fail "$(tail -5 err.txt)"
  no_ok_folder
  # So does the resume state (here written at every log point).
  rm -rf runs
  set +e
  (ulimit -f 24; exec timeout 120 "$cli" run cf-regression --steps 10 --set export_models=false \
     --set save_state_seconds=0 --set log_every=5 --out runs) >out.txt 2>err.txt
  rc=$?
  set -e
  [ $rc -eq 3 ] || fail "state: exit code $rc, expected 3: $(tail -5 err.txt)"
  grep -q "run failed: cannot write .*resume/unit0.state: File too large" err.txt || fail "$(tail -5 err.txt)"
  no_ok_folder
  ;;
data_errors)
  # Data problems are exit 2 before training (never "diverged", never a run folder).
  printf 'a,b,y\n1,2,3\n4,5,6\n7,8,9\n' >three.csv
  expect 2 "spec key 'batch_size': 32 is larger than the 2 training samples" \
    "$cli" run cf-regression --out runs --set task.kind=csv-regression --set task.csv_path=three.csv
  "$py" -c "
rows = ['a,b,y'] + ['%d,%d,%d' % (i, i + 1, i + 2) for i in range(50)]
rows[7] = '1e308,1,2'
open('big.csv', 'w').write('\n'.join(rows) + '\n')"
  expect 2 "big.csv:8: column 'a': value '1e308' is beyond single precision" \
    "$cli" run cf-regression --out runs --set task.kind=csv-regression --set task.csv_path=big.csv \
    --set batch_size=8
  # CIFAR: a label byte of 255 in record 3 of a CIFAR-10 file.
  "$py" -c "
import sys
rec = lambda label: bytes([label]) + bytes(3072)
open('train.bin', 'wb').write(rec(1) + rec(2) + rec(255) + rec(3))
open('test.bin', 'wb').write(rec(1) + rec(2))"
  expect 2 "train.bin:3: record 3 has label 255, outside 0..9" \
    "$cli" run cf-regression --out runs --set task.kind=cifar-binary \
    --set 'task.train_files=["train.bin"]' --set 'task.test_files=["test.bin"]' \
    --set 'methods=[{"name":"cf-ridge"}]' --set batch_size=2
  # Fashion-MNIST IDX files with 0 images.
  mkdir -p idx
  "$py" -c "
import struct
for split, n in (('train', 0), ('t10k', 0)):
    open('idx/%s-images-idx3-ubyte' % split, 'wb').write(struct.pack('>IIII', 0x803, n, 28, 28))
    open('idx/%s-labels-idx1-ubyte' % split, 'wb').write(struct.pack('>II', 0x801, n))"
  expect 2 "train-images-idx3-ubyte: holds 0 images" \
    "$cli" run cf-fashion-mnist --out runs --set task.data_dir=idx
  expect 2 "spec key 'seeds\[1\]': duplicate seed 0" \
    "$cli" run cf-regression --out runs --set 'seeds=[0,0]'
  expect 2 "spec key 'threads': must be at most" \
    "$cli" run cf-regression --out runs --set threads=100000
  # 1×1 IDX images: a valid file, too small for the cnn's blocks — named before training.
  mkdir -p idx1
  "$py" -c "
import struct
for split, n in (('train', 64), ('t10k', 16)):
    open('idx1/%s-images-idx3-ubyte' % split, 'wb').write(struct.pack('>IIII', 0x803, n, 1, 1) + bytes(range(n)))
    open('idx1/%s-labels-idx1-ubyte' % split, 'wb').write(struct.pack('>II', 0x801, n) + bytes(i % 10 for i in range(n)))"
  expect 2 "spec key 'backbone.channels': 2 cnn blocks need images of at least 4 × 4 pixels; the images in idx1 are 1 × 1" \
    "$cli" run cf-fashion-mnist --out runs --set task.data_dir=idx1 --set batch_size=8 --steps 5
  [ ! -e runs ] || [ -z "$(ls -A runs)" ] || fail "a data error left a folder: $(ls runs)"
  ;;
failed_not_running)
  # A method that throws once training has started (FNO modes beyond the grid's s/2 + 1 Fourier
  # modes, found at the first forward pass): the run folder must end `failed`, never `running`.
  set +e
  timeout 120 "$cli" run cf-burgers-fno --out runs --set task.n_train=16 --set task.n_test=4 \
    --set task.resolution=64 --set task.fine_grid=256 --set backbone.modes=40 --set batch_size=4 \
    --set seeds=[0] --steps 3 >out.txt 2>err.txt
  rc=$?
  set -e
  [ $rc -eq 1 ] || fail "exit code $rc, expected 1: $(tail -3 err.txt)"
  grep -q "modes (40) exceeds" err.txt || fail "no reason on stderr: $(tail -3 err.txt)"
  [ -n "$(find runs -name summary.json 2>/dev/null)" ] || fail "no run folder was written"
  "$py" -c "import json,glob,sys; d=json.load(open(glob.glob('runs/*/summary.json')[0])); sys.exit(0 if d['status'] == 'failed' else 1)" \
    || fail "the run is not 'failed' (methods threw, none diverged)"
  for f in $(find runs -name summary.json 2>/dev/null); do
    "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d['status'] in ('failed','diverged') else 1)" "$f" \
      || fail "$f: $(cat "$f")"
  done
  no_ok_folder
  ;;
summary_cancelled)
  # A cancelled seed is counted, not averaged with the finished ones.
  mkdir -p run
  printf 'step,method,seed,metric,value\n1,adam,0,test_loss,1\n' >run/metrics.csv
  echo '{"name": "t", "seeds": [0, 1, 2]}' >run/spec.json
  cat >run/summary.json <<'JSON'
{"status": "cancelled", "runs": [
 {"method": "adam", "seed": 0, "status": "ok", "final": {"test_loss": 1.0}},
 {"method": "adam", "seed": 1, "status": "ok", "final": {"test_loss": 3.0}},
 {"method": "adam", "seed": 2, "status": "cancelled", "final": {"test_loss": 100.0}}]}
JSON
  "$cli" report run >/dev/null 2>err.txt || fail "report: $(cat err.txt)"
  grep -q "^| adam | 3 | 0 | 1 | 2 ± 1.414 |" run/figures/summary.md || fail "$(cat run/figures/summary.md)"
  grep -q "^adam,,3,0,1,2," run/figures/summary.csv || fail "$(cat run/figures/summary.csv)"
  ;;
icnn_killed_keeps_trajectory)
  # SIGKILL mid-seed: the trajectory checkpoints so far are on disk (they were held in memory
  # until the seed ended), and `landscape` works on the killed run.
  "$cli" run icnn-landscape --steps 100000 --set log_every=10 --set diagnostics.checkpoint_every=5 \
    --set icnn.quadrature_points=500 --set task.n_train=1024 --set task.n_test=256 --set 'seeds=[0]' \
    --out runs >out.txt 2>err.txt &
  pid=$!
  for _ in $(seq 1 300); do
    n=$(ls runs/*/trajectories/*.pt 2>/dev/null | wc -l || true)
    rows=$(cat runs/*/metrics.csv 2>/dev/null | grep -c ',0,test_loss,' || true)
    [ "$n" -gt 0 ] && [ "${rows:-0}" -ge 6 ] && break
    sleep 0.2
  done
  kill -9 $pid; wait $pid 2>/dev/null || true
  dir=$(dirname "$(ls runs/*/spec.json | head -1)")
  ls "$dir"/trajectories/*_seed0.pt >/dev/null 2>&1 || fail "no trajectory after SIGKILL"
  timeout 300 "$cli" landscape "$dir" --grid 3 --space theta >/dev/null 2>err.txt \
    || fail "landscape of the killed run: $(tail -3 err.txt)"
  ;;
gui_sigterm)
  [ -n "$gui" ] || fail "needs the liftlab binary"
  "$gui" --preset cf-regression --autostart --steps 1000000 --out runs >out.txt 2>err.txt &
  pid=$!
  for _ in $(seq 1 300); do
    f=$(ls runs/*/metrics.csv 2>/dev/null | head -1 || true)
    [ -n "$f" ] && [ "$(wc -l <"$f")" -gt 5 ] && break
    sleep 0.2
  done
  kill -TERM $pid
  set +e; timeout 60 tail --pid=$pid -f /dev/null; wait $pid; rc=$?; set -e
  [ $rc -eq 143 ] || fail "exit code $rc after SIGTERM, expected 143: $(tail -3 err.txt)"
  dir=$(dirname "$(ls runs/*/summary.json | head -1)")
  "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d['status']=='cancelled' else 1)" \
    "$dir/summary.json" || fail "summary after SIGTERM: $(cat "$dir/summary.json")"
  ;;
gui_open_quits)
  [ -n "$gui" ] || fail "needs the liftlab binary"
  dir=$("$cli" run cf-regression --steps 20 --set log_every=10 --out runs 2>/dev/null)
  timeout 60 "$gui" --open "$dir" --quit-when-done >/dev/null 2>err.txt \
    || fail "liftlab --open --quit-when-done: rc $?, $(tail -3 err.txt)"
  ;;
*) fail "unknown case" ;;
esac
echo "PASS [$case_name]"
