"""PyTorch modules dg provides for models written for the dg accelerator."""

from __future__ import annotations

import torch
from torch import nn
from torch.fx import Node

from dg.frontend.source import module_types


class Flatten(nn.Module):
    """Flatten an NCHW feature map channels-last: ``[N, C, H, W] -> [N, H * W * C]``.

    Why it exists: the dg device keeps feature maps NHWC, channels innermost.
    `torch.flatten` orders the features of a feature map (c, h, w), so on the
    device it is a reorder (dg permutes the next Linear's weight columns at
    compile time to absorb it). `dg.Flatten` orders them (h, w, c), the
    device's own memory order: flattening is then free, and the numbers match
    models trained channels-last (TFLite, Keras) and their weights as they are.

    It is written as ``x.permute(0, 2, 3, 1).flatten(1)``, and it is the only
    place dg accepts a `permute`: the importer recognizes it by this module's
    type, elsewhere a permute is an error (use `torch.transpose`).
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 4:
            raise ValueError(f"dg.Flatten expects an NCHW feature map (rank 4), got rank {x.dim()}")
        return x.permute(0, 2, 3, 1).flatten(1)


FLATTEN_MODULE_TYPE = f"{Flatten.__module__}.{Flatten.__qualname__}"
"""`dg.Flatten`'s qualified type, as ``torch.export`` records it in ``nn_module_stack``."""


def inside_flatten(node: Node) -> bool:
    """`node` is an op that a `dg.Flatten` module runs."""
    return any(module_type == FLATTEN_MODULE_TYPE for _, module_type in module_types(node))
