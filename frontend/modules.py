"""PyTorch modules dg provides for models written for the dg accelerator."""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn
from torch.fx import Node

from dg.dialects.common import NORM_KINDS
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


class Norm(nn.Module):
    """Normalize the last axis of a sequence tensor (``[B, S, D]`` or ``[B, D]``).

    ``kind="layer"``: torch's layer norm,
    ``(x - mean(x)) / sqrt(var(x) + eps) * weight + bias`` (biased variance);
    ``kind="rms"``: RMS norm, ``x / sqrt(mean(x * x) + eps) * weight`` (no bias).
    `weight` starts at ones and `bias` at zeros, both learnable and of size `dim`.

    Why it exists: the dg device computes the whole normalization as one
    integer op (integer mean and variance, an exact integer rsqrt), so the
    body is written with plain tensor ops that the importer recognizes by this
    module's type. The bare scalar multiply it contains is legal only here.
    """

    def __init__(self, dim: int, eps: float = 1e-5, kind: Literal["layer", "rms"] = "layer"):
        super().__init__()
        if kind not in NORM_KINDS:
            raise ValueError(f"dg.Norm: kind must be one of {', '.join(NORM_KINDS)}, got {kind!r}")
        if not isinstance(dim, int) or dim < 1:
            raise ValueError(f"dg.Norm: dim must be a positive int, got {dim!r}")
        if not eps > 0:
            raise ValueError(f"dg.Norm: eps must be positive, got {eps!r}")
        self.dim = dim
        self.eps = float(eps)
        self.kind = kind
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim)) if kind == "layer" else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.bias is not None:  # kind == "layer"
            centered = x - x.mean(-1, keepdim=True)
            variance = (centered * centered).mean(-1, keepdim=True)
            return centered * torch.rsqrt(variance + self.eps) * self.weight + self.bias
        mean_square = (x * x).mean(-1, keepdim=True)
        return x * torch.rsqrt(mean_square + self.eps) * self.weight

    def extra_repr(self) -> str:
        return f"{self.dim}, eps={self.eps}, kind={self.kind!r}"


NORM_MODULE_TYPE = f"{Norm.__module__}.{Norm.__qualname__}"
"""`dg.Norm`'s qualified type, as ``torch.export`` records it in ``nn_module_stack``."""


def inside_norm(node: Node) -> bool:
    """`node` is an op that a `dg.Norm` module runs."""
    return norm_path(node) is not None


def norm_path(node: Node) -> str | None:
    """The module path of the (innermost) `dg.Norm` running `node`, or None."""
    paths = [path for path, module_type in module_types(node) if module_type == NORM_MODULE_TYPE]
    return paths[-1] if paths else None
