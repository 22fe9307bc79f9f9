#!/usr/bin/python3
"""Loads every exported model of a LiftLab run folder with PyTorch's torch.jit.load (Debian's
python3-torch) and recomputes its logged final test metric from models/test_data.pt.

Usage: /usr/bin/python3 tests/cli/check_export.py RUN_DIR [MIN_MODELS]
Exit 0 when at least MIN_MODELS (default 1) models reproduce test_loss to 1e-5 (relative) and, for
1-D energy models, the logged log Z by the same trapezoid rule; 1 otherwise.
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F


def trapezoid_log_z(model, lo, hi, points):
    grid = torch.linspace(lo, hi, int(points), dtype=torch.float64)
    e = model(grid.to(torch.float32).unsqueeze(1)).double()
    log_w = torch.zeros_like(grid)
    log_w[0] = log_w[-1] = math.log(0.5)
    return math.log((hi - lo) / (points - 1)) + torch.logsumexp(-e + log_w, 0).item()


def main():
    run = sys.argv[1]
    wanted = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    summary = json.load(open(os.path.join(run, "summary.json")))
    spec = json.load(open(os.path.join(run, "spec.json")))
    data = torch.jit.load(os.path.join(run, "models", "test_data.pt"))
    energy_model = spec["task"]["kind"].startswith("icnn-ebm")
    checked, bad = 0, 0
    for r in summary["runs"]:
        if "model" not in r:
            continue
        model = torch.jit.load(os.path.join(run, r["model"]))
        logged = r["final"]["test_loss"]
        with torch.no_grad():
            if energy_model:
                value = model(data.x).double().mean().item() + model.log_z
                if hasattr(model, "quadrature_lo"):
                    lz = trapezoid_log_z(model, model.quadrature_lo, model.quadrature_hi,
                                         model.quadrature_points)
                    if abs(lz - r["final"]["log_z"]) > 1e-5:
                        print(f"{r['model']}: log Z {lz:.8g} != logged {r['final']['log_z']:.8g}")
                        bad += 1
            elif r["name"] == "ce":
                value = F.cross_entropy(model(data.x).double(), data.labels).item()
            else:
                value = (model(data.x).double() - data.y.double()).pow(2).mean().item()
        ok = abs(value - logged) <= 1e-5 * max(1.0, abs(logged))
        print(f"{r['model']}: test_loss {value:.8g}, logged {logged:.8g} {'ok' if ok else 'DIFFERS'}")
        checked += 1
        bad += 0 if ok else 1
    if checked < wanted:
        print(f"only {checked} exported model(s), wanted {wanted}")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
