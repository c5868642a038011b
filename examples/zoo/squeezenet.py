"""SqueezeNet 1.1, written as torchvision writes it (torchvision.models.squeezenet).

At 224x224 it is torchvision's definition unchanged: its max pools have
``ceil_mode=True``, which dg accepts where no window reads past the edge, and
at 224 none does (111 -> 55 -> 27 -> 13, every (size - 3) even). Constructor
flags: `shrink` divides the channels, `stem_activation` and `ceil_mode` let a
test build the variants a user pastes together (a ReLU6 stem, an overhanging pool).
"""

from __future__ import annotations

import torch
from torch import nn


class Fire(nn.Module):
    """SqueezeNet's fire module: a 1x1 squeeze, then 1x1 and 3x3 expands concatenated."""

    def __init__(
        self, inplanes: int, squeeze_planes: int, expand1x1_planes: int, expand3x3_planes: int
    ) -> None:
        super().__init__()
        self.inplanes = inplanes
        self.squeeze = nn.Conv2d(inplanes, squeeze_planes, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze_planes, expand1x1_planes, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze_planes, expand3x3_planes, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.squeeze_activation(self.squeeze(x))
        return torch.cat(
            [
                self.expand1x1_activation(self.expand1x1(x)),
                self.expand3x3_activation(self.expand3x3(x)),
            ],
            1,
        )


class SqueezeNet(nn.Module):
    """torchvision's SqueezeNet 1.1, channels divided by `shrink` (1: the real network)."""

    def __init__(
        self,
        num_classes: int = 1000,
        dropout: float = 0.5,
        shrink: int = 1,
        stem_activation: type[nn.Module] = nn.ReLU,
        ceil_mode: bool = True,
    ) -> None:
        super().__init__()
        self.num_classes = num_classes

        def c(channels: int) -> int:
            return channels // shrink

        self.features = nn.Sequential(
            nn.Conv2d(3, c(64), kernel_size=3, stride=2),
            stem_activation(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=ceil_mode),
            Fire(c(64), c(16), c(64), c(64)),
            Fire(c(128), c(16), c(64), c(64)),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=ceil_mode),
            Fire(c(128), c(32), c(128), c(128)),
            Fire(c(256), c(32), c(128), c(128)),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=ceil_mode),
            Fire(c(256), c(48), c(192), c(192)),
            Fire(c(384), c(48), c(192), c(192)),
            Fire(c(384), c(64), c(256), c(256)),
            Fire(c(512), c(64), c(256), c(256)),
        )

        # Final convolution is initialized differently from the rest
        final_conv = nn.Conv2d(c(512), self.num_classes, kernel_size=1)
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout), final_conv, nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d((1, 1))
        )

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                if m is final_conv:
                    nn.init.normal_(m.weight, mean=0.0, std=0.01)
                else:
                    nn.init.kaiming_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        x = self.classifier(x)
        return torch.flatten(x, 1)
