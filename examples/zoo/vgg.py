"""VGG-16 with batch norm, written as torchvision writes it (torchvision.models.vgg).

`VGG(avgpool_size=(7, 7))` is torchvision's `nn.AdaptiveAvgPool2d((7, 7))`: at
224x224 the features end at 7x7, which it divides, so the zoo's VGG-16-BN is
torchvision's definition unchanged (138 M weights; the first Linear alone has
25088 x 4096 = 102.8 M). `hidden` and `channels` exist for smaller variants.
"""

from __future__ import annotations

import torch
from torch import nn


class VGG(nn.Module):
    """torchvision's VGG: conv features, adaptive average pool, a three-layer classifier."""

    def __init__(
        self,
        features: nn.Module,
        num_classes: int = 1000,
        dropout: float = 0.5,
        hidden: int = 4096,
        channels: int = 512,
        avgpool_size: tuple[int, int] = (7, 7),
    ) -> None:
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d(avgpool_size)
        self.classifier = nn.Sequential(
            nn.Linear(channels * avgpool_size[0] * avgpool_size[1], hidden),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(hidden, hidden),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(hidden, num_classes),
        )
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.constant_(m.bias, 0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.classifier(x)
        return x


def make_layers(cfg: list[str | int], batch_norm: bool = False) -> nn.Sequential:
    layers: list[nn.Module] = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            v = int(v)
            conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            if batch_norm:
                layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            else:
                layers += [conv2d, nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


CFGS: dict[str, list[str | int]] = {
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
}
"""torchvision's layer configurations; "D" is VGG-16."""


def vgg16_bn(**kwargs) -> VGG:
    return VGG(make_layers(CFGS["D"], batch_norm=True), **kwargs)
