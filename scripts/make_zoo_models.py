#!/usr/bin/python3
"""Writes the zoo of user models (tests/cli/zoo.py, ctest cli_zoo): TorchScript modules as a
PyTorch user really hands them over, good and bad, each saved with torch.jit.script(m).save(path).

Run with Debian's python3-torch:  /usr/bin/python3 scripts/make_zoo_models.py OUT_DIR

Nothing here is committed: the ctest writes the files into its build folder (the 200 000-feature
backbone alone is 13 MB). Seeds are fixed.

Backbones (16 inputs, the teacher task of cf-regression, unless said otherwise):
  resnet_layernorm   two pre-norm residual blocks with LayerNorm and GELU, 64 features
  batchnorm_dropout  Linear, BatchNorm1d, ReLU, Dropout(0.2), Linear: 32 features
  conv_feature_maps  1 x 28 x 28 images -> conv, BatchNorm2d, ReLU, Dropout2d, max-pool:
                     returns n x 8 x 7 x 7 feature maps (rank 4, not flattened)
  float64            an MLP whose weights are float64 (model.double())
  float64_features   float32 weights, forward returns float64 features
  frozen_all         an MLP with requires_grad=False on every parameter (a pretrained extractor)
  frozen_part        the same with only its first layer frozen
  tuple_output       forward returns (features, logits)
  dict_output        forward returns {"features": ..., "logits": ...}
  dict_no_features   forward returns {"embedding": ...}
  scalar_output      forward returns features.sum()
  rank3_output       forward returns n x 4 x 16 (a sequence of 4 positions)
  raises             forward raises RuntimeError on the task's inputs
  never_returns      forward loops forever
  asks_64gb          forward allocates a 64 GB tensor
  wide_200k          Linear(16, 200000) + tanh: 200 000 features
ICNNs (2-D inputs):
  icnn_skip          skip connections from the input into every layer and the output
  icnn_parameterlist the hidden-to-hidden weights in an nn.ParameterList (names wz.0, wz.1)
  icnn_quadratic     its own quadratic term q |x|^2 / 2 (scalar q, constrained) and a scalar
                     temperature (free)
  icnn_n_by_1        returns the energies as n x 1
  icnn_sin           a sin activation: not convex
"""
import math
import os
import sys
from typing import Dict, Tuple

import torch
import torch.nn.functional as F
from torch import nn


class ResidualBlock(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, 2 * width)
        self.fc2 = nn.Linear(2 * width, width)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class ResNetLayerNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(16, 64)
        self.blocks = nn.ModuleList([ResidualBlock(64), ResidualBlock(64)])
        self.norm = nn.LayerNorm(64)

    def forward(self, x):
        h = self.stem(x)
        for block in self.blocks:
            h = block(h)
        return self.norm(h)


class BatchNormDropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 64)
        self.bn = nn.BatchNorm1d(64)
        self.drop = nn.Dropout(0.2)
        self.fc2 = nn.Linear(64, 32)

    def forward(self, x):
        return torch.tanh(self.fc2(self.drop(F.relu(self.bn(self.fc1(x))))))


class ConvFeatureMaps(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.drop = nn.Dropout2d(0.1)

    def forward(self, x):
        return F.max_pool2d(self.drop(F.relu(self.bn(self.conv(x)))), 4)


class Mlp(nn.Module):
    def __init__(self, width: int = 32):
        super().__init__()
        self.layer0 = nn.Linear(16, width)
        self.layer1 = nn.Linear(width, width)

    def forward(self, x):
        return torch.tanh(self.layer1(torch.tanh(self.layer0(x))))


class Float64Features(Mlp):
    def forward(self, x):
        return torch.tanh(self.layer1(torch.tanh(self.layer0(x)))).double()


class TupleOutput(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = Mlp()
        self.classifier = nn.Linear(32, 4)

    def forward(self, x) -> Tuple[torch.Tensor, torch.Tensor]:
        f = self.body(x)
        return f, self.classifier(f)


class DictOutput(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = Mlp()
        self.classifier = nn.Linear(32, 4)

    def forward(self, x) -> Dict[str, torch.Tensor]:
        f = self.body(x)
        return {"features": f, "logits": self.classifier(f)}


class DictNoFeatures(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = Mlp()

    def forward(self, x) -> Dict[str, torch.Tensor]:
        return {"embedding": self.body(x)}


class ScalarOutput(Mlp):
    def forward(self, x):
        return torch.tanh(self.layer0(x)).sum()


class Rank3Output(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 64)

    def forward(self, x):
        return torch.tanh(self.fc(x)).view(x.shape[0], 4, 16)


class Raises(Mlp):
    def forward(self, x):
        if x.shape[1] != 3:
            raise RuntimeError("this model wants RGB pixels (3 channels)")
        return self.layer0(x)


class NeverReturns(Mlp):
    def forward(self, x):
        h = torch.tanh(self.layer0(x))
        i = 0
        while i >= 0:  # the loop a user did not mean to write
            i = i + 1
            h = h * 1.0
        return h


class Asks64GB(Mlp):
    def forward(self, x):
        scratch = torch.ones(16 * 1024 * 1024 * 1024)  # 16 G floats: 64 GB
        return torch.tanh(self.layer0(x)) + scratch[0]


class Wide(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.fc = nn.Linear(16, features)

    def forward(self, x):
        return torch.tanh(self.fc(x))


def positive(*shape):
    return nn.Parameter(torch.empty(*shape).normal_(0.0, math.sqrt(math.pi / (2 * shape[-1]))).abs_())


def xavier(*shape):
    w = torch.empty(*shape)
    nn.init.xavier_uniform_(w)
    return nn.Parameter(w)


class IcnnSkip(nn.Module):
    """z1 = softplus(W0 x), z2 = softplus(Wz1 z1 + Wx1 x + b1), E = w_out z2 + w_x x + a |x|^2:
    the input enters every layer and the output."""

    def __init__(self, dim: int = 2, width: int = 16):
        super().__init__()
        self.w0 = xavier(width, dim)
        self.b0 = nn.Parameter(torch.zeros(width))
        self.wz1 = positive(width, width)
        self.wx1 = xavier(width, dim)
        self.b1 = nn.Parameter(torch.zeros(width))
        self.w_out = positive(1, width)
        self.w_x = xavier(1, dim)

    def forward(self, x):
        z = F.softplus(F.linear(x, self.w0, self.b0))
        z = F.softplus(F.linear(z, self.wz1) + F.linear(x, self.wx1, self.b1))
        return (F.linear(z, self.w_out) + F.linear(x, self.w_x)).squeeze(1) + 0.01 * x.pow(2).sum(1)


class IcnnParameterList(nn.Module):
    def __init__(self, dim: int = 2, width: int = 16, layers: int = 3):
        super().__init__()
        self.w0 = xavier(width, dim)
        self.wz = nn.ParameterList([positive(width, width) for _ in range(layers - 1)])
        self.wx = nn.ParameterList([xavier(width, dim) for _ in range(layers - 1)])
        self.w_out = positive(1, width)

    def forward(self, x):
        z = F.softplus(F.linear(x, self.w0))
        for wz, wx in zip(self.wz, self.wx):
            z = F.softplus(F.linear(z, wz) + F.linear(x, wx))
        return F.linear(z, self.w_out).squeeze(1) + 0.01 * x.pow(2).sum(1)


class IcnnQuadratic(IcnnSkip):
    """Its own strongly convex term q |x|^2 / 2 with a learned scalar q >= 0 (constrained too)
    and a learned scalar temperature t (free): E / softplus(t)."""

    def __init__(self):
        super().__init__()
        self.q = nn.Parameter(torch.tensor(0.1))
        self.t = nn.Parameter(torch.tensor(0.5))

    def forward(self, x):
        z = F.softplus(F.linear(x, self.w0, self.b0))
        z = F.softplus(F.linear(z, self.wz1) + F.linear(x, self.wx1, self.b1))
        e = (F.linear(z, self.w_out) + F.linear(x, self.w_x)).squeeze(1) + \
            0.5 * self.q * x.pow(2).sum(1)
        return e / F.softplus(self.t)


class IcnnNBy1(IcnnSkip):
    def forward(self, x):
        z = F.softplus(F.linear(x, self.w0, self.b0))
        z = F.softplus(F.linear(z, self.wz1) + F.linear(x, self.wx1, self.b1))
        return F.linear(z, self.w_out) + F.linear(x, self.w_x) + 0.01 * x.pow(2).sum(1, keepdim=True)


class IcnnSin(IcnnSkip):
    def forward(self, x):
        z = torch.sin(F.linear(x, self.w0, self.b0))
        z = torch.sin(F.linear(z, self.wz1) + F.linear(x, self.wx1, self.b1))
        return (F.linear(z, self.w_out) + F.linear(x, self.w_x)).squeeze(1) + 0.01 * x.pow(2).sum(1)


def frozen(module: nn.Module, names=None) -> nn.Module:
    for name, p in module.named_parameters():
        if names is None or name in names:
            p.requires_grad_(False)
    return module


MODELS = {
    "resnet_layernorm": lambda: ResNetLayerNorm(),
    "batchnorm_dropout": lambda: BatchNormDropout(),
    "conv_feature_maps": lambda: ConvFeatureMaps(),
    "float64": lambda: Mlp().double(),
    "float64_features": lambda: Float64Features(),
    "frozen_all": lambda: frozen(Mlp()),
    "frozen_part": lambda: frozen(Mlp(), {"layer0.weight", "layer0.bias"}),
    "tuple_output": lambda: TupleOutput(),
    "dict_output": lambda: DictOutput(),
    "dict_no_features": lambda: DictNoFeatures(),
    "scalar_output": lambda: ScalarOutput(),
    "rank3_output": lambda: Rank3Output(),
    "raises": lambda: Raises(),
    "never_returns": lambda: NeverReturns(),
    "asks_64gb": lambda: Asks64GB(),
    "wide_200k": lambda: Wide(200_000),
    "icnn_skip": lambda: IcnnSkip(),
    "icnn_parameterlist": lambda: IcnnParameterList(),
    "icnn_quadratic": lambda: IcnnQuadratic(),
    "icnn_n_by_1": lambda: IcnnNBy1(),
    "icnn_sin": lambda: IcnnSin(),
}


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: make_zoo_models.py OUT_DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for seed, (name, build) in enumerate(MODELS.items()):
        torch.manual_seed(100 + seed)
        torch.jit.script(build()).save(os.path.join(out, name + ".pt"))
    print(f"{len(MODELS)} models in {out}")


if __name__ == "__main__":
    main()
