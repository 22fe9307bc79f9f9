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
- fmnist_cnn_features.pt
                    a *pretrained* feature extractor for linear probing (preset cf-linear-probe):
                    a small CNN (two 5x5 conv blocks with 8 and 16 channels, ReLU, 2x2 max-pool;
                    a dense ReLU layer to 64 features; a 64 -> 10 classifier) trained on the
                    Fashion-MNIST training split (Debian's dataset-fashion-mnist, pixels / 255 as
                    LiftLab reads them) by Adam (lr 1e-3, batch 64, 3 epochs, cross-entropy), then
                    saved without its classifier and with requires_grad=False on every parameter.
                    Seeded and on 2 CPU threads with deterministic algorithms: the same file on the
                    same machine (other CPUs may round differently). Takes 1-2 minutes.

Usage: make_example_models.py [OUT_DIR] [--only NAME ...]   (--only fmnist_cnn_features.pt
writes just that file).
"""
import gzip
import math
import os
import sys
import time

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


FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def read_idx(path: str) -> torch.Tensor:
    """A gzipped IDX file (magic 0 0 type dims, big-endian int32 sizes, uint8 data)."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    sizes = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return torch.frombuffer(bytearray(data[4 + 4 * dims:]), dtype=torch.uint8).view(*sizes)


class FmnistFeatures(nn.Module):
    """The pretrained CNN's feature extractor: 1 x 28 x 28 images in [0, 1] -> 64 features."""

    def __init__(self):
        super().__init__()
        self.conv0 = nn.Conv2d(1, 8, 5, padding=2)
        self.conv1 = nn.Conv2d(8, 16, 5, padding=2)
        self.dense = nn.Linear(16 * 7 * 7, 64)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv0(x)), 2)
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        return F.relu(self.dense(x.flatten(1)))


class FmnistClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = FmnistFeatures()
        self.classifier = nn.Linear(64, 10)

    def forward(self, x):
        return self.classifier(self.features(x))


def pretrained_fmnist_features(epochs: int = 3, batch: int = 64) -> nn.Module:
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(5)
    images = read_idx(os.path.join(FASHION_MNIST, "train-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(FASHION_MNIST, "train-labels-idx1-ubyte.gz")).long()
    x = images.unsqueeze(1).float() / 255.0
    model = FmnistClassifier()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    order = torch.Generator().manual_seed(6)
    start = time.time()
    for epoch in range(epochs):
        perm = torch.randperm(x.shape[0], generator=order)
        total = 0.0
        for i in range(0, x.shape[0], batch):
            idx = perm[i:i + batch]
            loss = F.cross_entropy(model(x[idx]), labels[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * idx.numel()
        print(f"  epoch {epoch + 1}: train cross-entropy {total / x.shape[0]:.4f} "
              f"({time.time() - start:.0f} s)")
    test_x = read_idx(os.path.join(FASHION_MNIST, "t10k-images-idx3-ubyte.gz")).unsqueeze(1)
    test_y = read_idx(os.path.join(FASHION_MNIST, "t10k-labels-idx1-ubyte.gz")).long()
    model.eval()
    with torch.no_grad():
        accuracy = (model(test_x.float() / 255.0).argmax(1) == test_y).float().mean().item()
    print(f"  the CNN with its own classifier: test accuracy {accuracy:.4f}")
    features = model.features
    for p in features.parameters():
        p.requires_grad_(False)
    return features


def save(module: nn.Module, path: str) -> None:
    scripted = torch.jit.script(module)
    scripted.save(path)
    print(f"{path}: {sum(p.numel() for p in module.parameters())} parameters")


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    args = sys.argv[1:]
    only = []
    if "--only" in args:
        at = args.index("--only")
        only, args = args[at + 1:], args[:at]
    out = args[0] if args else os.path.join(here, "..", "resources", "models")
    os.makedirs(out, exist_ok=True)

    def wanted(name: str) -> bool:
        return not only or name in only

    builders = [
        ("mlp_backbone.pt", 0, lambda: MlpBackbone(16, 128, 64)),
        ("cnn_backbone.pt", 1, lambda: CnnBackbone(64)),
        ("icnn_1d.pt", 2, lambda: Icnn(1, 32)),
        ("icnn_2d.pt", 3, lambda: Icnn(2, 32)),
    ]
    for name, seed, build in builders:
        if wanted(name):
            torch.manual_seed(seed)
            save(build(), os.path.join(out, name))
    if wanted("fmnist_cnn_features.pt"):
        print("fmnist_cnn_features.pt: training the CNN on Fashion-MNIST ...")
        save(pretrained_fmnist_features(), os.path.join(out, "fmnist_cnn_features.pt"))


if __name__ == "__main__":
    main()
