#!/usr/bin/env python3
"""Per-arm statistics of the final test NLL over seeds of a run folder (the CP-Flow sweeps of
scripts/cpflow-demo-sweeps.sh; any ICNN run folder works), as a Markdown table on stdout:
seeds, mean, sd, median, min, max, and the share of seeds in the low-loss basin.

The low-loss basin is defined from the modes of the distribution of every arm's final test NLL
pooled: a Gaussian kernel density estimate (Silverman's bandwidth 0.9·min(sd, IQR/1.34)·n^(-1/5))
on 2000 points; its local maxima holding at least 5 % of the highest one are the modes; the basin
is everything below the density's lowest point between the lowest-NLL mode and the next one. With
a single mode there is no separate basin and the share is not given. Only the standard library.

usage: scripts/cpflow-demo-stats.py RUN_DIR [--metric test_loss]
"""
import json
import math
import statistics
import sys


def finals(run_dir, metric):
    """{method label: [(seed, value or None), ...]}; None where the run has no finite value
    (diverged or failed)."""
    with open(f"{run_dir}/summary.json", encoding="utf-8") as f:
        summary = json.load(f)
    out = {}
    for run in summary["runs"]:
        value = (run.get("final") or {}).get(metric)
        if value is not None and not math.isfinite(value):
            value = None
        out.setdefault(run["name"], []).append((run["seed"], value))
    return out


def basin_threshold(values):
    """The antimode between the two lowest-NLL modes of the pooled values' KDE, or None."""
    n = len(values)
    if n < 4:
        return None
    q = statistics.quantiles(values, n=4)
    spread = min(statistics.stdev(values), (q[2] - q[0]) / 1.34)
    if spread <= 0:
        return None
    h = 0.9 * spread * n ** -0.2
    lo, hi = min(values) - 3 * h, max(values) + 3 * h
    grid = [lo + (hi - lo) * i / 1999 for i in range(2000)]
    density = [sum(math.exp(-0.5 * ((g - v) / h) ** 2) for v in values) for g in grid]
    top = max(density)
    modes = [i for i in range(1, 1999)
             if density[i - 1] < density[i] >= density[i + 1] and density[i] >= 0.05 * top]
    if len(modes) < 2:
        return None
    a, b = modes[0], modes[1]
    valley = min(range(a, b + 1), key=lambda i: density[i])
    return grid[valley]


def main():
    args = sys.argv[1:]
    metric = "test_loss"
    if "--metric" in args:
        i = args.index("--metric")
        metric = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        sys.exit(__doc__)
    run_dir = args[0]
    arms = finals(run_dir, metric)
    if not arms:
        sys.exit(f"{run_dir}: no finite final {metric}")
    pooled = [v for rows in arms.values() for _, v in rows if v is not None]
    if not pooled:
        sys.exit(f"{run_dir}: no finite final {metric}")
    cut = basin_threshold(pooled)
    with open(f"{run_dir}/spec.json", encoding="utf-8") as f:
        spec = json.load(f)
    print(f"**{spec['name']}**, target {spec['task']['target']}, {spec['steps']} steps: "
          f"final {metric} over seeds")
    print()
    if cut is None:
        print("Low-loss basin: the pooled distribution has one mode (no separate basin).")
    else:
        print(f"Low-loss basin: final {metric} < {cut:.4f} (the antimode between the two "
              "lowest modes of the pooled KDE).")
    print()
    print("| arm | seeds | not finite | mean | sd | median | min | max | in low-loss basin |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, rows in arms.items():
        v = [x for _, x in rows if x is not None]
        bad = len(rows) - len(v)
        if not v:
            print(f"| {name} | {len(rows)} | {bad} | — | — | — | — | — | — |")
            continue
        sd = statistics.stdev(v) if len(v) > 1 else float("nan")
        share = "—" if cut is None else f"{sum(x < cut for x in v)}/{len(v)}"
        print(f"| {name} | {len(rows)} | {bad} | {statistics.fmean(v):.4f} | {sd:.4f} | "
              f"{statistics.median(v):.4f} | {min(v):.4f} | {max(v):.4f} | {share} |")


if __name__ == "__main__":
    main()
