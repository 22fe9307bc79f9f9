#!/usr/bin/python3
"""Writes the example TorchScript models of resources/models/ (docs/your-model.md).

Run with Debian's python3-torch:  /usr/bin/python3 scripts/make_example_models.py [OUT_DIR]

Each model is what a PyTorch user would hand to LiftLab: a module scripted with torch.jit.script
and saved with .save(path). Seeds are fixed, so the files are reproducible from this script.

- mlp_backbone.pt   features of a 16-input table (cf-regression's teacher task): 16 -> 128 -> 128
                    -> 64, tanh after every Linear (the shape of LiftLab's built-in mlp backbone)
- cnn_backbone.pt   features of 1 x 28 x 28 images (Fashion-MNIST): two 5x5 conv blocks (ReLU,
                    2x2 max-pool) and a dense ReLU layer to 64 features
- icnn_1d.pt        an input-convex energy E(x) on 1-D inputs, width 32, 3 layers:
                    z1 = softplus(W0 x + b0), z_{i+1} = softplus(Wz_i z_i + Wx_i x + b_i),
                    E = w_out z_L + w_x x + 0.01 |x|^2; the non-negative weights are wz1, wz2, w_out
- icnn_2d.pt        the same on 2-D inputs
"""
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn


class MlpBackbone(nn.Module):
    def __init__(self, inputs: int, hidden: int, features: int):
        super().__init__()
        self.layer0 = nn.Linear(inputs, hidden)
        self.layer1 = nn.Linear(hidden, hidden)
        self.layer2 = nn.Linear(hidden, features)

    def forward(self, x):
        x = torch.tanh(self.layer0(x))
        x = torch.tanh(self.layer1(x))
        return torch.tanh(self.layer2(x))


class CnnBackbone(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.conv0 = nn.Conv2d(1, 8, 5, padding=2)
        self.conv1 = nn.Conv2d(8, 16, 5, padding=2)
        self.dense = nn.Linear(16 * 7 * 7, features)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv0(x)), 2)
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        return F.relu(self.dense(x.flatten(1)))


class Icnn(nn.Module):
    """Three-layer ICNN (Amos et al. 2017) with every tensor a direct parameter, in the order of
    LiftLab's built-in one (TorchScript lists a module's own parameters before its submodules')."""

    def __init__(self, dim: int, width: int):
        super().__init__()
        self.w0 = nn.Parameter(torch.empty(width, dim))
        self.b0 = nn.Parameter(torch.zeros(width))
        self.wz1 = nn.Parameter(torch.empty(width, width))
        self.wx1 = nn.Parameter(torch.empty(width, dim))
        self.b1 = nn.Parameter(torch.zeros(width))
        self.wz2 = nn.Parameter(torch.empty(width, width))
        self.wx2 = nn.Parameter(torch.empty(width, dim))
        self.b2 = nn.Parameter(torch.zeros(width))
        self.w_out = nn.Parameter(torch.empty(1, width))
        self.w_x = nn.Parameter(torch.empty(1, dim))
        # Non-negative weights |N(0, pi / (2 n_in))|, the rest Xavier with zero biases.
        with torch.no_grad():
            for w in (self.wz1, self.wz2, self.w_out):
                w.normal_(0.0, math.sqrt(math.pi / (2 * width))).abs_()
            for w in (self.w0, self.wx1, self.wx2, self.w_x):
                nn.init.xavier_uniform_(w)

    def forward(self, x):
        z = F.softplus(F.linear(x, self.w0, self.b0))
        z = F.softplus(F.linear(z, self.wz1) + F.linear(x, self.wx1, self.b1))
        z = F.softplus(F.linear(z, self.wz2) + F.linear(x, self.wx2, self.b2))
        return (F.linear(z, self.w_out).squeeze(1) + F.linear(x, self.w_x).squeeze(1)
                + 0.01 * x.pow(2).sum(1))


def save(module: nn.Module, path: str) -> None:
    scripted = torch.jit.script(module)
    scripted.save(path)
    print(f"{path}: {sum(p.numel() for p in module.parameters())} parameters")


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "resources", "models")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    save(MlpBackbone(16, 128, 64), os.path.join(out, "mlp_backbone.pt"))
    torch.manual_seed(1)
    save(CnnBackbone(64), os.path.join(out, "cnn_backbone.pt"))
    torch.manual_seed(2)
    save(Icnn(1, 32), os.path.join(out, "icnn_1d.pt"))
    torch.manual_seed(3)
    save(Icnn(2, 32), os.path.join(out, "icnn_2d.pt"))


if __name__ == "__main__":
    main()
