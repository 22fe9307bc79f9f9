#!/usr/bin/python3
"""Checks a run folder against the uninterrupted run of the same spec (tests/cli/kill_anywhere.sh).

  kill_check.py killed REF DIR LOG_EVERY   DIR was killed: its files are exact prefixes of REF's,
                                           trajectories at most one log interval behind, and
                                           summary.json says running or failed (ok if it ended)
  kill_check.py resumed REF DIR            DIR was resumed to the end: the same rows, final
                                           metrics and trajectories as REF (timings aside)
Exit 0 when it holds; otherwise the first difference on stderr and exit 1.
"""
import csv
import json
import os
import sys


TIMED = {"time_s", "solve_fraction"}  # wall-clock figures: never equal between two runs


def rows(run, name):
    path = os.path.join(run, name)
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        out = list(csv.reader(f))
    if name == "metrics.csv":
        out = [r for r in out if len(r) < 4 or r[3] not in TIMED]
    return out


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def last_step(metric_rows, method, seed):
    steps = [int(r[0]) for r in metric_rows[1:] if r[1] == method and r[2] == seed]
    return max(steps) if steps else 0


def main():
    mode, ref, run = sys.argv[1], sys.argv[2], sys.argv[3]
    summary = json.load(open(os.path.join(run, "summary.json")))
    status = summary.get("status")
    files = ["metrics.csv", "spectra.csv", "traces.csv", "dwells.csv"]
    if mode == "killed":
        log_every = int(sys.argv[4])
        if status not in ("running", "failed", "ok"):
            fail(f"summary.json says {status}")
        for name in files:
            got, want = rows(run, name), rows(ref, name)
            if got != want[: len(got)]:
                for i, (g, w) in enumerate(zip(got, want)):
                    if g != w:
                        fail(f"{name} row {i + 1} differs: {g} vs {w}")
                fail(f"{name} has {len(got)} rows, more than the reference's {len(want)}")
            if status == "ok" and got != want:
                fail(f"{name}: status ok but only {len(got)} of {len(want)} rows")
        metrics = rows(run, "metrics.csv")
        tdir = os.path.join(ref, "trajectories")
        for file in sorted(os.listdir(tdir)) if os.path.isdir(tdir) else []:
            method, seed = file[:-3].rsplit("_seed", 1)
            logged = last_step(metrics, method, seed)
            mine = os.path.join(run, "trajectories", file)
            steps = load_steps(mine) if os.path.exists(mine) else []
            ref_steps = load_steps(os.path.join(tdir, file))
            if steps != ref_steps[: len(steps)]:
                fail(f"trajectory {file}: steps {steps} are not a prefix of {ref_steps}")
            behind = [s for s in ref_steps if s <= logged - log_every and s not in steps]
            if behind:
                fail(f"trajectory {file}: checkpoints {behind} missing, more than one log "
                     f"interval ({log_every}) behind the metrics (step {logged})")
        return 0
    # resumed
    if status != "ok":
        fail(f"the resumed run ends {status}")
    for name in files:
        if rows(run, name) != rows(ref, name):
            got, want = rows(run, name), rows(ref, name)
            for i, (g, w) in enumerate(zip(got, want)):
                if g != w:
                    fail(f"{name} row {i + 1} differs after the resume: {g} vs {w}")
            fail(f"{name}: {len(got)} rows after the resume, {len(want)} in the reference")
    ref_summary = json.load(open(os.path.join(ref, "summary.json")))
    for a, b in zip(summary["runs"], ref_summary["runs"]):
        fa = {k: v for k, v in a["final"].items() if k not in TIMED}
        fb = {k: v for k, v in b["final"].items() if k not in TIMED}
        if json.dumps(fa, sort_keys=True) != json.dumps(fb, sort_keys=True):
            fail(f"{a['method']} seed {a['seed']}: final metrics differ: {fa} vs {fb}")
        if a["status"] != b["status"]:
            fail(f"{a['method']} seed {a['seed']}: status {a['status']} vs {b['status']}")
    tdir = os.path.join(ref, "trajectories")
    for file in sorted(os.listdir(tdir)) if os.path.isdir(tdir) else []:
        mine, theirs = os.path.join(run, "trajectories", file), os.path.join(tdir, file)
        # The same tensors make the same bytes; only if not, compare what they hold.
        if not os.path.exists(mine):
            fail(f"trajectory {file} missing after the resume")
        if open(mine, "rb").read() != open(theirs, "rb").read() and load_all(mine) != load_all(theirs):
            fail(f"trajectory {file} differs after the resume")
    return 0


def load_all(path):
    return load_tensors(path)


def load_steps(path):
    return [int(s) for s in load_tensors(path)[0]]


def load_tensors(path):
    """[steps, θ-space rows, lifted rows] of a trajectory file (engine/run/trajectory_file.h:
    "LIFTLAB-TRAJECTORY 2\n", then records "<length>\n<state archive>", each archive in LiftLab's
    state format "LIFTLAB-STATE 1\n<index length>\n<JSON index>\n<raw bytes>" with keys "steps",
    "theta", "lifted"), read here with the standard library only. A cut last record (a killed
    run) is left out, as the engine's reader does."""
    with open(path, "rb") as f:
        data = f.read()
    magic = b"LIFTLAB-TRAJECTORY 2\n"
    if not data.startswith(magic):
        return load_archive(data, path)  # the earlier single-archive format
    out, at = [[], [], []], len(magic)
    while at < len(data):
        eol = data.find(b"\n", at)
        if eol < 0:
            break
        length = int(data[at:eol])
        if length > len(data) - eol - 1:
            break
        for whole, part in zip(out, load_archive(data[eol + 1:eol + 1 + length], path)):
            whole.extend(part)
        at = eol + 1 + length
    return out


def load_archive(data, path):
    import struct

    magic = b"LIFTLAB-STATE 1\n"
    if not data.startswith(magic):
        raise ValueError(f"{path}: not a LiftLab state file")
    eol = data.index(b"\n", len(magic))
    head_len = int(data[len(magic):eol])
    index = json.loads(data[eol + 1:eol + 1 + head_len])
    raw = data[eol + 1 + head_len + 1:]
    codes = {"float32": "f", "float64": "d", "int64": "q", "uint8": "B"}

    def tensor(key):
        e = index[key]
        n = 1
        for d in e["shape"]:
            n *= d
        flat = list(struct.unpack_from(f"<{n}{codes[e['tensor']]}", raw, e["offset"]))
        if len(e["shape"]) <= 1:
            return flat
        width = n // e["shape"][0] if e["shape"][0] else 0
        return [flat[i * width:(i + 1) * width] for i in range(e["shape"][0])]

    return [tensor("steps"), tensor("theta"), tensor("lifted")]


if __name__ == "__main__":
    sys.exit(main())
