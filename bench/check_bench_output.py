#!/usr/bin/env python3
"""The benchmarks' output schema, "liftlab-bench/1", and its check.

Every bench program (liftlab-bench-*) and reference script (reference_*.py) prints one JSON object
per line on stdout (bench/bench_record.h writes them for the C++ side):

  schema   "liftlab-bench/1"
  bench    the program or script that measured ("liftlab-bench-icnn", "reference_steps.py")
  impl     "liftlab" or "pytorch"
  case     what one line measures (below)
  method   the method measured, or "" for a line that is no method's
  threads  compute threads (an int >= 0; 0: the program's own default, the GUI bench)
  params   the sizes: an object of numbers and strings
  results  the measurements: an object of finite numbers, each key ending in its unit:
           _per_s, _ms, _s, _mb, _bytes or _ratio
  versions (optional) an object of version strings ({"torch": "1.13.0"})

CASES below lists, for every (bench, case), the params and results keys its lines carry; a line
of an unlisted case, or with other keys, is an error, so a changed bench changes this table (and
the scripts that read it) in the same commit.

usage: check_bench_output.py FILE...    checks the JSON lines of each FILE (exit 1 on an error)
       check_bench_output.py --smoke ROOT BUILD_DIR
           runs bench/side_by_side.sh and bench/data_parallel.sh on a tiny budget
           (LIFTLAB_BENCH_SMOKE=1: one call per timing) with the benches already built in
           BUILD_DIR, checks that they succeed and that every line they measured fits the schema,
           and that every case of CASES was measured.
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import time

SCHEMA = "liftlab-bench/1"
UNITS = ("_per_s", "_ms", "_s", "_mb", "_bytes", "_ratio")
TOP = {"schema", "bench", "impl", "case", "method", "threads", "params", "results"}

STEP = ({"preset", "batch"}, {"steps_per_s"})
ICNN_STEP = ({"preset", "points"}, {"steps_per_s"})
DDP = ({"ranks", "batch", "n_full", "feature_dim"},
       {"steps_per_s", "sent_bytes", "gradient_bytes", "gather_bytes"})
LATENESS = {"median_lateness_ms", "p99_lateness_ms", "longest_stall_ms",
            "longest_stall_gui_ran_ms", "longest_stall_gui_waited_ms", "longest_gui_run_ms",
            "gui_cpu_ratio"}
PANEL_REPLOT = ({"panel", "seconds"}, {"longest_replot_ms", "longest_replot_cpu_ms"})
# The fork + landscape case's timeline (s after the fork's Start), in the order it must happen:
# the fork trains before the landscape starts and still trains when the measured window ends.
FORK_LANDSCAPE_TIMELINE = ("fork_first_point_s", "landscape_started_s", "landscape_finished_s",
                           "measured_until_s", "fork_ended_s")
CASES = {
    ("liftlab-bench-steps", "train_step"): STEP,
    ("reference_steps.py", "train_step"): STEP,
    ("liftlab-bench-icnn", "train_step"): ICNN_STEP,
    ("reference_icnn_step.py", "train_step"): ICNN_STEP,
    ("liftlab-bench-icnn", "readout_floor"): (
        {"preset", "points"}, {"readout_ms", "step_ms", "moved_mb", "readout_gb_per_s"}),
    ("liftlab-bench-prox", "prox_vs_grad"): (
        {"d", "n", "input", "hidden", "outputs", "lambda"},
        {"grad_ms", "prox_cholesky_ms", "prox_woodbury_ms", "w_first_ms", "cholesky_ratio",
         "woodbury_ratio", "w_first_ratio", "forward_ms", "solve_ms", "gram_ms", "factor_ms",
         "floor_ratio"}),
    ("liftlab-bench-ddp", "step"): DDP,
    ("liftlab-bench-ddp", "gram"): DDP,
    ("liftlab-bench-ddp", "statistics_bytes"): ({"feature_dim", "outputs"}, {"statistics_bytes"}),
    ("liftlab-bench-gui", "event_loop"): (
        {"preset", "methods", "seconds", "tick_ms", "points_plotted", "gui_sched"}, LATENESS),
    ("liftlab-bench-gui", "panel_replot"): PANEL_REPLOT,
    ("liftlab-bench-gui", "event_loop_fork_landscape"): (
        {"preset", "methods", "fork_step", "grid_theta", "grid_lifted", "tick_ms",
         "points_plotted", "gui_sched"},
        LATENESS | {"measured_s"} | set(FORK_LANDSCAPE_TIMELINE)),
    ("liftlab-bench-gui", "panel_replot_fork_landscape"): PANEL_REPLOT,
    ("liftlab-bench-gui", "curve_replot"): (
        {"points", "width", "height", "runs"}, {"median_ms", "worst_ms"}),
}


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_line(text):
    """The problems of one output line (an empty list when it fits the schema)."""
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        return [f"not JSON ({e})"]
    if not isinstance(d, dict):
        return ["not a JSON object"]
    errors = []
    keys = set(d)
    if not TOP <= keys or not keys <= TOP | {"versions"}:
        errors.append(f"keys {sorted(keys)}; expected {sorted(TOP)} (+ versions)")
        return errors
    if d["schema"] != SCHEMA:
        errors.append(f"schema {d['schema']!r}, expected {SCHEMA!r}")
    if d["impl"] not in ("liftlab", "pytorch"):
        errors.append(f"impl {d['impl']!r}")
    for k in ("bench", "case", "method"):
        if not isinstance(d[k], str):
            errors.append(f"{k} is not a string")
    if not isinstance(d["threads"], int) or isinstance(d["threads"], bool) or d["threads"] < 0:
        errors.append(f"threads {d['threads']!r} is not an int >= 0")
    if not isinstance(d["params"], dict) or not isinstance(d["results"], dict):
        return errors + ["params and results must be objects"]
    for k, v in d["params"].items():
        if not (is_number(v) or isinstance(v, str)):
            errors.append(f"params.{k} = {v!r} is neither a number nor a string")
    for k, v in d["results"].items():
        if not k.endswith(UNITS):
            errors.append(f"results.{k}: the key names no unit ({', '.join(UNITS)})")
        if not is_number(v) or not math.isfinite(v):
            errors.append(f"results.{k} = {v!r} is not a finite number")
    if "versions" in d and not (isinstance(d["versions"], dict) and
                                all(isinstance(v, str) for v in d["versions"].values())):
        errors.append("versions must map names to strings")
    expected = CASES.get((d.get("bench"), d.get("case")))
    if expected is None:
        errors.append(f"unknown case {d.get('bench')!r}/{d.get('case')!r} (add it to CASES)")
    else:
        params, results = expected
        if set(d["params"]) != params:
            errors.append(f"params {sorted(d['params'])}, expected {sorted(params)}")
        if set(d["results"]) != results:
            errors.append(f"results {sorted(d['results'])}, expected {sorted(results)}")
        elif d["case"] == "event_loop_fork_landscape":
            times = [d["results"][k] for k in FORK_LANDSCAPE_TIMELINE]
            if not all(is_number(t) for t in times) or times != sorted(times):
                errors.append("the fork and the landscape did not overlap: "
                              + ", ".join(f"{k} {d['results'][k]}"
                                          for k in FORK_LANDSCAPE_TIMELINE))
    return errors


def check_lines(lines, where):
    """(problems, cases seen) of the non-empty lines; `where` names their source."""
    problems, seen = [], set()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        for p in check_line(line):
            problems.append(f"{where}:{number}: {p}")
        try:
            d = json.loads(line)
            seen.add((d.get("bench"), d.get("case")))
        except (json.JSONDecodeError, AttributeError):
            pass
    return problems, seen


def smoke(root, build_dir):
    env = dict(os.environ, LIFTLAB_BENCH_SMOKE="1", LIFTLAB_BENCH_BUILT=build_dir,
               QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"),
               OMP_WAIT_POLICY="PASSIVE")
    problems, seen = [], set()
    with tempfile.TemporaryDirectory() as tmp:
        runs = [("side_by_side.sh", []),
                ("data_parallel.sh", ["--batch", "64", "--n-full", "512", "--feature-dim", "16"])]
        for script, args in runs:
            log = os.path.join(tmp, script + ".jsonl")
            t0 = time.monotonic()
            r = subprocess.run(["bash", os.path.join(root, "bench", script)] + args,
                               env=dict(env, LIFTLAB_BENCH_JSON=log), capture_output=True,
                               text=True, timeout=300)
            print(f"{script}: exit {r.returncode} in {time.monotonic() - t0:.1f} s")
            print(r.stdout)
            if r.returncode != 0:
                problems.append(f"{script} failed (exit {r.returncode}):\n{r.stderr[-3000:]}")
                continue
            lines = open(log).read().splitlines() if os.path.exists(log) else []
            if not lines:
                problems.append(f"{script} wrote no JSON lines to LIFTLAB_BENCH_JSON")
            p, s = check_lines(lines, script)
            problems += p
            seen |= s
    for case in sorted(set(CASES) - seen):
        problems.append(f"no line of {case[0]}/{case[1]} was measured")
    return problems


def main():
    args = sys.argv[1:]
    if len(args) == 3 and args[0] == "--smoke":
        problems = smoke(args[1], args[2])
    elif args and not args[0].startswith("-"):
        problems = []
        for path in args:
            problems += check_lines(open(path).read().splitlines(), path)[0]
    else:
        print(__doc__)
        return 2
    for p in problems:
        print(p)
    print(f"{len(problems)} problem(s)" if problems else f"every line fits {SCHEMA}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
