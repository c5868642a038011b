"""ResNet-18, VGG and SqueezeNet written the way torchvision writes them, as a user copies them.

The definitions follow torchvision's code (with smaller widths so that the
tests stay fast); each has constructor flags for exactly the edits dg asks
for, defaulting to the unmodified definition:

- `ResNet(maxpool_padding=1)`: torchvision's stem `nn.MaxPool2d(3, 2, padding=1)`;
  dg's max pool has no padding, so the edit is ``maxpool_padding=0``.
- `VGG(avgpool_size=(7, 7))`: torchvision's `nn.AdaptiveAvgPool2d((7, 7))`, which
  does not divide a small input's feature map; the edit is a divisible size.
- `SqueezeNet(stem_activation=nn.ReLU6, ceil_mode=True)`: a ReLU6 pasted from
  MobileNet, and max pools whose `ceil_mode` reads past the edge; the edits
  are ``nn.ReLU`` and ``ceil_mode=False``.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

# -- ResNet (torchvision.models.resnet) ------------------------------------------------


def conv3x3(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    """3x3 convolution with padding"""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


def conv1x1(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    """1x1 convolution"""
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """torchvision's ResNet basic block: two 3x3 convs and a residual connection."""

    expansion: int = 1

    def __init__(
        self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None
    ) -> None:
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        identity = x

        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.bn2(out)

        if self.downsample is not None:
            identity = self.downsample(x)

        out += identity
        out = self.relu(out)

        return out


class ResNet(nn.Module):
    """torchvision's ResNet with BasicBlock; `width` 64 is the real ResNet-18."""

    def __init__(
        self,
        layers: tuple[int, int, int, int] = (2, 2, 2, 2),
        num_classes: int = 1000,
        width: int = 64,
        maxpool_padding: int = 1,
    ) -> None:
        super().__init__()
        self.inplanes = width
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=maxpool_padding)
        self.layer1 = self._make_layer(width, layers[0])
        self.layer2 = self._make_layer(width * 2, layers[1], stride=2)
        self.layer3 = self._make_layer(width * 4, layers[2], stride=2)
        self.layer4 = self._make_layer(width * 8, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 8 * BasicBlock.expansion, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def _make_layer(self, planes: int, blocks: int, stride: int = 1) -> nn.Sequential:
        downsample = None
        if stride != 1 or self.inplanes != planes * BasicBlock.expansion:
            downsample = nn.Sequential(
                conv1x1(self.inplanes, planes * BasicBlock.expansion, stride),
                nn.BatchNorm2d(planes * BasicBlock.expansion),
            )

        layers = []
        layers.append(BasicBlock(self.inplanes, planes, stride, downsample))
        self.inplanes = planes * BasicBlock.expansion
        for _ in range(1, blocks):
            layers.append(BasicBlock(self.inplanes, planes))

        return nn.Sequential(*layers)

    def _forward_impl(self, x: Tensor) -> Tensor:
        # See note [TorchScript super()]
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.maxpool(x)

        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.layer4(x)

        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.fc(x)

        return x

    def forward(self, x: Tensor) -> Tensor:
        return self._forward_impl(x)


def resnet18(**kwargs) -> ResNet:
    return ResNet((2, 2, 2, 2), **kwargs)


# -- VGG (torchvision.models.vgg) ----------------------------------------------------------


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


SMALL_VGG_CFG: list[str | int] = [8, "M", 16, "M", 32, 32, "M"]
"""VGG-11's pattern with fewer stages and channels: a 32x32 input ends at 4x4x32."""


def small_vgg_bn(avgpool_size: tuple[int, int] = (7, 7)) -> VGG:
    return VGG(
        make_layers(SMALL_VGG_CFG, batch_norm=True),
        num_classes=10,
        hidden=32,
        channels=32,
        avgpool_size=avgpool_size,
    )


# -- SqueezeNet 1.1 (torchvision.models.squeezenet) ------------------------------------------


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
    """torchvision's SqueezeNet 1.1, channels divided by `shrink`."""

    def __init__(
        self,
        num_classes: int = 1000,
        dropout: float = 0.5,
        shrink: int = 4,
        stem_activation: type[nn.Module] = nn.ReLU6,
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
