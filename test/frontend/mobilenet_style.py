"""MobileNetV2 written the way torchvision writes it (ReLU6 and all), as a user copies it.

`MobileNetV2(activation=nn.ReLU)` is the edit dg asks for; the default is the
unmodified definition, whose 35 ReLU6 are one grouped problem.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


def _make_divisible(v: float, divisor: int, min_value: int | None = None) -> int:
    """Round `v` to a multiple of `divisor`, never down by more than 10% (torchvision's rule)."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class Conv2dNormActivation(nn.Sequential):
    """Conv2d, BatchNorm2d and an activation (torchvision.ops.misc)."""

    def __init__(
        self,
        in_planes: int,
        out_planes: int,
        kernel_size: int = 3,
        stride: int = 1,
        groups: int = 1,
        activation_layer: type[nn.Module] | None = nn.ReLU6,
    ) -> None:
        padding = (kernel_size - 1) // 2
        layers: list[nn.Module] = [
            nn.Conv2d(
                in_planes, out_planes, kernel_size, stride, padding, groups=groups, bias=False
            ),
            nn.BatchNorm2d(out_planes),
        ]
        if activation_layer is not None:
            layers.append(activation_layer(inplace=True))
        super().__init__(*layers)


class InvertedResidual(nn.Module):
    def __init__(
        self, inp: int, oup: int, stride: int, expand_ratio: int, activation: type[nn.Module]
    ) -> None:
        super().__init__()
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers: list[nn.Module] = []
        if expand_ratio != 1:
            layers.append(
                Conv2dNormActivation(inp, hidden_dim, kernel_size=1, activation_layer=activation)
            )
        layers.extend(
            [
                Conv2dNormActivation(
                    hidden_dim,
                    hidden_dim,
                    stride=stride,
                    groups=hidden_dim,
                    activation_layer=activation,
                ),
                nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
                nn.BatchNorm2d(oup),
            ]
        )
        self.conv = nn.Sequential(*layers)

    def forward(self, x: Tensor) -> Tensor:
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


class MobileNetV2(nn.Module):
    """torchvision's MobileNetV2; `width_mult=1.0` is the real one."""

    def __init__(
        self,
        num_classes: int = 1000,
        width_mult: float = 1.0,
        activation: type[nn.Module] = nn.ReLU6,
        pool_with_mean: bool = False,
    ) -> None:
        super().__init__()
        input_channel = _make_divisible(32 * width_mult, 8)
        self.last_channel = _make_divisible(1280 * max(1.0, width_mult), 8)
        self.pool_with_mean = pool_with_mean
        setting = [
            [1, 16, 1, 1],
            [6, 24, 2, 2],
            [6, 32, 3, 2],
            [6, 64, 4, 2],
            [6, 96, 3, 1],
            [6, 160, 3, 2],
            [6, 320, 1, 1],
        ]
        features: list[nn.Module] = [
            Conv2dNormActivation(3, input_channel, stride=2, activation_layer=activation)
        ]
        for t, c, n, s in setting:
            output_channel = _make_divisible(c * width_mult, 8)
            for i in range(n):
                stride = s if i == 0 else 1
                features.append(
                    InvertedResidual(input_channel, output_channel, stride, t, activation)
                )
                input_channel = output_channel
        features.append(
            Conv2dNormActivation(
                input_channel, self.last_channel, kernel_size=1, activation_layer=activation
            )
        )
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(
            nn.Dropout(p=0.2), nn.Linear(self.last_channel, num_classes)
        )

    def forward(self, x: Tensor) -> Tensor:
        x = self.features(x)
        if self.pool_with_mean:
            x = x.mean([2, 3])  # torchvision's MobileNetV2 before 0.8
        else:
            x = nn.functional.adaptive_avg_pool2d(x, (1, 1))
            x = torch.flatten(x, 1)
        x = self.classifier(x)
        return x
