"""ResNet-18, VGG and SqueezeNet as a user copies them from torchvision, for the new-user tests.

The definitions are the model zoo's (examples/zoo/), which follow torchvision's
code; each has constructor flags for exactly the edits dg asks for, defaulting
to the unmodified definition:

- `ResNet(maxpool_padding=1)`: torchvision's stem `nn.MaxPool2d(3, 2, padding=1)`;
  dg's max pool has no padding, so the edit is ``maxpool_padding=0``.
- `VGG(avgpool_size=(7, 7))`: torchvision's `nn.AdaptiveAvgPool2d((7, 7))`, which
  does not divide a small input's feature map; the edit is a divisible size.
- `pasted_squeezenet()`: SqueezeNet 1.1 with a ReLU6 pasted from MobileNet as its stem
  activation, and max pools whose `ceil_mode` reads past the edge of a 34x34
  input; the edits are ``stem_activation=nn.ReLU`` and ``ceil_mode=False``.

Widths are smaller than the real networks' so that the tests stay fast.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from torch import nn


def _zoo_index() -> ModuleType:
    """examples/zoo/index.py, loaded by path once (it loads the zoo's modules)."""
    name = "dg_zoo_index"
    if name not in sys.modules:
        path = Path(__file__).resolve().parents[2] / "examples" / "zoo" / "index.py"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


zoo_index = _zoo_index()
_resnet = zoo_index.zoo_module("resnet")
_vgg = zoo_index.zoo_module("vgg")
_squeezenet = zoo_index.zoo_module("squeezenet")

ResNet = _resnet.ResNet
resnet18 = _resnet.resnet18
VGG = _vgg.VGG
make_layers = _vgg.make_layers
SqueezeNet = _squeezenet.SqueezeNet


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


def pasted_squeezenet(**kwargs) -> nn.Module:
    """SqueezeNet 1.1 with channels / 4 and the ReLU6 stem a user pasted from MobileNet."""
    return SqueezeNet(**{"shrink": 4, "stem_activation": nn.ReLU6, **kwargs})
