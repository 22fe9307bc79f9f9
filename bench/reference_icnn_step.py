#!/usr/bin/python3
"""The same ICNN training steps as bench_icnn_step.cpp, in Debian's PyTorch (python3-torch).

icnn-ebm-1d sizes and recipe (docs/methods.md §3, issue 10): ICNN E(x) = w_out' z_3 + w_x x +
0.01 x^2 with z_1 = softplus(W_0 x + b_0), z_{i+1} = softplus(Wz_i z_i + Wx_i x + b_i), width 128,
3 layers; fresh Gumbel(0, 1) samples every step, batch 256; loss = mean E(x) + log Z, the training
log Z by composite 8-node Gauss-Legendre on N nodes of [-5, 12] (float64, as LiftLab); Adam 1e-3,
global gradient-norm clip 1. Positivity of Wz_i and w_out: pgd (folded-normal init, clamp after
the step), softplus (theta = softplus(theta~), theta~ = softplus^-1 of the folded-normal draw),
lifter (every ICNN tensor emitted by one 96 -> numel readout from the DeepSets code h(X): body
1-64-64-96 with ReLU after every layer, mean-pooled, standardised by the unbiased std + 1e-5;
softplus and slack bias -2 on the constrained heads; the ICNN template frozen).
Prints one JSON line per method in the benches' schema (bench/bench_record.h, case
"train_step"); with LIFTLAB_BENCH_SMOKE set (not "0") every timing is one call, no warm-up.
usage: reference_icnn_step.py THREADS [TRAINING_QUADRATURE_NODES]
"""
import json
import os
import math
import statistics
import sys
import time

import numpy
import torch
import torch.nn.functional as F

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
points = int(sys.argv[2]) if len(sys.argv) > 2 else 512
torch.set_num_threads(threads)
torch.manual_seed(0)
WIDTH, LAYERS, BATCH, LO, HI, PANEL = 128, 3, 256, -5.0, 12.0, 8
u, uw = numpy.polynomial.legendre.leggauss(PANEL)
panel = (HI - LO) / (points // PANEL)
mids = LO + (numpy.arange(points // PANEL) + 0.5) * panel
NODES_F = torch.tensor((mids[:, None] + 0.5 * panel * u[None, :]).ravel()).float().unsqueeze(1)
LOG_W = torch.tensor(numpy.log(numpy.tile(0.5 * panel * uw, points // PANEL)))
SHAPES = [(WIDTH, WIDTH)] * (LAYERS - 1) + [(1, WIDTH)]
FREE_SHAPES = [(WIDTH, 1), (WIDTH,)] + [(WIDTH, 1), (WIDTH,)] * (LAYERS - 1) + [(1, 1)]


def gumbel_batch():
    return -torch.log(-torch.log(torch.rand(BATCH, 1).clamp_min(1e-12)))


def folded_normal(s):
    return (torch.randn(s) * math.sqrt(math.pi / (2 * s[1]))).abs()


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

    def free(self):
        out = [self.inp.weight, self.inp.bias]
        for skip in self.skips:
            out += [skip.weight, skip.bias]
        return out + [self.w_x]

    def energy(self, x, constrained, free):
        z = F.softplus(F.linear(x, free[0], free[1]))
        for i, wz in enumerate(constrained[:-1]):
            z = F.softplus(F.linear(z, wz) + F.linear(x, free[2 + 2 * i], free[3 + 2 * i]))
        return (F.linear(z, constrained[-1]).squeeze(1) + F.linear(x, free[-1]).squeeze(1)
                + 0.01 * x.pow(2).sum(1))


class Lifter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(1, 64), torch.nn.ReLU(),
                                        torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                        torch.nn.Linear(64, 96), torch.nn.ReLU())
        self.readouts = torch.nn.ModuleList()
        for s in SHAPES:
            r = torch.nn.Linear(96, math.prod(s))
            with torch.no_grad():
                r.bias.fill_(-2.0)
            self.readouts.append(r)
        for s in FREE_SHAPES:
            self.readouts.append(torch.nn.Linear(96, math.prod(s)))

    def weights(self, batch):
        h = self.body(batch.detach()).mean(0)
        h = (h - h.mean()) / (h.std(unbiased=True) + 1e-5)
        out = [r(h).view(s) for r, s in zip(self.readouts, SHAPES + FREE_SHAPES)]
        return [F.softplus(t) for t in out[:len(SHAPES)]], out[len(SHAPES):]


def make_method(name):
    icnn = Icnn()
    extra = torch.nn.ParameterList()
    if name == "pgd":
        for s in SHAPES:
            extra.append(torch.nn.Parameter(folded_normal(s)))
        weights = lambda xb: (list(extra), icnn.free())
    elif name == "softplus":
        for s in SHAPES:
            extra.append(torch.nn.Parameter(torch.log(torch.expm1(folded_normal(s).clamp_min(1e-6)))))
        weights = lambda xb: ([F.softplus(t) for t in extra], icnn.free())
    else:
        lifter = Lifter()
        extra = lifter
        weights = lifter.weights
        for p in icnn.parameters():
            p.requires_grad_(False)
    params = [p for p in list(icnn.parameters()) + list(extra.parameters()) if p.requires_grad]
    opt = torch.optim.Adam(params, lr=1e-3)

    def step():
        xb = gumbel_batch()
        constrained, free = weights(xb)
        e_nodes = icnn.energy(NODES_F, constrained, free).double()
        log_z = torch.logsumexp(-e_nodes + LOG_W, 0)
        loss = icnn.energy(xb, constrained, free).double().mean() + log_z
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


for name in ("pgd", "softplus", "lifter"):
    s = timed(make_method(name))
    print(json.dumps({"schema": "liftlab-bench/1", "bench": "reference_icnn_step.py",
                      "impl": "pytorch", "case": "train_step", "method": name, "threads": threads,
                      "params": {"preset": "icnn-ebm-1d", "points": points},
                      "results": {"steps_per_s": 1.0 / s},
                      "versions": {"torch": torch.__version__}}), flush=True)
