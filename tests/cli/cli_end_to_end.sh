#!/usr/bin/env bash
# usage: cli_end_to_end.sh SCENARIO LIFTLAB_CLI WORKDIR
set -euo pipefail
scenario=$1 cli=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work"
py=/usr/bin/python3

fail() { echo "FAIL [$scenario]: $*" >&2; exit 1; }
# json_check FILE PYTHON_EXPR: the expression sees the parsed document as `d`.
json_check() { "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" \
  || fail "$1 does not satisfy: $2"; }

# interrupt PID WHAT: Ctrl-C the run in the background, which must end with exit code 130.
interrupt() {
  kill -INT "$1"
  set +e; wait "$1"; local rc=$?; set -e
  [ $rc -eq 130 ] || fail "$2: exit code $rc after SIGINT, expected 130: $(cat err.txt)"
}
json_check_quiet() { "$py" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }

case "$scenario" in
list)
  out=$("$cli" list)
  echo "$out" | grep -q '^cf-regression ' || fail "cf-regression not listed: $out"
  ;;
run)
  dir=$("$cli" run cf-regression --steps 60 --out runs --set batch_size=8 --set log_every=20 2>err.txt) \
    || { cat err.txt; fail "run exited non-zero"; }
  [ -d "$dir" ] || fail "printed path '$dir' is not a folder"
  json_check "$dir/summary.json" 'd["status"]=="ok" and len(d["runs"])==4 and all(r["status"]=="ok" and r["batch_size"]==8 and r["final"]["test_loss"]>0 for r in d["runs"])'
  json_check "$dir/spec.json" 'd["batch_size"]==8 and d["steps"]==60 and "libtorch" in d["versions"]'
  # OpenBLAS's kernels are recorded; on a CPU with AVX2 + FMA they are never the SSE3 fallback.
  json_check "$dir/spec.json" '"blas_core" in d["versions"]'
  if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && [ -z "${OPENBLAS_CORETYPE:-}" ]; then
    json_check "$dir/spec.json" 'd["versions"]["blas_core"] != "Prescott"'
    # and on an AVX-512 CPU they are AVX-512 kernels (OpenBLAS 0.3.21 gives a Zen 4 AVX2 ones).
    if grep -qw avx512f /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo && grep -qw avx512dq /proc/cpuinfo \
        && grep -qw avx512vl /proc/cpuinfo && [ "${LIFTLAB_BLAS_CORETYPE:-}" != keep ]; then
      json_check "$dir/spec.json" 'd["versions"]["blas_core"].lower() in ("skylakex", "cooperlake", "sapphirerapids")'
    fi
  fi
  [ "$(head -1 "$dir/metrics.csv")" = "step,method,seed,metric,value" ] || fail "metrics header"
  [ -s "$dir/figures/test_loss.png" ] || fail "no loss-curve figure"
  grep -q "progress 100%" err.txt || fail "no progress lines on a non-terminal: $(cat err.txt)"
  # spec.json repeats the run, bit for bit (fixed seeds and thread count).
  again=$("$cli" run "$dir/spec.json" --out runs 2>/dev/null) || fail "rerun from spec.json failed"
  "$py" - "$dir/summary.json" "$again/summary.json" <<'PY' || fail "rerun from spec.json differs"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
fa = [(r["method"], r["final"]["test_loss"]) for r in a["runs"]]
fb = [(r["method"], r["final"]["test_loss"]) for r in b["runs"]]
assert fa == fb, (fa, fb)
PY
  ;;
device)
  # The device path on the CPU: `device: auto` resolves to cpu here (no CUDA in Debian's
  # LibTorch), is recorded, and trains bit for bit like the default device (cpu); `cuda` without
  # a CUDA device is a spec error before any folder; the ICNN family refuses cuda.
  common=(--steps 40 --out runs --set log_every=10 --seeds 1)
  for task in cf-regression cf-dfiv-demand; do
    extra=(); [ "$task" = cf-dfiv-demand ] && extra=(--set task.n_train=600)
    a=$("$cli" run $task "${common[@]}" "${extra[@]}" 2>/dev/null) || fail "$task on cpu failed"
    b=$("$cli" run $task "${common[@]}" "${extra[@]}" --set device=auto 2>/dev/null) \
      || fail "$task on auto failed"
    json_check "$a/spec.json" 'd["device"]=="cpu" and d["device_used"]=="cpu"'
    cuda=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["device_used"])' "$b/spec.json")
    [ "$cuda" = cpu ] || { echo "SKIP: auto resolved to $cuda (a CUDA machine)"; exit 0; }
    json_check "$b/spec.json" 'd["device"]=="auto"'
    # Every metric but the wall-clock ones (time_s, solve_fraction), bit for bit.
    timeless() { grep -vE ',(time_s|solve_fraction),' "$1/metrics.csv"; }
    [ "$(timeless "$a" | wc -l)" -gt 10 ] || fail "$task: too few metrics"
    cmp -s <(timeless "$a") <(timeless "$b") || fail "$task: metrics.csv differs between cpu and auto"
  done
  set +e
  "$cli" run cf-regression "${common[@]}" --set device=cuda --out bad 2>err.txt; rc=$?
  set -e
  [ $rc -eq 2 ] || fail "cuda without a CUDA device: exit $rc, expected 2"
  grep -q "spec key 'device'" err.txt || fail "message does not name the key: $(cat err.txt)"
  [ ! -d bad ] || [ -z "$(ls bad)" ] || fail "a device error left a run folder"
  set +e
  "$cli" run icnn-ebm-1d "${common[@]}" --set device=cuda --out bad 2>err.txt; rc=$?
  "$cli" run cf-regression "${common[@]}" --set device=gpu --out bad 2>err2.txt; rc2=$?
  set -e
  [ $rc -eq 2 ] && grep -q "cpu only" err.txt || fail "icnn on cuda: exit $rc: $(cat err.txt)"
  [ $rc2 -eq 2 ] && grep -q "cpu, cuda, auto" err2.txt || fail "device=gpu: exit $rc2: $(cat err2.txt)"
  ;;
bad_spec)
  set +e
  "$cli" run cf-regression --set batch_size=-3 --out runs 2>err.txt; rc=$?
  set -e
  [ $rc -eq 2 ] || fail "exit code $rc, expected 2"
  grep -q "spec key 'batch_size'" err.txt || fail "message does not name the key: $(cat err.txt)"
  set +e
  "$cli" run cf-regression --set task.kind=csv-regression --set task.csv_path=missing.csv --out runs 2>err.txt; rc=$?
  set -e
  [ $rc -eq 2 ] || fail "missing CSV: exit code $rc"
  grep -q "missing.csv" err.txt || fail "message does not name the file: $(cat err.txt)"
  set +e
  "$cli" run no-such-preset 2>err.txt; rc=$?
  set -e
  [ $rc -eq 2 ] && grep -q "cf-regression" err.txt || fail "unknown preset: $(cat err.txt)"
  [ ! -d runs ] || [ -z "$(ls runs)" ] || fail "a bad spec left a run folder"
  ;;
killed)
  "$cli" run cf-regression --steps 1000000 --set log_every=5 --out runs >out.txt 2>err.txt &
  pid=$!
  for _ in $(seq 1 100); do
    f=$(ls runs/*/metrics.csv 2>/dev/null | head -1 || true)
    [ -n "$f" ] && [ "$(wc -l <"$f")" -gt 20 ] && break
    sleep 0.2
  done
  kill -9 $pid; wait $pid 2>/dev/null || true
  dir=$(dirname "$(ls runs/*/metrics.csv | head -1)")
  "$py" - "$dir/metrics.csv" <<'PY' || fail "metrics.csv unreadable after kill"
import sys
text = open(sys.argv[1]).read()
lines = text.split("\n")
full = lines[1:-1]          # header, then complete rows; the last piece may be cut
assert len(full) > 10, len(full)
for l in full:
    step, method, seed, metric, value = l.split(",")
    int(step); float(value)
PY
  json_check "$dir/summary.json" 'd["status"]=="running"'
  "$cli" report "$dir" >/dev/null || fail "report of a killed run failed"
  [ -s "$dir/figures/test_loss.png" ] || fail "no figure for the killed run"
  ;;
interrupted)
  "$cli" run cf-regression --steps 1000000 --out runs >out.txt 2>err.txt &
  pid=$!
  for _ in $(seq 1 100); do
    [ -n "$(ls runs/*/metrics.csv 2>/dev/null)" ] && [ "$(wc -l <"$(ls runs/*/metrics.csv | head -1)")" -gt 5 ] && break
    sleep 0.2
  done
  interrupt $pid "the run"
  dir=$(cat out.txt)
  json_check "$dir/summary.json" 'd["status"]=="cancelled" and all(r["status"]=="cancelled" for r in d["runs"])'
  ;;
interrupted_seeds)
  # Ctrl-C while two seeds train side by side (threads 2, as most presets have it): the folder
  # keeps both seeds' rows and --resume continues both seeds from their states to the
  # uninterrupted run's numbers (it refused it: "unit 0 is not finished but a later one ran").
  args=(cf-regression --steps 2000 --seeds 2 --set threads=2 --set save_state_seconds=0)
  full=$("$cli" run "${args[@]}" --out full 2>/dev/null) || fail "uninterrupted side-by-side run"
  "$cli" run "${args[@]}" --out sbs >out.txt 2>err.txt &
  pid=$!
  for _ in $(seq 1 300); do
    f=$(ls sbs/*/metrics.csv 2>/dev/null | head -1 || true)
    [ -n "$f" ] && grep -q "^500,adam,0,test_loss," "$f" && break
    sleep 0.1
  done
  interrupt $pid "side by side"
  dir=$(cat out.txt)
  grep -q ",adam,1,test_loss," "$dir/metrics.csv" || fail "the second seed's rows were not kept"
  "$cli" run --resume "$dir" >/dev/null 2>err.txt || fail "side by side: --resume: $(cat err.txt)"
  "$py" - "$full/summary.json" "$dir/summary.json" <<'PY' || fail "resumed side-by-side run differs"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert b["status"] == "ok", b["status"]
def finals(d):
    return {(r["method"], r["seed"]): {k: v for k, v in r["final"].items()
                                       if k not in ("time_s", "solve_fraction")}
            for r in d["runs"]}
assert finals(a) == finals(b), (finals(a), finals(b))
PY
  ;;
report_formats)
  dir=$("$cli" run cf-regression --steps 40 --seeds 2 --set log_every=10 --out runs 2>/dev/null)
  for fmt in png svg pdf; do
    "$cli" report "$dir" --format $fmt >paths.txt || fail "report --format $fmt"
    for f in test_loss train_loss timing; do
      grep -qx "$dir/figures/$f.$fmt" paths.txt || fail "no $f.$fmt in: $(cat paths.txt)"
    done
    grep -q "\.$fmt\$" paths.txt || fail "no .$fmt figure"
    while read -r p; do [ "$(stat -c %s "$p")" -gt 200 ] || fail "$p is too small"; done <paths.txt
  done
  # The final-metric table: one row per method, mean ± sd over the 2 seeds.
  grep -q "^| cf-prox | 2 | 0 |" "$dir/figures/summary.md" || fail "summary.md: $(cat "$dir/figures/summary.md")"
  [ "$(wc -l <"$dir/figures/summary.csv")" -eq 5 ] || fail "summary.csv rows"
  set +e; "$cli" report /nonexistent 2>err.txt; rc=$?; set -e
  [ $rc -eq 2 ] && grep -q "metrics.csv" err.txt || fail "bad run folder: $(cat err.txt)"
  ;;
sweep)
  dir=$("$cli" run cf-batch-sweep --steps 30 --seeds 2 --set log_every=10 --set 'sweep.values=[4,16]' --out runs 2>err.txt) \
    || { cat err.txt; fail "sweep run failed"; }
  json_check "$dir/summary.json" 'len(d["runs"])==2*2*4 and sorted({r["batch_size"] for r in d["runs"]})==[4,16]'
  grep -q "cf-prox@batch_size=4" "$dir/metrics.csv" || fail "sweep labels missing in metrics.csv"
  "$cli" report "$dir" >/dev/null || fail "report of a sweep"
  grep -q "| cf-prox | 16 | 2 | 0 |" "$dir/figures/summary.md" || fail "sweep table: $(cat "$dir/figures/summary.md")"
  [ "$(stat -c %s "$dir/figures/sweep_test_loss.png")" -gt 5000 ] || fail "no sweep figure: $(ls "$dir/figures")"
  ;;
landscape)
  # liftlab-cli landscape on a short ICNN run: both spaces, cached (the second call computes
  # nothing), drawn into figures/ and by report; bad options exit 2 with the option named.
  dir=$("$cli" run icnn-landscape --steps 20 --set log_every=10 --set diagnostics.checkpoint_every=5 \
        --set icnn.quadrature_points=500 --set task.n_train=1024 --set task.n_test=256 --out runs 2>/dev/null) \
    || fail "icnn-landscape run failed"
  fig=$("$cli" landscape "$dir" --grid 5 --directions delta-pca 2>err.txt) || { cat err.txt; fail "landscape"; }
  [ "$(stat -c %s "$fig")" -gt 5000 ] || fail "landscape figure $fig too small"
  grep -q "computed in" err.txt || fail "first landscape not computed: $(cat err.txt)"
  ls "$dir"/landscapes/theta_lifter_seed0_delta-pca_5.json "$dir"/landscapes/lifted_lifter_seed0_delta-pca_5.json >/dev/null \
    || fail "no cache files: $(ls "$dir/landscapes")"
  "$cli" landscape "$dir" --grid 5 --directions delta-pca 2>err.txt >/dev/null || fail "second landscape"
  [ "$(grep -c 'from the cache' err.txt)" -eq 2 ] || fail "second call not cached: $(cat err.txt)"
  "$cli" report "$dir" >paths.txt || fail "report"
  grep -q "landscape_delta-pca_lifter_seed0.png" paths.txt || fail "report has no landscape: $(cat paths.txt)"
  set +e; "$cli" landscape "$dir" --space phi 2>err.txt; rc=$?; set -e
  [ $rc -eq 2 ] && grep -q -- "--space" err.txt || fail "bad --space: rc $rc, $(cat err.txt)"
  set +e; "$cli" landscape "$dir" --method adam 2>err.txt; rc=$?; set -e
  [ $rc -eq 2 ] && grep -q "adam" err.txt || fail "unknown method: rc $rc, $(cat err.txt)"
  ;;
preset:*)
  # A short version of a built-in preset: SCENARIO is preset:NAME, the remaining args overrides.
  name=${scenario#preset:}
  sets=()
  for kv in "${@:4}"; do sets+=(--set "$kv"); done
  dir=$("$cli" run "$name" --out runs "${sets[@]}" 2>err.txt) || { cat err.txt; fail "preset $name"; }
  json_check "$dir/summary.json" 'd["status"]=="ok" and all(r["status"]=="ok" for r in d["runs"])'
  [ -s "$dir/figures/test_loss.png" ] || fail "no figure"
  # A preset with a sweep draws its sweep figure; one with spectra writes spectra.csv (DFIV: the
  # instrument and treatment features, named).
  if json_check_quiet "$dir/spec.json" 'd["sweep"]["key"]!=""'; then
    ls "$dir"/figures/sweep_*.png >/dev/null 2>&1 || fail "sweep preset without a sweep figure: $(ls "$dir/figures")"
  fi
  if json_check_quiet "$dir/spec.json" 'd["diagnostics"]["spectrum_every"]>0'; then
    [ -s "$dir/spectra.csv" ] || fail "spectrum_every > 0 but no spectra.csv"
    if json_check_quiet "$dir/spec.json" 'd["task"]["kind"]=="dfiv-demand"'; then
      grep -q "/instrument" "$dir/spectra.csv" && grep -q "/treatment" "$dir/spectra.csv" \
        || fail "DFIV spectra not named instrument/treatment"
    fi
    # A linear probe (every backbone parameter frozen): the fixed features' spectrum, once.
    if json_check_quiet "$dir/spec.json" 'd.get("backbone_freeze", {}).get("linear_probe")'; then
      [ "$(tail -n +2 "$dir/spectra.csv" | cut -d, -f1-3 | sort -u)" = "$(tail -n +2 "$dir/spectra.csv" | head -1 | cut -d, -f1-3)" ] \
        && tail -n +2 "$dir/spectra.csv" | head -1 | grep -q ",frozen-backbone," \
        || fail "a linear probe logged more than one spectrum: $(cut -d, -f1-3 "$dir/spectra.csv" | sort -u | head)"
    fi
  fi
  tail -n +1 err.txt | grep -A20 "^method" >&2 || true
  ;;
*) fail "unknown scenario" ;;
esac
echo "PASS [$scenario]"
