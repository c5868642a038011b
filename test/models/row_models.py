"""What the per-row model tests share: the image shape and the small models a row is tried after."""

from __future__ import annotations

import torch
from torch import nn

IMAGE = (3, 8, 8)


class ConvThen(nn.Module):
    """conv (3 -> `channels`, 3x3, same size) followed by `tail`; the usual host of a row."""

    def __init__(self, tail, channels: int = 4, in_channels: int = 3):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, channels, 3, padding=1)
        self.tail = tail

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.tail(self.conv(x))
