"""A small CNN of the layers an NPU runs (conv, depthwise, residual add, pooling, Linear),
PTQ-quantized on random data: the model the deployment tests plan, run, cost and compile."""

from __future__ import annotations

from functools import cache

import torch
import torch.nn.functional as F
from torch import nn

import dg

INPUT_SHAPE = (3, 16, 16)


class SmallCnn(nn.Module):
    def __init__(self, width: int = 16, classes: int = 10):
        super().__init__()
        self.stem = nn.Conv2d(3, width, 3, padding=1)
        self.bn = nn.BatchNorm2d(width)
        self.depthwise = nn.Conv2d(width, width, 3, padding=1, groups=width)
        self.pointwise = nn.Conv2d(width, width, 1)
        self.down = nn.Conv2d(width, 2 * width, 3, stride=2, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.avg = nn.AvgPool2d(2)
        self.flatten = dg.Flatten()
        self.fc = nn.Linear(2 * width * 2 * 2, 32)
        self.head = nn.Linear(32, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn(self.stem(x)))
        y = F.relu(y + self.pointwise(F.relu(self.depthwise(y))))
        y = self.avg(self.pool(F.relu(self.down(y))))
        return self.head(F.relu(self.fc(self.flatten(y))))


def inputs(batch: int, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.rand(batch, *INPUT_SHAPE, generator=generator)


@cache
def frozen_model() -> tuple[SmallCnn, torch.fx.GraphModule]:
    """The float model and its frozen quantized model. Treat both as read-only."""
    torch.manual_seed(0)
    model = SmallCnn().eval()
    prepared = dg.prepare_ptq(model, (inputs(4),))
    with torch.no_grad():
        for step in range(4):
            prepared(inputs(16, seed=10 + step))
    return model, dg.freeze_quantization(prepared)


@cache
def float_and_program() -> tuple[SmallCnn, dg.Program]:
    """The float model and its compiled program. Treat both as read-only."""
    model, frozen = frozen_model()
    return model, dg.export(frozen, (inputs(2),))
