#!/usr/bin/python3
"""The same training steps as bench_training_steps.cpp, in Debian's PyTorch (python3-torch).

Sizes from resources/presets/cf-regression.json: MLP 16-128-128-64 (tanh), 4 outputs, batch 32,
4096 training samples. `adam`: Adam on backbone and linear head. `cf-prox` (backbone-first): Adam
step on the backbone at fixed W, then a no-grad forward and the float64 proximal solve, through
Woodbury when n < d (as LiftLab's automatic path does). Prints one JSON line per method in the benches' schema (bench/bench_record.h, case
"train_step"); with LIFTLAB_BENCH_SMOKE set (not "0") every timing is one call, no warm-up.
usage: reference_steps.py THREADS
"""
import json
import os
import statistics
import sys
import time

import torch

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
torch.set_num_threads(threads)
torch.manual_seed(0)
spec = json.load(open(__file__.rsplit("/", 2)[0] + "/resources/presets/cf-regression.json"))
task, bb = spec["task"], spec["backbone"]
n_train, din, dout, batch = task["n_train"], task["input_dim"], task["output_dim"], spec["batch_size"]
lam = next(m["lambda"] for m in spec["methods"] if m["name"] == "cf-prox")
X = torch.randn(n_train, din)
Y = torch.randn(n_train, dout)


def backbone():
    layers, w = [], din
    for h in bb["hidden"] + [bb["feature_dim"]]:
        layers += [torch.nn.Linear(w, h), torch.nn.Tanh()]
        w = h
    return torch.nn.Sequential(*layers)


def batches():
    while True:
        perm = torch.randperm(n_train)
        for i in range(0, n_train - batch + 1, batch):
            yield perm[i:i + batch]


def prox_solve(phi, y, lam, w0):
    phi, y = phi.double(), y.double()
    n, d = phi.shape
    rhs = phi.T @ y + lam * w0
    if n < d:
        k = phi @ phi.T
        k.diagonal().add_(lam)
        inner = torch.cholesky_solve(phi @ rhs, torch.linalg.cholesky(k))
        return (rhs - phi.T @ inner) / lam
    g = phi.T @ phi
    g.diagonal().add_(lam)
    return torch.cholesky_solve(rhs, torch.linalg.cholesky(g))


def timed(step, calls=200, reps=5, warmup=50):
    if os.environ.get("LIFTLAB_BENCH_SMOKE", "0") not in ("", "0"):
        calls, reps, warmup = 1, 1, 0
    for _ in range(warmup):
        step()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            step()
        t.append((time.perf_counter() - t0) / calls)
    return statistics.median(t)


def adam_method():
    net, head = backbone(), torch.nn.Linear(bb["feature_dim"], dout)
    opt = torch.optim.Adam(list(net.parameters()) + list(head.parameters()), lr=1e-3)
    it = batches()

    def step():
        idx = next(it)
        xb, yb = X.index_select(0, idx), Y.index_select(0, idx)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(head(net(xb)), yb)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def prox_method():
    net = backbone()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    d = bb["feature_dim"]
    state = {"w": torch.zeros(d + 1, dout, dtype=torch.float64)}
    it = batches()

    def step():
        idx = next(it)
        xb, yb = X.index_select(0, idx), Y.index_select(0, idx)
        wf = state["w"].float()
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(torch.addmm(wf[d], net(xb), wf[:d]), yb)
        loss.backward()
        opt.step()
        with torch.no_grad():
            phi = torch.cat([net(xb).double(), torch.ones(batch, 1, dtype=torch.float64)], 1)
            state["w"] = prox_solve(phi, yb, lam, state["w"])
        return loss.item()
    return step


for name, make in (("adam", adam_method), ("cf-prox", prox_method)):
    s = timed(make())
    print(json.dumps({"schema": "liftlab-bench/1", "bench": "reference_steps.py", "impl": "pytorch",
                      "case": "train_step", "method": name, "threads": threads,
                      "params": {"preset": "cf-regression", "batch": batch},
                      "results": {"steps_per_s": 1.0 / s},
                      "versions": {"torch": torch.__version__}}), flush=True)
