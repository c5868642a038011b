"""The model zoo: each standard architecture of `examples/zoo/` by name, ready to quantize.

A `ZooModel` names the constructor (a module of this folder and a function or
class in it, with its arguments), the shape of one input sample at the size
users run it, and a smaller input the tests use (`small`: the same network,
only the resolution or sequence length reduced, and where the reduction
forces it the pooling: see `ZOO`). `build()` gives the model in eval mode with
random weights (seeded; no download) and, where it has batch norm, running
statistics of random inputs, as a trained model has statistics of its data.
`calibration()` gives the random batches PTQ calibrates on.

    import runpy; zoo = runpy.run_path("examples/zoo/index.py")["ZOO"]
    entry = zoo["resnet18"]; model = entry.build(); xs = entry.calibration()

The tests (test/models/test_zoo.py) and `make bench` (bench/zoo.py) load this
file by path, as they load the other examples.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import torch
from torch import nn

HERE = Path(__file__).resolve().parent


def zoo_module(name: str) -> ModuleType:
    """examples/zoo/<name>.py, loaded once (registered as `dg_zoo_<name>`)."""
    key = f"dg_zoo_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, HERE / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


def settle_batch_norm(model: nn.Module, sample: torch.Tensor) -> None:
    """Set every BatchNorm's running statistics to those of `sample` (one train-mode pass).

    With momentum None a BatchNorm keeps the cumulative average of the batches it
    saw since its reset: one pass makes them exactly the sample's statistics.
    """
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    momenta = [m.momentum for m in norms]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    with torch.no_grad():
        model(sample)
    for m, momentum in zip(norms, momenta, strict=True):
        m.momentum = momentum
    model.eval()


@dataclass(frozen=True)
class ZooModel:
    """One zoo network: how to build it, and its input at full and at test size."""

    name: str
    module: str
    """The file of examples/zoo/ that defines it."""
    constructor: str
    input_shape: tuple[int, ...]
    """One sample (no batch axis) at the size users run the network."""
    small_shape: tuple[int, ...]
    """One sample at the size `make test` compiles it."""
    kwargs: dict[str, Any] = field(default_factory=dict)
    small_kwargs: dict[str, Any] = field(default_factory=dict)
    """Constructor arguments that differ at `small_shape` (beyond `kwargs`)."""

    def shape(self, small: bool = False) -> tuple[int, ...]:
        return self.small_shape if small else self.input_shape

    def build(self, small: bool = False, seed: int = 0) -> nn.Module:
        """The network with seeded random weights, in eval mode, batch norm settled."""
        torch.manual_seed(seed)
        kwargs = {**self.kwargs, **(self.small_kwargs if small else {})}
        model = getattr(zoo_module(self.module), self.constructor)(**kwargs)
        if any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules()):
            generator = torch.Generator().manual_seed(seed + 1)
            settle_batch_norm(model, torch.randn(8, *self.shape(small), generator=generator))
        return model.eval()

    def calibration(
        self, batches: int = 2, batch_size: int = 8, small: bool = False, seed: int = 10
    ) -> list[torch.Tensor]:
        """Random standard-normal batches (normalized images, or embedded tokens)."""
        generator = torch.Generator().manual_seed(seed)
        return [
            torch.randn(batch_size, *self.shape(small), generator=generator) for _ in range(batches)
        ]


LLAMA_SEQUENCE_LENGTHS = (128, 256)

ZOO: dict[str, ZooModel] = {
    m.name: m
    for m in [
        # torchvision's stem max pool has padding=1; dg's max pool none (resnet.py).
        ZooModel(
            "resnet18", "resnet", "resnet18", (3, 224, 224), (3, 64, 64), {"maxpool_padding": 0}
        ),
        ZooModel(
            "resnet50", "resnet", "resnet50", (3, 224, 224), (3, 64, 64), {"maxpool_padding": 0}
        ),
        # ReLU for torchvision's ReLU6 (mobilenet_v2.py).
        ZooModel(
            "mobilenet_v2",
            "mobilenet_v2",
            "MobileNetV2",
            (3, 224, 224),
            (3, 64, 64),
            {"activation_layer": nn.ReLU},
        ),
        # torchvision's definition unchanged (squeezenet.py); 64x64 keeps every pool exact.
        ZooModel("squeezenet1_1", "squeezenet", "SqueezeNet", (3, 224, 224), (3, 64, 64)),
        # torchvision's definition unchanged at 224 (138 M weights). At 32x32 the features
        # end at 1x1, which (7, 7) does not divide: the test pools to (1, 1), so its first
        # Linear has 512 inputs, not 25088 (the 102.8 M-weight literal is test_big_literals').
        ZooModel(
            "vgg16_bn",
            "vgg",
            "vgg16_bn",
            (3, 224, 224),
            (3, 32, 32),
            small_kwargs={"avgpool_size": (1, 1)},
        ),
        ZooModel(
            "vit_tiny",
            "vit",
            "VisionTransformer",
            (3, 224, 224),
            (3, 64, 64),
            small_kwargs={"img_size": 64},
        ),
        *[
            ZooModel(f"llama_s{length}", "llama", "Transformer", (length, 288), (32, 288))
            for length in LLAMA_SEQUENCE_LENGTHS
        ],
    ]
}
"""Every zoo network by name (one entry per input size where a network runs at two)."""
