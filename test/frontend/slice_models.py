"""Tiny models of dg's foundation slice, shared by the frontend and end-to-end tests.

`SliceNet` uses every op of the slice: Conv2d -> BatchNorm -> ReLU,
Conv2d -> ReLU, a residual add -> ReLU, a bias-free Conv2d -> BatchNorm,
flatten, Linear -> ReLU and a final Linear. Its input is ``[batch, 1, 8, 8]``,
its output ``[batch, 3]``.

`frozen_slice_net` quantizes it (QAT or PTQ) once per test session, and
`prepared_slice_net` prepares it: torchao's QAT conv-bn folding alone
takes seconds.
"""

from __future__ import annotations

from functools import cache

import torch
import torch.nn.functional as F
from torch import nn

SLICE_INPUT_SHAPE = (1, 8, 8)
"""Shape of one `SliceNet` input sample (without the batch axis)."""


class ConvBlock(nn.Module):
    """Conv2d -> BatchNorm -> ReLU, the usual CNN block."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.bn(self.conv(x)))


class SliceNet(nn.Module):
    """A small CNN + MLP made only of the slice's ops."""

    def __init__(self, channels: int = 4, hidden: int = 16, classes: int = 3):
        super().__init__()
        self.block = ConvBlock(1, channels)
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.proj = nn.Conv2d(channels, channels, 1, bias=False)
        self.proj_bn = nn.BatchNorm2d(channels)
        self.fc1 = nn.Linear(channels * 8 * 8, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.block(x)
        z = F.relu(self.conv(y))
        y = F.relu(y + z)
        y = self.proj_bn(self.proj(y))
        y = torch.flatten(y, 1)
        y = F.relu(self.fc1(y))
        return self.fc2(y)


def slice_inputs(batch: int, seed: int = 0) -> torch.Tensor:
    """A deterministic batch of `SliceNet` inputs."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(batch, *SLICE_INPUT_SHAPE, generator=generator)


def calibrate(prepared: torch.nn.Module, *, train: bool, steps: int = 3) -> None:
    """Run a few batches of different sizes through a prepared model.

    With `train` (QAT) every batch is also one SGD step on a dummy loss.
    """
    optimizer = torch.optim.SGD(prepared.parameters(), lr=0.01) if train else None
    for step in range(steps):
        x = slice_inputs(2 + step, seed=100 + step)
        if optimizer is None:
            with torch.no_grad():
                prepared(x)
            continue
        optimizer.zero_grad()
        prepared(x).square().mean().backward()
        optimizer.step()


@cache
def prepared_slice_net(mode: str = "qat") -> torch.fx.GraphModule:
    """`SliceNet` prepared by `mode` ("qat" | "ptq"), uncalibrated, once per session.

    Never frozen (freezing converts in place). Leave it in train mode after use.
    """
    from dg.frontend.prepare import prepare_ptq, prepare_qat

    torch.manual_seed(0)
    prepare = prepare_qat if mode == "qat" else prepare_ptq
    return prepare(SliceNet(), (slice_inputs(4),))


@cache
def frozen_slice_net(mode: str = "qat") -> torch.fx.GraphModule:
    """`SliceNet` quantized by `mode` ("qat" | "ptq") and frozen, once per session.

    Treat the result as read-only.
    """
    from dg.frontend.prepare import freeze_quantization, prepare_ptq, prepare_qat

    torch.manual_seed(0)
    model = SliceNet()
    prepare = prepare_qat if mode == "qat" else prepare_ptq
    prepared = prepare(model, (slice_inputs(4),))
    calibrate(prepared, train=mode == "qat")
    return freeze_quantization(prepared)
