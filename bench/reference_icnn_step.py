#!/usr/bin/python3
"""The same ICNN training steps as bench_icnn_step.cpp, in Debian's PyTorch (python3-torch).

icnn-ebm-1d sizes: ICNN E(x) = w_out' z_3 + w_x x + 0.01 x^2 with z_1 = softplus(W_0 x + b_0),
z_{i+1} = softplus(Wz_i z_i + Wx_i x + b_i), width 128, 3 layers; 1-D Gumbel samples, batch 256;
loss = mean E(x) + log Z, log Z by the trapezoid rule on N equally spaced points of [-5, 12]
(float64, as LiftLab); Adam 1e-3, global gradient-norm clip 1. Positivity of Wz_i and w_out:
pgd (clamp after the step), softplus (theta = softplus(theta~)), lifter (theta = softplus(b +
Theta_E h(X)) with the DeepSets body 1-64-64-96, ReLU, mean-pooled and standardised, one
96 -> numel readout per constrained tensor). Prints one JSON line per method.
usage: reference_icnn_step.py THREADS [QUADRATURE_POINTS]
"""
import json
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
points = int(sys.argv[2]) if len(sys.argv) > 2 else 8000
torch.set_num_threads(threads)
torch.manual_seed(0)
WIDTH, LAYERS, BATCH, N_TRAIN, LO, HI = 128, 3, 256, 20000, -5.0, 12.0
X = -torch.log(-torch.log(torch.rand(N_TRAIN, 1).clamp_min(1e-12)))  # Gumbel(0, 1)
GRID = torch.linspace(LO, HI, points, dtype=torch.float64)
GRID_F = GRID.float().unsqueeze(1)
LOG_W = torch.zeros(points, dtype=torch.float64)
LOG_W[0] = LOG_W[-1] = math.log(0.5)
LOG_H = math.log((HI - LO) / (points - 1))
SHAPES = [(WIDTH, WIDTH)] * (LAYERS - 1) + [(1, WIDTH)]


def xavier_linear(i, o):
    layer = torch.nn.Linear(i, o)
    torch.nn.init.xavier_uniform_(layer.weight)
    torch.nn.init.zeros_(layer.bias)
    return layer


class Icnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = xavier_linear(1, WIDTH)
        self.skips = torch.nn.ModuleList([xavier_linear(1, WIDTH) for _ in range(LAYERS - 1)])
        self.w_x = torch.nn.Parameter(torch.nn.init.xavier_uniform_(torch.empty(1, 1)))

    def energy(self, x, constrained):
        z = F.softplus(self.inp(x))
        for wz, skip in zip(constrained[:-1], self.skips):
            z = F.softplus(F.linear(z, wz) + skip(x))
        return (F.linear(z, constrained[-1]).squeeze(1) + F.linear(x, self.w_x).squeeze(1)
                + 0.01 * x.pow(2).sum(1))


class Lifter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(1, 64), torch.nn.ReLU(),
                                        torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                        torch.nn.Linear(64, 96))
        self.readouts = torch.nn.ModuleList()
        for s in SHAPES:
            r = torch.nn.Linear(96, s[0] * s[1])
            with torch.no_grad():
                r.weight.normal_(0.0, 0.01)
                r.bias.fill_(-2.0)
            self.readouts.append(r)

    def weights(self, batch):
        h = self.body(batch.detach()).mean(0)
        h = (h - h.mean()) / torch.sqrt(h.var(unbiased=False) + 1e-5)
        return [F.softplus(r(h).view(s)) for r, s in zip(self.readouts, SHAPES)]


def make_method(name):
    icnn = Icnn()
    extra = torch.nn.ParameterList()
    if name == "pgd":
        for s in SHAPES:
            extra.append(torch.nn.Parameter((torch.randn(s) * math.sqrt(math.pi / (2 * s[1]))).abs()))
        weights = lambda xb: list(extra)
    elif name == "softplus":
        for s in SHAPES:
            extra.append(torch.nn.Parameter(torch.full(s, -2.0)))
        weights = lambda xb: [F.softplus(t) for t in extra]
    else:
        lifter = Lifter()
        extra = lifter
        weights = lifter.weights
    params = list(icnn.parameters()) + list(extra.parameters())
    opt = torch.optim.Adam(params, lr=1e-3)
    state = {"perm": torch.randperm(N_TRAIN), "at": 0}

    def step():
        if state["at"] + BATCH > N_TRAIN:
            state["perm"], state["at"] = torch.randperm(N_TRAIN), 0
        xb = X.index_select(0, state["perm"][state["at"]:state["at"] + BATCH])
        state["at"] += BATCH
        w = weights(xb)
        e_grid = icnn.energy(GRID_F, w).double()
        log_z = LOG_H + torch.logsumexp(-e_grid + LOG_W, 0)
        loss = icnn.energy(xb, w).double().mean() + log_z
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if name == "pgd":
            with torch.no_grad():
                for t in extra:
                    t.clamp_(min=0.0)
        return loss.item()
    return step


def timed(step, calls=10, reps=5, warmup=5):
    for _ in range(warmup):
        step()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            step()
        t.append((time.perf_counter() - t0) / calls)
    return statistics.median(t)


for name in ("pgd", "softplus", "lifter"):
    s = timed(make_method(name))
    print(json.dumps({"impl": "pytorch", "method": name, "threads": threads, "points": points,
                      "steps_per_s": round(1.0 / s, 2), "torch": torch.__version__}), flush=True)
