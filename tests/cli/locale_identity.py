#!/usr/bin/python3
"""A run's files do not depend on the locale (issue 36): the same two runs — a closed-form
regression on a CSV data set (with decimal --set values) and a short ICNN escape run (traces and
dwells) — are made under C, de_DE.UTF-8 and fr_FR.UTF-8, and every file of the three run folders
must be byte-identical apart from times. Then a C folder is read (`report`) under a comma-decimal
locale and the other way round, and the window opens C and comma-locale runs under other locales.

Times, the only fields masked: wall-clock seconds (`time_s`) and the share of them spent in the
closed-form solve (`solve_fraction`) — rows of metrics.csv, finals in summary.json, columns of
figures/summary.{md,csv}, the same finals inside resume/unit*.state (whose `sizes` entry, the CSV
byte counts, is checked against the files instead) — the folder name's date stamp,
figures/timing.png (a picture of those times), and the writer's pid in resume/lock. The run's stderr is compared as well, with the
elapsed times, the time column and the folder's path masked.

usage: locale_identity.py LIFTLAB_CLI LIFTLAB_GUI WORKDIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

LOCALES = ["C", "de_DE.UTF-8", "fr_FR.UTF-8"]
TIME_KEYS = ("time_s", "solve_fraction")
RUNS = {
    # A user's CSV data set (decimal points), decimal --set values, spectra.csv.
    "cf": ["cf-regression", "--steps", "40", "--set", "log_every=20",
           "--set", "task.kind=csv-regression", "--set", "task.csv_path=DATA",
           "--set", "methods.cf-prox.lambda=12.5", "--set", "methods.sgd.lr=0.025",
           "--set", "diagnostics.spectrum_every=20"],
    # traces.csv and dwells.csv.
    "icnn": ["icnn-escape", "--steps", "30", "--set", "log_every=10", "--set", "icnn.width=16",
             "--set", "icnn.quadrature_points=500", "--set", "task.n_train=1024",
             "--set", "task.n_test=256"],
}


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)


def env_for(loc):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("LC_") or k == "LANG" or k == "LANGUAGE":
            del env[k]
    env["LC_ALL"] = loc
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    return env


def installed_locales():
    out = subprocess.run(["locale", "-a"], capture_output=True, text=True).stdout.split()
    return {l.lower().replace("utf-8", "utf8") for l in out}


def masked_csv_rows(text, column_of_key, value_column):
    out = []
    for line in text.split("\n"):
        cells = line.split(",")
        if len(cells) > max(column_of_key, value_column) and cells[column_of_key] in TIME_KEYS:
            cells[value_column] = "<time>"
        out.append(",".join(cells))
    return "\n".join(out)


def masked_table(text, sep):
    """summary.md (sep '|') or summary.csv (sep ','): the time columns masked."""
    lines = text.split("\n")
    header = lines[0].split(sep)
    timed = [i for i, h in enumerate(header)
             if any(h.strip().startswith(k) for k in TIME_KEYS)]
    out = [lines[0]]
    for line in lines[1:]:
        cells = line.split(sep)
        if len(cells) == len(header):
            for i in timed:
                if not set(cells[i].strip()) <= set("-|"):
                    cells[i] = "<time>"
        out.append(sep.join(cells))
    return "\n".join(out)


def masked_json(text):
    return re.sub(r'("(?:%s)": )[^,\n}]+' % "|".join(TIME_KEYS), r"\1<time>", text)


def parse_state(data):
    first = data.index(b"\n")
    second = data.index(b"\n", first + 1)
    n = int(data[first + 1:second])
    head = json.loads(data[second + 1:second + 1 + n])
    raw = data[second + 2 + n:]
    return data[:second], head, raw


def masked_state(path, run_dir):
    """A resume state: its index and tensors, the finals' times masked, `sizes` checked."""
    magic, head, raw = parse_state(open(path, "rb").read())
    shared = ["metrics.csv", "spectra.csv", "traces.csv", "dwells.csv", "events.csv"]
    out = [magic]
    for key in sorted(head):
        entry = head[key]
        if "tensor" not in entry:
            out.append(f"{key}={json.dumps(entry, sort_keys=True)}".encode())
            continue
        blob = raw[entry["offset"]:entry["offset"] + entry["bytes"]]
        if key == "sizes":  # the CSV byte counts at the save: the files' sizes at the end
            sizes = [int.from_bytes(blob[8 * i:8 * i + 8], "little", signed=True)
                     for i in range(len(blob) // 8)]
            have = [os.path.getsize(os.path.join(run_dir, f))
                    if os.path.exists(os.path.join(run_dir, f)) else 0 for f in shared]
            if head.get("finished", {}).get("int") == 1 and sizes != have:
                fail(f"{path}: sizes {sizes} are not the files' sizes {have}")
            blob = b"<sizes>"
        elif key.endswith(".final_values"):
            names = json.loads(head[key[:-len("values")] + "keys"]["text"])
            blob = bytearray(blob)
            for i, name in enumerate(names):
                if name in TIME_KEYS:
                    blob[8 * i:8 * i + 8] = b"<time>.."
            blob = bytes(blob)
        entry = {k: v for k, v in entry.items() if k not in ("offset", "bytes")}
        out.append(f"{key}={json.dumps(entry, sort_keys=True)}".encode() + b":" + blob)
    return b"\n".join(out)


def comparable(run_dir, rel):
    path = os.path.join(run_dir, rel)
    name = os.path.basename(rel)
    if name == "timing.png":
        return None, "skipped (a picture of the times)"
    if rel.startswith("resume/") and name.endswith(".state"):
        return masked_state(path, run_dir), "finals' time_s/solve_fraction masked, sizes checked"
    data = open(path, "rb").read()
    if rel == "resume/lock":
        # "<host name> <pid>\n": which process wrote the run (the window's killed-run check).
        if not re.fullmatch(rb"\S* [1-9][0-9]*\n", data):
            raise SystemExit(f"FAIL: {path} is not '<host> <pid>': {data!r}")
        return re.sub(rb" [0-9]+\n$", b" <pid>\n", data), "the writer's pid masked"
    if name == "metrics.csv":
        return masked_csv_rows(data.decode(), 3, 4).encode(), "time_s/solve_fraction rows masked"
    if name == "summary.json":
        return masked_json(data.decode()).encode(), "time_s/solve_fraction masked"
    if name == "summary.md":
        return masked_table(data.decode(), "|").encode(), "time columns masked"
    if name == "summary.csv":
        return masked_table(data.decode(), ",").encode(), "time columns masked"
    return data, "byte-identical"


def masked_stderr(text, run_dir):
    text = text.replace(run_dir, "RUN")
    text = re.sub(r"elapsed \S+s", "elapsed <time>", text)
    # The summary table's last column is time_s (then test_accuracy for classification only).
    lines = []
    for line in text.split("\n"):
        if re.match(r"^\S+ +\d+  \S+ +\d+ ", line):
            line = re.sub(r" +\S+$", " <time>", line)
        lines.append(line)
    return "\n".join(lines)


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(2)
    cli, gui, work = (os.path.abspath(a) for a in sys.argv[1:])
    have = installed_locales()
    missing = [l for l in LOCALES[1:] if l.lower().replace("utf-8", "utf8") not in have]
    if missing:
        fail(f"locale(s) {', '.join(missing)} not installed: run scripts/install-deps.sh "
             "(it generates them)")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    data = os.path.join(work, "data.csv")
    with open(data, "w") as f:  # y = 0.5 x1 - 1.25 x2 + 0.75 x3 + noise, four decimals
        f.write("x1,x2,x3,y\n")
        state = 12345
        for _ in range(256):
            xs = []
            for _ in range(4):
                state = (1103515245 * state + 12345) % 2**31
                xs.append(state / 2**30 - 1.0)
            y = 0.5 * xs[0] - 1.25 * xs[1] + 0.75 * xs[2] + 0.05 * xs[3]
            f.write(",".join(f"{v:.4f}" for v in xs[:3] + [y]) + "\n")

    t0 = time.monotonic()
    folders = {}  # (run, locale) → run folder
    stderrs = {}
    for run, args in RUNS.items():
        for loc in LOCALES:
            out = os.path.join(work, run, loc)
            argv = [cli, "run", *[a.replace("DATA", data) for a in args], "--out", out]
            r = subprocess.run(argv, capture_output=True, text=True, env=env_for(loc),
                               timeout=300)
            if r.returncode != 0:
                fail(f"{run} under LC_ALL={loc}: exit {r.returncode}\n{r.stderr}")
            if "figures not written" in r.stderr or "note:" in r.stderr:
                fail(f"{run} under LC_ALL={loc}: the run's own report failed:\n{r.stderr}")
            folders[run, loc] = r.stdout.strip().splitlines()[-1]
            stderrs[run, loc] = masked_stderr(r.stderr, folders[run, loc])
    print(f"runs: {len(folders)} in {time.monotonic() - t0:.1f} s")

    rows = []
    for run in RUNS:
        ref = folders[run, "C"]
        files = sorted(os.path.relpath(os.path.join(d, f), ref)
                       for d, _, fs in os.walk(ref) for f in fs)
        for loc in LOCALES[1:]:
            other = folders[run, loc]
            theirs = sorted(os.path.relpath(os.path.join(d, f), other)
                            for d, _, fs in os.walk(other) for f in fs)
            if theirs != files:
                fail(f"{run}: the files under {loc} differ from C's: "
                     f"{sorted(set(files) ^ set(theirs))}")
            if stderrs[run, loc] != stderrs[run, "C"]:
                a, b = stderrs[run, "C"].split("\n"), stderrs[run, loc].split("\n")
                diff = [f"  C:   {x}\n  {loc}: {y}" for x, y in zip(a, b) if x != y][:5]
                fail(f"{run}: stderr under {loc} differs from C's:\n" + "\n".join(diff))
        for rel in files:
            mine, how = comparable(ref, rel)
            for loc in LOCALES[1:]:
                theirs, _ = comparable(folders[run, loc], rel)
                if mine != theirs:
                    a = mine.decode(errors="replace").split("\n")
                    b = theirs.decode(errors="replace").split("\n")
                    diff = [f"  C:   {x[:120]}\n  {loc}: {y[:120]}"
                            for x, y in zip(a, b) if x != y][:5]
                    fail(f"{run}/{rel} under {loc} differs from C's:\n" + "\n".join(diff))
            rows.append((f"{run}/{rel}", how))

    # Read back under another locale: each run's C folder under a comma-decimal locale and a
    # comma-decimal one under C, by the CLI's report (no note, no error) and by the window.
    reads = opens = 0
    for run in RUNS:
        for writer, reader in [("C", "de_DE.UTF-8"), ("fr_FR.UTF-8", "C")]:
            folder = folders[run, writer]
            r = subprocess.run([cli, "report", folder], capture_output=True, text=True,
                               env=env_for(reader), timeout=120)
            if r.returncode != 0 or r.stderr.strip():
                fail(f"{run} written under {writer}, report under {reader}: exit "
                     f"{r.returncode}\n{r.stderr}")
            reads += 1
        for writer, reader in [("C", "de_DE.UTF-8"), ("de_DE.UTF-8", "fr_FR.UTF-8")]:
            r = subprocess.run([gui, "--open", folders[run, writer], "--quit-when-done"],
                               capture_output=True, text=True, env=env_for(reader), timeout=120)
            if r.returncode != 0:
                fail(f"the window under {reader} opening {run} written under {writer}: exit "
                     f"{r.returncode}\n{r.stderr}")
            opens += 1

    width = max(len(f) for f, _ in rows)
    print(f"{'file (C vs de_DE.UTF-8 vs fr_FR.UTF-8)':<{width}}  outcome")
    for f, how in rows:
        print(f"{f:<{width}}  {how}")
    print(f"cross-locale reads: {reads} report(s), {opens} window --open(s), all clean")
    print(f"locale identity: OK in {time.monotonic() - t0:.1f} s")


if __name__ == "__main__":
    main()
