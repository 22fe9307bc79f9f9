#!/usr/bin/env python3
"""Compares two `liftlab-cli claims` folders claim by claim (e.g. the same tier under two OpenBLAS
kernel sets): each claim's verdict and p in both, the largest relative difference of any final
metric between runs of the same method and seed, and, where the curves of a run differ, the first
logged step at which they part by more than 1e-6 and by more than 1 % (where rounding differences
start, and where training has amplified them). Markdown on stdout. Only the standard library.

usage: scripts/claims-compare.py CLAIMS_DIR_A CLAIMS_DIR_B
"""
import csv
import json
import math
import os
import sys


def load(claims_dir):
    with open(os.path.join(claims_dir, "claims.json"), encoding="utf-8") as f:
        return json.load(f)


def finals(run_dir):
    """{(method label, seed): {metric: value}} from summary.json."""
    with open(os.path.join(run_dir, "summary.json"), encoding="utf-8") as f:
        summary = json.load(f)
    out = {}
    for r in summary["runs"]:
        out[(r["method"], r["seed"])] = {k: v for k, v in (r.get("final") or {}).items()
                                         if isinstance(v, (int, float))}
    return out


def curves(run_dir):
    """{(method, seed, metric): {step: value}} from metrics.csv."""
    out = {}
    with open(os.path.join(run_dir, "metrics.csv"), encoding="utf-8") as f:
        for row in csv.DictReader(f):
            key = (row["method"], int(row["seed"]), row["metric"])
            out.setdefault(key, {})[int(row["step"])] = float(row["value"])
    return out


def rel(a, b):
    if a == b:
        return 0.0
    if not (math.isfinite(a) and math.isfinite(b)):
        return math.inf
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


def first_parting(ca, cb, method, seed, metric, threshold):
    a = ca.get((method, seed, metric), {})
    b = cb.get((method, seed, metric), {})
    for step in sorted(set(a) & set(b)):
        if rel(a[step], b[step]) > threshold:
            return step
    return None


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    dir_a, dir_b = sys.argv[1:]
    ja, jb = load(dir_a), load(dir_b)
    print(f"A: `{dir_a}` (OpenBLAS {ja.get('blas_core')}), "
          f"B: `{dir_b}` (OpenBLAS {jb.get('blas_core')})\n")
    print("| claim | verdict A | verdict B | p A | p B | largest relative change of a final "
          "metric (method, seed) | curves part (> 1e-6 / > 1 %) at step |")
    print("|---|---|---|---|---|---|---|")
    rows_b = {c["id"]: c for c in jb["claims"]}
    for ca in ja["claims"]:
        cb = rows_b.get(ca["id"])
        if cb is None:
            continue
        va, vb = ca["preset"]["verdict"], cb["preset"]["verdict"]
        pa, pb = ca["preset"].get("p"), cb["preset"].get("p")
        fmt = lambda p: "–" if p is None else f"{p:.3g}"
        worst, where, parting = 0.0, "", ""
        if ca.get("run_dir") and cb.get("run_dir"):
            ra = ca["run_dir"] if os.path.isabs(ca["run_dir"]) else os.path.join(dir_a, ca["run_dir"])
            rb = cb["run_dir"] if os.path.isabs(cb["run_dir"]) else os.path.join(dir_b, cb["run_dir"])
            fa, fb = finals(ra), finals(rb)
            for key in sorted(set(fa) & set(fb)):
                for metric in sorted(set(fa[key]) & set(fb[key])):
                    if metric in ("time_s", "solve_fraction"):
                        continue
                    d = rel(fa[key][metric], fb[key][metric])
                    if d > worst:
                        worst, where = d, f"{metric} ({key[0]}, {key[1]})"
            if worst > 0:
                metric = where.split(" ")[0]
                method, seed = where[where.index("(") + 1:-1].split(", ")
                c_a, c_b = curves(ra), curves(rb)
                curve_metric = metric if (method, int(seed), metric) in c_a else "test_loss"
                s1 = first_parting(c_a, c_b, method, int(seed), curve_metric, 1e-6)
                s2 = first_parting(c_a, c_b, method, int(seed), curve_metric, 1e-2)
                parting = f"{curve_metric}: {s1 if s1 is not None else '–'} / " \
                          f"{s2 if s2 is not None else '–'}"
        change = "identical" if worst == 0 else f"{worst:.2g} — {where}"
        flag = " **changed**" if va != vb else ""
        print(f"| {ca['id']} | {va} | {vb}{flag} | {fmt(pa)} | {fmt(pb)} | {change} | {parting} |")


if __name__ == "__main__":
    main()
