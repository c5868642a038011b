"""A small CNN using every CNN, shape and elementwise row dg supports, shared by frontend tests.

`CnnNet` has: Conv2d -> ReLU, F.pad -> depthwise Conv2d -> BatchNorm -> ReLU,
max and average pooling (F.pad folding into the average pool), torch.cat of
two branches, nearest interpolation, adaptive average pooling, dropout,
sigmoid, `dg.Flatten`, Linear -> BatchNorm1d -> ReLU, Linear and softmax.
Its input is ``[batch, 3, 8, 8]``, its output ``[batch, 5]``.

Quantizing is slow (torchao's QAT conv-bn folding alone takes many seconds),
so the frozen PTQ model and the QAT-prepared model are built once per session.
"""

from __future__ import annotations

from functools import cache

import torch
import torch.nn.functional as F
from torch import nn

import dg

CNN_INPUT_SHAPE = (3, 8, 8)


class CnnNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.depthwise = nn.Conv2d(4, 4, 3, groups=4)
        self.bn = nn.BatchNorm2d(4)
        self.max_pool = nn.MaxPool2d(2)
        self.avg_pool = nn.AvgPool2d(3, 2, ceil_mode=True, count_include_pad=True)
        self.mix = nn.Conv2d(8, 4, 1)
        self.head_pool = nn.AdaptiveAvgPool2d(2)
        self.drop = nn.Dropout(0.25)
        self.flatten = dg.Flatten()
        self.fc = nn.Linear(8 * 2 * 2, 6)
        self.fc_bn = nn.BatchNorm1d(6)
        self.out = nn.Linear(6, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.conv(x))
        y = F.relu(self.bn(self.depthwise(F.pad(y, (1, 1, 1, 1)))))
        a = self.max_pool(y)
        b = self.avg_pool(F.pad(y, (1, 0, 1, 0)))
        b = F.interpolate(self.max_pool(F.relu(self.mix(torch.cat([a, b], dim=1)))), size=(4, 4))
        z = torch.cat([a, b], dim=1)
        z = torch.sigmoid(self.drop(self.head_pool(z)))
        z = F.relu(self.fc_bn(self.fc(self.flatten(z))))
        return F.softmax(self.out(z), dim=1)


def cnn_inputs(batch: int, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(batch, *CNN_INPUT_SHAPE, generator=generator)


@cache
def frozen_cnn_ptq() -> torch.fx.GraphModule:
    """`CnnNet` quantized with PTQ on a few batches and frozen. Treat as read-only."""
    torch.manual_seed(0)
    prepared = dg.prepare_ptq(CnnNet(), (cnn_inputs(4),))
    with torch.no_grad():
        for step in range(3):
            prepared(cnn_inputs(4, seed=10 + step))
    return dg.freeze_quantization(prepared)


@cache
def prepared_cnn_qat() -> torch.fx.GraphModule:
    """`CnnNet` prepared for QAT (never frozen). Leave it in train mode after use."""
    torch.manual_seed(0)
    return dg.prepare_qat(CnnNet(), (cnn_inputs(4),))
