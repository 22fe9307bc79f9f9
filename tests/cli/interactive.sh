#!/usr/bin/env bash
# Issue 40 (the interactive lab), its engine and CLI: live-setting events and forks.
# usage: interactive.sh SCENARIO LIFTLAB_CLI WORKDIR
#   events      a run with --event N:m.key=v equals its parent without the event forked at N with
#               that setting changed, metric for metric from N on (and differs from the parent
#               after N); events.csv records each change; --resume from a kept state before and
#               after the event replays it to the same rows (closed-form and ICNN methods)
#   push        icnn-escape-push in small: the push is an event (events.csv: the shoulder occupancy
#               of the readout before and after, per method), push_escaped is logged from then
#               on, and --resume before and after the push gives the same rows
#   bad_events  malformed events, unknown methods/keys, bad values and forks without kept
#               states exit 2 naming the fault, and leave no run folder
#   crossfork   a fork to another method of the family starts from the parent's weights: the
#               child method's test_loss at the fork step is the source's there (cf-ridge →
#               cf-prox, sgd; softplus → lifter, lifter → softplus, pgd exactly; pgd → lifter within
#               the floor's tolerance); an ambiguous or impossible source exits 2, no folder
set -euo pipefail
scenario=$1 cli=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work"
py=/usr/bin/python3
fail() { echo "FAIL [$scenario]: $*" >&2; exit 1; }

# compare_metrics A B MODE [STEP]: metrics.csv rows of two folders, timings aside (time_s,
# solve_fraction). MODE same: equal; MODE after: rows of A with step > STEP equal B's rows (all of
# B's rows have step > STEP); MODE upto: rows with step <= STEP equal; MODE differ_after: some
# test_loss after STEP differs.
compare_metrics() {
  "$py" - "$@" <<'PY'
import csv, sys
a, b, mode = sys.argv[1], sys.argv[2], sys.argv[3]
step = int(sys.argv[4]) if len(sys.argv) > 4 else 0
def rows(d):
    with open(d + "/metrics.csv") as f:
        return [(int(r["step"]), r["method"], r["seed"], r["metric"], r["value"])
                for r in csv.DictReader(f) if r["metric"] not in ("time_s", "solve_fraction")]
ra, rb = rows(a), rows(b)
if mode == "same":
    ok = ra == rb and len(ra) > 0
elif mode == "after":
    ok = all(r[0] > step for r in rb) and [r for r in ra if r[0] > step] == rb and len(rb) > 0
elif mode == "upto":
    ok = [r for r in ra if r[0] <= step] == [r for r in rb if r[0] <= step]
elif mode == "differ_after":
    la = {r[:4]: r[4] for r in ra if r[0] > step and r[3] == "test_loss"}
    lb = {r[:4]: r[4] for r in rb if r[0] > step and r[3] == "test_loss"}
    ok = len(la) > 0 and any(la[k] != lb.get(k) for k in la)
if not ok:
    print("metrics of", a, "and", b, "fail", mode, step, file=sys.stderr)
    sys.exit(1)
PY
}

# resume_from RUN STEP COPY: COPY is RUN as if killed right after its kept state at STEP
# (resume/unit0.state := states/unit0_step<STEP>.state, summary running), then --resume'd.
resume_from() {
  local run=$1 step=$2 copy=$3
  cp -r "$run" "$copy"
  cp "$copy/states/unit0_step$step.state" "$copy/resume/unit0.state"
  "$py" - "$copy/summary.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["status"] = "running"; json.dump(d, open(sys.argv[1], "w"))
PY
  "$cli" run --resume "$copy" >/dev/null 2>"$copy.err" || { cat "$copy.err"; fail "resume of $copy"; }
}

# expect2 PATTERN ARGS...: exit 2 and PATTERN on stderr
expect2() {
  local pattern=$1; shift
  set +e; "$cli" "$@" >/dev/null 2>err.txt; local rc=$?; set -e
  [ $rc = 2 ] || fail "exit $rc (2 expected) for: $* ($(cat err.txt))"
  grep -q -- "$pattern" err.txt || fail "'$pattern' not in the error for $*: $(cat err.txt)"
}

# fork_start CHILD CLABEL PARENT PLABEL STEP TOL: CHILD's first test_loss of CLABEL is at STEP and
# equals PARENT's test_loss of PLABEL at STEP — as the same text (TOL exact) or within TOL; the
# child has rows of CLABEL after STEP too. Prints the difference.
fork_start() {
  "$py" - "$@" <<'PY'
import csv, sys
child, clabel, parent, plabel, step, tol = sys.argv[1:7]
step = int(step)
def losses(d, label):
    return {int(r["step"]): r["value"] for r in csv.DictReader(open(d + "/metrics.csv"))
            if r["method"] == label and r["metric"] == "test_loss"}
c, p = losses(child, clabel), losses(parent, plabel)
assert c and min(c) == step, ("first step of", clabel, sorted(c))
assert max(c) > step, ("no rows after the fork", sorted(c))
diff = abs(float(c[step]) - float(p[step]))
print(f"{plabel} -> {clabel} at {step}: parent {p[step]} child {c[step]} |diff| {diff:.3g}")
ok = c[step] == p[step] if tol == "exact" else diff <= float(tol)
if not ok:
    sys.exit(f"{clabel} starts at {c[step]}, {plabel} was at {p[step]} (tolerance {tol})")
PY
}

case "$scenario" in
events)
  # Closed form: sgd and cf-prox, 160 steps, a state kept at every log point (20 steps).
  common=(--out runs --steps 160 --methods sgd,cf-prox --set log_every=20 --set fork_state_every=1
          --set task.n_train=1024 --set task.n_test=256 --set diagnostics.one_step_every=0
          --set diagnostics.spectrum_every=0)
  parent=$("$cli" run cf-regression "${common[@]}" 2>parent.err) || { cat parent.err; fail parent; }
  [ "$(ls "$parent/states" | wc -l)" = 7 ] || fail "parent kept $(ls "$parent/states") (7 expected: steps 20..140)"
  [ ! -e "$parent/events.csv" ] || fail "a run without events has events.csv"
  ev=$("$cli" run cf-regression "${common[@]}" --event 80:cf-prox.lambda=10 --event 80:sgd.lr=0.01 \
        2>ev.err) || { cat ev.err; fail "run with events"; }
  "$py" - "$ev" "$parent" <<'PY' || fail "events.csv / spec.json of the event run"
import csv, json, sys
ev, parent = sys.argv[1:3]
rows = list(csv.reader(open(ev + "/events.csv")))
assert rows == [["step", "method", "seed", "key", "old", "new"],
                ["80", "cf-prox", "0", "lambda", "100", "10"],
                ["80", "sgd", "0", "lr", "0.05", "0.01"]], rows
spec = json.load(open(ev + "/spec.json"))
assert spec["events"] == [{"step": 80, "method": "cf-prox", "key": "lambda", "value": 10.0},
                          {"step": 80, "method": "sgd", "key": "lr", "value": 0.01}], spec["events"]
assert spec["parent"] == "" and spec["fork_step"] == 0
PY
  compare_metrics "$ev" "$parent" upto 80 || fail "the event changed steps up to 80"
  compare_metrics "$ev" "$parent" differ_after 80 || fail "the event changed nothing after 80"
  # The fork: from-step 90 takes the state kept at 80.
  fork=$("$cli" run --fork "$parent" --from-step 90 --out runs --set methods.cf-prox.lambda=10 \
          --set methods.sgd.lr=0.01 2>fork.err) || { cat fork.err; fail fork; }
  grep -q "after step 80" fork.err || fail "the fork did not say its step: $(cat fork.err)"
  "$py" - "$fork" "$parent" <<'PY' || fail "the fork's spec.json"
import json, os, sys
d = json.load(open(sys.argv[1] + "/spec.json"))
assert d["parent"] == os.path.abspath(sys.argv[2]) and d["fork_step"] == 80, (d["parent"], d["fork_step"])
assert [m["lambda"] for m in d["methods"] if m["label"] == "cf-prox"] == [10.0]
PY
  compare_metrics "$ev" "$fork" after 80 || fail "the fork at 80 differs from the event at 80"
  # spec.json of the fork repeats the fork; of the event run, the events.
  again=$("$cli" run "$fork/spec.json" --out runs 2>/dev/null) || fail "rerun of the fork's spec.json"
  compare_metrics "$fork" "$again" same || fail "the fork's spec.json does not repeat the fork"
  again=$("$cli" run "$ev/spec.json" --out runs 2>/dev/null) || fail "rerun of the event run's spec.json"
  compare_metrics "$ev" "$again" same || fail "spec.json does not replay the events"
  cmp "$ev/events.csv" "$again/events.csv" || fail "events.csv of the rerun differs"
  # --resume from a state before the event (60) and after it (100): the same rows and events.
  resume_from "$ev" 60 before
  compare_metrics "$ev" before same || fail "resume before the event differs"
  cmp "$ev/events.csv" before/events.csv || fail "events.csv after a resume before the event"
  resume_from "$ev" 100 after
  compare_metrics "$ev" after same || fail "resume after the event differs (λ not replayed?)"
  cmp "$ev/events.csv" after/events.csv || fail "events.csv after a resume after the event"

  # ICNN: the lifter's and softplus's Adam step size (FusedAdam), 40 steps, log every 10.
  icnn=(--out runs --steps 40 --methods lifter,softplus --set log_every=10 --set fork_state_every=1
        --set icnn.width=16 --set icnn.quadrature_points=500 --set task.n_train=1024
        --set task.n_test=256)
  ip=$("$cli" run icnn-escape "${icnn[@]}" 2>ip.err) || { cat ip.err; fail "icnn parent"; }
  ie=$("$cli" run icnn-escape "${icnn[@]}" --event 20:lifter.lr=0.01 --event 20:softplus.lr=0.0001 \
        2>ie.err) || { cat ie.err; fail "icnn events"; }
  if_=$("$cli" run --fork "$ip" --from-step 20 --out runs --set methods.lifter.lr=0.01 \
         --set methods.softplus.lr=0.0001 2>if.err) || { cat if.err; fail "icnn fork"; }
  compare_metrics "$ie" "$ip" upto 20 || fail "icnn: the event changed steps up to 20"
  compare_metrics "$ie" "$ip" differ_after 20 || fail "icnn: the event changed nothing"
  compare_metrics "$ie" "$if_" after 20 || fail "icnn: the fork at 20 differs from the event at 20"
  resume_from "$ie" 30 iafter
  compare_metrics "$ie" iafter same || fail "icnn: resume after the event differs"
  ;;
push)
  small=(--out runs --steps 40 --seeds 1 --set log_every=10 --set fork_state_every=1
         --set icnn.width=16 --set icnn.quadrature_points=500 --set task.n_train=1024
         --set task.n_test=256 --event 20:push.readout=0.34,depth=-4.5)
  # The preset's own push is at step 1000: replaced by the one above.
  run=$("$cli" run icnn-escape-push "${small[@]}" --set 'events=[]' 2>push.err) \
    || { cat push.err; fail "push run"; }
  "$py" - "$run" <<'PY' || fail "events.csv / push_escaped of the push run"
import csv, json, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(d + "/events.csv")))
methods = [m["label"] for m in json.load(open(d + "/spec.json"))["methods"]]
assert [r["method"] for r in rows] == methods and all(r["key"] == "push.readout" for r in rows), rows
# 16 readout coordinates, round(0.34 * 16) = 5 pushed: at least 5/16 in the shoulder after.
for r in rows:
    assert r["step"] == "20" and float(r["new"]) >= 5 / 16 - 1e-12, r
    assert float(r["new"]) >= float(r["old"]), r
spec = json.load(open(d + "/spec.json"))
assert spec["events"] == [{"step": 20, "method": "push", "key": "readout", "value": 0.34,
                           "depth": -4.5}], spec["events"]
esc = [r for r in csv.DictReader(open(d + "/metrics.csv")) if r["metric"] == "push_escaped"]
assert sorted({int(r["step"]) for r in esc}) == [30, 40], esc
assert {r["method"] for r in esc} == set(methods)
assert all(0 <= float(r["value"]) <= 1 for r in esc)
PY
  resume_from "$run" 10 pbefore
  compare_metrics "$run" pbefore same || fail "resume before the push differs"
  cmp "$run/events.csv" pbefore/events.csv || fail "events.csv after a resume before the push"
  resume_from "$run" 30 pafter
  compare_metrics "$run" pafter same || fail "resume after the push differs"
  ;;
bad_events)
  base=(cf-regression --out runs --steps 40 --set log_every=20 --set task.n_train=256
        --set task.n_test=64)
  expect2 "STEP:LABEL.KEY=VALUE" run "${base[@]}" --event cf-prox.lambda=10
  expect2 "not a non-negative integer" run "${base[@]}" --event x:cf-prox.lambda=10
  expect2 "is not LABEL.KEY" run "${base[@]}" --event 10:lambda=10
  expect2 "not a finite number" run "${base[@]}" --event 10:cf-prox.lambda=1,5
  expect2 "events\[0\].method.*no method labelled 'nope'" run "${base[@]}" --event 10:nope.lr=1
  expect2 "events\[0\].key.*its live settings: lr, lambda" run "${base[@]}" --event 10:cf-prox.rho=0.5
  expect2 "events\[1\].value.*must be non-negative" run "${base[@]}" --event 10:cf-prox.lambda=1 \
    --event 10:cf-prox.lambda=-1
  expect2 "events\[0\].value.*positive" run "${base[@]}" --event 10:sgd.lr=0
  expect2 "events\[0\].step.*not in \[0, 40)" run "${base[@]}" --event 40:sgd.lr=0.1
  expect2 "go together" run --fork somewhere
  expect2 "cannot change it" run --resume somewhere --event 10:sgd.lr=1
  [ ! -d runs ] || [ -z "$(ls runs)" ] || fail "a bad event left a run folder: $(ls runs)"
  # A parent that kept no fork states, a step before its first, a method it did not run.
  p=$("$cli" run "${base[@]}" 2>/dev/null) || fail "parent"
  expect2 "kept none.*fork_state_every" run --fork "$p" --from-step 20
  p2=$("$cli" run "${base[@]}" --set fork_state_every=1 --methods sgd,cf-prox 2>/dev/null) || fail parent2
  expect2 "no state at or before step 10 (its fork steps: 20)" run --fork "$p2" --from-step 10
  expect2 "method 'adam' has no state in the parent" run --fork "$p2" --from-step 20 --methods adam
  expect2 "events\[0\].method.*a push needs an ICNN run" run "${base[@]}" --event 10:push.readout=0.3
  expect2 "events\[0\].depth.*σ(θ̃) < 0.05" run icnn-escape --out runs --event 10:push.readout=0.3,depth=-2
  expect2 "events\[0\].key.*readout, hidden or all" run icnn-escape --out runs --event 10:push.out=0.3
  expect2 "only ',depth=NUMBER'" run icnn-escape --out runs --event 10:push.all=0.3,deep=-5
  expect2 "fork_state_every.*needs save_state" run "${base[@]}" --set fork_state_every=1 \
    --set save_state=false
  [ "$(ls runs | wc -l)" = 2 ] || fail "a refused fork left a run folder: $(ls runs)"
  ;;
crossfork)
  # Closed form: a parent of one method (cf-ridge), 80 steps, a state kept every 20.
  cf=(--out runs --steps 80 --set log_every=20 --set fork_state_every=1 --set task.n_train=1024
      --set task.n_test=256 --set diagnostics.one_step_every=0 --set diagnostics.spectrum_every=0)
  p=$("$cli" run cf-regression "${cf[@]}" --methods cf-ridge 2>p.err) || { cat p.err; fail parent; }
  c=$("$cli" run --fork "$p" --from-step 40 --out runs --methods cf-prox 2>c.err) \
    || { cat c.err; fail "cf-prox from cf-ridge"; }
  fork_start "$c" cf-prox "$p" cf-ridge 40 exact || fail "cf-prox does not start where cf-ridge was"
  "$py" - "$c" <<'PY' || fail "spec.json of the fork records no fork_source"
import json, sys
assert json.load(open(sys.argv[1] + "/spec.json"))["fork_source"] == "cf-ridge"
PY
  again=$("$cli" run "$c/spec.json" --out runs 2>/dev/null) || fail "rerun of the fork's spec.json"
  compare_metrics "$c" "$again" same || fail "the cross fork's spec.json does not repeat it"
  # sgd from cf-ridge (a trained head takes W: float32 sums in another order, so 1e-6), beside
  # cf-ridge from its own state, which continues the parent exactly.
  c2=$("$cli" run --fork "$p" --from-step 40 --out runs --methods cf-ridge,sgd 2>c2.err) \
    || { cat c2.err; fail "sgd from cf-ridge"; }
  fork_start "$c2" sgd "$p" cf-ridge 40 1e-6 || fail "sgd does not start where cf-ridge was"
  "$py" - "$c2" "$p" <<'PY' || fail "cf-ridge beside a transferred method does not continue its parent"
import csv, sys
def rows(d):
    return [(r["step"], r["metric"], r["value"]) for r in csv.DictReader(open(d + "/metrics.csv"))
            if r["method"] == "cf-ridge" and int(r["step"]) > 40 and r["metric"] not in ("time_s", "solve_fraction")]
assert rows(sys.argv[1]) == rows(sys.argv[2]) and rows(sys.argv[1])
PY
  # Several methods in the parent: the source must be named.
  p2=$("$cli" run cf-regression "${cf[@]}" --methods cf-ridge,adam 2>/dev/null) || fail parent2
  before=$(ls runs | wc -l)
  expect2 "method 'cf-prox' has no state in the parent.*--fork-from-method" \
    run --fork "$p2" --from-step 40 --out runs --methods cf-prox
  expect2 "fork_source.*'nope' is not a method of" \
    run --fork "$p2" --from-step 40 --out runs --methods cf-prox --fork-from-method nope
  expect2 "goes with --fork" run cf-regression --out runs --fork-from-method cf-ridge
  c3=$("$cli" run --fork "$p2" --from-step 40 --out runs --methods cf-prox --fork-from-method adam \
        2>c3.err) || { cat c3.err; fail "cf-prox from adam"; }
  fork_start "$c3" cf-prox "$p2" adam 40 1e-6 || fail "cf-prox does not start where adam was"
  before=$((before + 1))

  # ICNN: 40 steps, a state every 10, width 16 (1-D Gumbel, log Z by quadrature).
  icnn=(--out runs --steps 40 --set log_every=10 --set fork_state_every=1 --set icnn.width=16
        --set icnn.quadrature_points=500 --set task.n_train=1024 --set task.n_test=256)
  ip=$("$cli" run icnn-escape "${icnn[@]}" --methods softplus,pgd 2>ip.err) \
    || { cat ip.err; fail "icnn parent"; }
  l1=$("$cli" run --fork "$ip" --from-step 20 --out runs --methods lifter --fork-from-method softplus \
        2>l1.err) || { cat l1.err; fail "lifter from softplus"; }
  fork_start "$l1" lifter "$ip" softplus 20 exact || fail "the lifter does not reproduce softplus's θ"
  l2=$("$cli" run --fork "$ip" --from-step 20 --out runs --methods lifter --fork-from-method pgd \
        2>l2.err) || { cat l2.err; fail "lifter from pgd"; }
  fork_start "$l2" lifter "$ip" pgd 20 1e-4 || fail "the lifter from pgd is off by more than the floor allows"
  lp=$("$cli" run icnn-escape "${icnn[@]}" --methods lifter 2>lp.err) || { cat lp.err; fail "lifter parent"; }
  s1=$("$cli" run --fork "$lp" --from-step 20 --out runs --methods softplus,pgd 2>s1.err) \
    || { cat s1.err; fail "softplus and pgd from the lifter"; }
  fork_start "$s1" softplus "$lp" lifter 20 exact || fail "softplus does not reproduce the lifter's θ"
  fork_start "$s1" pgd "$lp" lifter 20 exact || fail "pgd does not reproduce the lifter's θ"
  before=$((before + 5))
  expect2 "softplus-wide trains a wider ICNN" \
    run --fork "$ip" --from-step 20 --out runs --methods softplus-wide --fork-from-method softplus
  expect2 "without the slack b" \
    run --fork "$ip" --from-step 20 --out runs --methods lifter-noslack --fork-from-method pgd
  expect2 "no method of the fork starts from 'pgd'" \
    run --fork "$ip" --from-step 20 --out runs --methods softplus --fork-from-method pgd
  [ "$(ls runs | wc -l)" = "$before" ] || fail "a refused fork left a run folder: $(ls runs)"
  ;;
*) fail "unknown scenario" ;;
esac
echo "ok [$scenario]"
