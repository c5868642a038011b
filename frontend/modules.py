"""PyTorch modules dg provides for models written for the dg accelerator."""

from __future__ import annotations

import math
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


def rope_tables(max_seq_len: int, head_dim: int, base: float = 10000.0) -> tuple[torch.Tensor, ...]:
    """RoPE's constant tables ``(cos, sin_signed)``, each ``[max_seq_len, head_dim]``.

    Frequencies are laid out "half-split" (each frequency in both halves, the
    Llama / GPT-NeoX layout). ``sin_signed = cat(-sin_half, sin_half)`` carries
    the sign of the half rotation, so the rotation needs no negation:
    ``rotate_half(x) * sin == cat(x2, x1) * sin_signed``.
    """
    if head_dim % 2:
        raise ValueError(f"RoPE needs an even head dimension, got {head_dim}")
    inverse_frequency = 1.0 / (base ** (torch.arange(0, head_dim, 2).double() / head_dim))
    angles = torch.outer(torch.arange(max_seq_len).double(), inverse_frequency)
    sin_half = angles.sin()
    cos = torch.cat((angles.cos(), angles.cos()), dim=-1)
    sin_signed = torch.cat((-sin_half, sin_half), dim=-1)
    return cos.float(), sin_signed.float()


class RotaryEmbedding(nn.Module):
    """Rotary position embedding (RoPE) of ``[..., S, head_dim]``, ``S <= max_seq_len``.

    Computes ``x * cos + cat(x2, x1) * sin_signed`` where ``x1, x2`` are the
    two halves of the last axis and ``sin_signed = cat(-sin, sin)``: the
    classic ``x * cos + rotate_half(x) * sin`` with the sign of
    ``rotate_half``'s ``-x2`` folded into the constant table. Every op is a
    supported dg row: slices of the last axis, ``torch.cat``, activation times
    constant table, add. The tables hold `max_seq_len` positions; a shorter
    sequence uses their first S rows (``self.cos[:S]``, a slice of a constant
    that dg computes at compile time).
    """

    cos: torch.Tensor
    sin_signed: torch.Tensor

    def __init__(self, head_dim: int, max_seq_len: int, base: float = 10000.0):
        super().__init__()
        self.head_dim, self.max_seq_len = head_dim, max_seq_len
        cos, sin_signed = rope_tables(max_seq_len, head_dim, base)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin_signed", sin_signed, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        seq_len, half = x.shape[-2], self.head_dim // 2
        if x.shape[-1] != self.head_dim or seq_len > self.max_seq_len:
            raise ValueError(
                f"dg.RotaryEmbedding(head_dim={self.head_dim}, max_seq_len={self.max_seq_len}) "
                f"got a tensor of shape {list(x.shape)}: expected [..., S, {self.head_dim}] "
                f"with S <= {self.max_seq_len}; build it with max_seq_len >= the sequence length"
            )
        cos, sin_signed = self.cos, self.sin_signed
        if seq_len < self.max_seq_len:
            cos, sin_signed = cos[:seq_len], sin_signed[:seq_len]
        swapped = torch.cat((x[..., half:], x[..., :half]), dim=-1)
        return x * cos + swapped * sin_signed

    def extra_repr(self) -> str:
        return f"head_dim={self.head_dim}, max_seq_len={self.max_seq_len}"


class SelfAttention(nn.Module):
    """Multi-head self-attention of a ``[B, S, dim]`` sequence, written in dg's supported rows.

    ``q, k, v = Linear(x)`` each, reshaped to ``[B, num_heads, S, dim // num_heads]``;
    with ``rope=True`` q and k get a `RotaryEmbedding` (tables for `max_seq_len`
    positions; the input's S may be shorter). Scores ``(q @ k^T) * (1 / sqrt(head_dim))``
    (the scalar scale folds into the matmul's requantization on the device),
    ``softmax(-1)``, ``@ v``, heads back to ``[B, S, dim]``, output Linear.
    Use it where a model would call ``F.scaled_dot_product_attention`` or
    ``nn.MultiheadAttention`` (no mask, no dropout). The result is the same as
    the explicit matmul + softmax written out by hand: dg compiles either.
    """

    def __init__(
        self,
        dim: int,
        num_heads: int,
        *,
        bias: bool = True,
        rope: bool = False,
        max_seq_len: int | None = None,
    ):
        super().__init__()
        if dim % num_heads:
            raise ValueError(
                f"dg.SelfAttention: dim {dim} is not a multiple of num_heads {num_heads}"
            )
        if rope and max_seq_len is None:
            raise ValueError(
                "dg.SelfAttention(rope=True) needs max_seq_len (the RoPE table length)"
            )
        self.dim, self.num_heads, self.head_dim = dim, num_heads, dim // num_heads
        self.scale = 1.0 / math.sqrt(self.head_dim)
        self.q = nn.Linear(dim, dim, bias=bias)
        self.k = nn.Linear(dim, dim, bias=bias)
        self.v = nn.Linear(dim, dim, bias=bias)
        self.out = nn.Linear(dim, dim, bias=bias)
        self.rope = RotaryEmbedding(self.head_dim, max_seq_len) if rope and max_seq_len else None

    def _heads(self, x: torch.Tensor) -> torch.Tensor:
        """``[B, S, dim] -> [B, num_heads, S, head_dim]``."""
        batch, seq_len, _ = x.shape
        return x.reshape(batch, seq_len, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 3 or x.shape[-1] != self.dim:
            raise ValueError(
                f"dg.SelfAttention(dim={self.dim}) expects [B, S, {self.dim}], got {list(x.shape)}"
            )
        batch, seq_len, _ = x.shape
        q, k, v = self._heads(self.q(x)), self._heads(self.k(x)), self._heads(self.v(x))
        if self.rope is not None:
            q, k = self.rope(q), self.rope(k)
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        mixed = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.out(mixed.transpose(1, 2).reshape(batch, seq_len, self.dim))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, num_heads={self.num_heads}, rope={self.rope is not None}"
