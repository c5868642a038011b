"""The layer specs of the fuzzer's random models (`fuzz_strategies` draws them).

A model is a `Graph`: an input shape and a chain of layer specs, frozen
dataclasses, so that a failing case prints as Python that rebuilds it and can
be pasted into a regression test. Each spec builds its torch module for an
input shape (`module`) and says the shape it gives (`out_shape`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from harness import Lambda
from torch import nn

import dg
from dg.dialects.common import window_counts

Shape = tuple[int, ...]
"""The shape of one sample (no batch axis): (C, H, W) for images, (S, D) for sequences."""

MAX_SIDE = 32
"""Feature maps up to 32x32, sequences up to 64x64 (2 * MAX_SIDE): the sizes users run."""
MAX_CHANNELS = 64
REFERENCE_BATCH = 2


# -- layers ------------------------------------------------------------------------------


class Layer:
    """A layer spec: `module(shape)` builds the torch module, `out_shape(shape)` its result."""

    def module(self, shape: Shape) -> nn.Module:
        raise NotImplementedError

    def out_shape(self, shape: Shape) -> Shape:
        raise NotImplementedError


def window_out(size: int, kernel: int, stride: int, lo: int, hi: int, ceil: bool = False) -> int:
    """The window count along one axis, torch's rule (floor or ceil mode)."""
    return window_counts(size, kernel, stride, lo, hi)[int(ceil)]


class PaddedConv(nn.Module):
    def __init__(self, conv: nn.Conv2d, pre_pad, relu: bool):
        super().__init__()
        self.conv, self.pre_pad, self.relu = conv, pre_pad, relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.pre_pad is not None:
            x = F.pad(x, self.pre_pad)
        y = self.conv(x)
        return F.relu(y) if self.relu else y


@dataclass(frozen=True)
class Conv(Layer):
    """nn.Conv2d (dense, or depthwise with groups = channels), optionally after F.pad."""

    out_channels: int
    kernel: tuple[int, int]
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    relu: bool = False
    pre_pad: tuple[int, int, int, int] | None = None
    """F.pad's (left, right, top, bottom)."""
    depthwise: bool = False
    bias: bool = True

    def module(self, shape: Shape) -> nn.Module:
        channels = shape[0]
        out = channels if self.depthwise else self.out_channels
        conv = nn.Conv2d(
            channels,
            out,
            self.kernel,
            self.stride,
            self.padding,
            groups=channels if self.depthwise else 1,
            bias=self.bias,
        )
        return PaddedConv(conv, self.pre_pad, self.relu)

    def out_shape(self, shape: Shape) -> Shape:
        c, h, w = shape
        left, right, top, bottom = self.pre_pad or (0, 0, 0, 0)
        (kh, kw), (sy, sx), (py, px) = self.kernel, self.stride, self.padding
        return (
            c if self.depthwise else self.out_channels,
            window_out(h + top + bottom, kh, sy, py, py),
            window_out(w + left + right, kw, sx, px, px),
        )


@dataclass(frozen=True)
class MaxPool(Layer):
    kernel: tuple[int, int]
    stride: tuple[int, int]

    def module(self, shape: Shape) -> nn.Module:
        return nn.MaxPool2d(self.kernel, self.stride)

    def out_shape(self, shape: Shape) -> Shape:
        c, h, w = shape
        (kh, kw), (sy, sx) = self.kernel, self.stride
        return c, window_out(h, kh, sy, 0, 0), window_out(w, kw, sx, 0, 0)


class PaddedPool(nn.Module):
    def __init__(self, pool: nn.Module, pre_pad):
        super().__init__()
        self.pool, self.pre_pad = pool, pre_pad

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x if self.pre_pad is None else F.pad(x, self.pre_pad))


@dataclass(frozen=True)
class AvgPool(Layer):
    kernel: tuple[int, int]
    stride: tuple[int, int]
    padding: tuple[int, int] = (0, 0)
    ceil_mode: bool = False
    count_include_pad: bool = True
    divisor_override: int | None = None
    pre_pad: tuple[int, int, int, int] | None = None

    def module(self, shape: Shape) -> nn.Module:
        pool = nn.AvgPool2d(
            self.kernel,
            self.stride,
            self.padding,
            ceil_mode=self.ceil_mode,
            count_include_pad=self.count_include_pad,
            divisor_override=self.divisor_override,
        )
        return PaddedPool(pool, self.pre_pad)

    def out_shape(self, shape: Shape) -> Shape:
        c, h, w = shape
        left, right, top, bottom = self.pre_pad or (0, 0, 0, 0)
        sizes = (h + top + bottom, w + left + right)
        extents = [
            window_out(size, k, stride, p, p, self.ceil_mode)
            for size, k, stride, p in zip(
                sizes, self.kernel, self.stride, self.padding, strict=True
            )
        ]
        return c, extents[0], extents[1]


class ResidualBlock(nn.Module):
    def __init__(self, channels: int, kernel: int, relu: bool, two_convs: bool):
        super().__init__()
        self.a = nn.Conv2d(channels, channels, kernel, padding=kernel // 2)
        self.b = nn.Conv2d(channels, channels, 1) if two_convs else None
        self.relu = relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.a(x) + (x if self.b is None else self.b(x))
        return F.relu(y) if self.relu else y


@dataclass(frozen=True)
class Residual(Layer):
    """conv(x) + x (or conv_a(x) + conv_b(x)), optionally relu: shape-preserving."""

    kernel: int = 3
    relu: bool = False
    two_convs: bool = False

    def module(self, shape: Shape) -> nn.Module:
        return ResidualBlock(shape[0], self.kernel, self.relu, self.two_convs)

    def out_shape(self, shape: Shape) -> Shape:
        return shape


class CatBlock(nn.Module):
    def __init__(self, channels: int, spec: Cat):
        super().__init__()
        self.a = nn.Conv2d(channels, spec.channels_a, 3, padding=1)
        self.b = nn.Conv2d(channels, spec.channels_b, 1)
        self.spec = spec

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b = self.b(x)
        branches = [self.a(x), F.relu(b) if self.spec.relu_b else b]
        if self.spec.with_input:
            branches.append(x)
        return torch.cat(branches, dim=self.spec.dim)


@dataclass(frozen=True)
class Cat(Layer):
    """torch.cat of a 3x3 conv, a 1x1 conv (and the input) along `dim`."""

    dim: int
    channels_a: int
    channels_b: int
    relu_b: bool = False
    with_input: bool = False

    def module(self, shape: Shape) -> nn.Module:
        return CatBlock(shape[0], self)

    def out_shape(self, shape: Shape) -> Shape:
        parts = [(self.channels_a, *shape[1:]), (self.channels_b, *shape[1:])]
        if self.with_input:
            parts.append(shape)
        axis = self.dim % 3 if self.dim < 0 else self.dim - 1
        out = list(shape)
        out[0] = self.channels_a  # the non-concatenated extents agree (the strategy ensures it)
        out[axis] = sum(p[axis] for p in parts)
        return tuple(out)


@dataclass(frozen=True)
class Interpolate(Layer):
    """F.interpolate nearest / nearest-exact by a whole scale factor or to a whole-ratio size."""

    mode: str
    size: tuple[int, int] | None = None
    scale_factor: int | None = None

    def module(self, shape: Shape) -> nn.Module:
        mode, size, factor = self.mode, self.size, self.scale_factor
        return Lambda(lambda y: F.interpolate(y, size=size, scale_factor=factor, mode=mode))

    def out_shape(self, shape: Shape) -> Shape:
        c, h, w = shape
        if self.size is not None:
            return c, *self.size
        assert self.scale_factor is not None
        return c, h * self.scale_factor, w * self.scale_factor


@dataclass(frozen=True)
class Sigmoid(Layer):
    def module(self, shape: Shape) -> nn.Module:
        return Lambda(torch.sigmoid)

    def out_shape(self, shape: Shape) -> Shape:
        return shape


@dataclass(frozen=True)
class Softmax(Layer):
    dim: int

    def module(self, shape: Shape) -> nn.Module:
        dim = self.dim
        return Lambda(lambda y: F.softmax(y, dim=dim))

    def out_shape(self, shape: Shape) -> Shape:
        return shape


class TimesConstant(nn.Module):
    def __init__(self, table: torch.Tensor):
        super().__init__()
        self.register_buffer("table", table)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mul(x, self.table)


@dataclass(frozen=True)
class MulConstant(Layer):
    """torch.mul(x, table), the table broadcast against one sample (`table_shape`)."""

    table_shape: tuple[int, ...]
    seed: int = 0

    def module(self, shape: Shape) -> nn.Module:
        generator = torch.Generator().manual_seed(self.seed)
        return TimesConstant(torch.randn(self.table_shape, generator=generator))

    def out_shape(self, shape: Shape) -> Shape:
        return shape


# -- heads: from a feature map to a vector ---------------------------------------------------

FLATTENS = {
    "torch.flatten": lambda: Lambda(lambda y: torch.flatten(y, 1)),
    "nn.Flatten": nn.Flatten,
    "view": lambda: Lambda(lambda y: y.view(y.size(0), -1)),
    "dg.Flatten": dg.Flatten,
    "global_avg_pool": lambda: nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten()),
    "mean": lambda: Lambda(lambda y: y.mean((2, 3))),
    "mean_keepdim": lambda: Lambda(lambda y: y.mean((-2, -1), keepdim=True).flatten(1)),
}
POOLING_HEADS = ("global_avg_pool", "mean", "mean_keepdim")


@dataclass(frozen=True)
class Flatten(Layer):
    kind: str

    def module(self, shape: Shape) -> nn.Module:
        return FLATTENS[self.kind]()

    def out_shape(self, shape: Shape) -> Shape:
        return (shape[0],) if self.kind in POOLING_HEADS else (math.prod(shape),)


class LinearBlock(nn.Module):
    def __init__(self, features: int, out: int, relu: bool):
        super().__init__()
        self.fc, self.relu = nn.Linear(features, out), relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x)
        return F.relu(y) if self.relu else y


@dataclass(frozen=True)
class Linear(Layer):
    """nn.Linear over the last axis (of [B, D], [B, S, D] or [B, D, S] after a transpose)."""

    out: int
    relu: bool = False

    def module(self, shape: Shape) -> nn.Module:
        return LinearBlock(shape[-1], self.out, self.relu)

    def out_shape(self, shape: Shape) -> Shape:
        return (*shape[:-1], self.out)


# -- sequence layers -------------------------------------------------------------------------


@dataclass(frozen=True)
class Transpose(Layer):
    """torch.transpose of the two feature axes of [B, S, D]."""

    def module(self, shape: Shape) -> nn.Module:
        return Lambda(lambda y: y.transpose(1, 2))

    def out_shape(self, shape: Shape) -> Shape:
        return shape[1], shape[0]


@dataclass(frozen=True)
class Slice(Layer):
    """y[:, start:end] (axis 1) or y[..., start:end] (the last axis)."""

    axis: int
    start: int
    end: int

    def module(self, shape: Shape) -> nn.Module:
        start, end = self.start, self.end
        if self.axis == 1:
            return Lambda(lambda y: y[:, start:end])
        return Lambda(lambda y: y[..., start:end])

    def out_shape(self, shape: Shape) -> Shape:
        out = list(shape)
        out[self.axis - 1 if self.axis == 1 else -1] = self.end - self.start
        return tuple(out)


class AttentionBlock(nn.Module):
    def __init__(self, features: int, spec: Attention):
        super().__init__()
        self.q, self.k = nn.Linear(features, spec.width), nn.Linear(features, spec.width)
        self.v = nn.Linear(features, spec.width) if spec.values else None
        self.spec = spec

    def split(self, y: torch.Tensor) -> torch.Tensor:
        """[B, S, width] -> [B, heads, S, width / heads] (the identity for one head)."""
        if self.spec.heads == 1:
            return y
        b, s, _ = y.shape
        return y.view(b, s, self.spec.heads, -1).transpose(1, 2)

    def merge(self, y: torch.Tensor) -> torch.Tensor:
        if self.spec.heads == 1:
            return y
        b, _, s, _ = y.shape
        return y.transpose(1, 2).reshape(b, s, self.spec.width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scores = torch.matmul(self.split(self.q(x)), self.split(self.k(x)).transpose(-2, -1))
        if self.spec.scale == "mul":
            scores = scores * (1 / math.sqrt(self.spec.width))
        elif self.spec.scale == "div":
            scores = scores / math.sqrt(self.spec.width)
        if self.v is None:
            return scores
        return self.merge(torch.matmul(torch.softmax(scores, dim=-1), self.split(self.v(x))))


@dataclass(frozen=True)
class Attention(Layer):
    """q @ k^T (scaled), and with `values` softmax(...) @ v: [B, S, D] -> [B, S, S | width]."""

    width: int
    scale: str = "none"
    values: bool = True
    heads: int = 1
    """Heads > 1 (with values): [B, heads, S, width / heads] attention, merged back after."""

    def module(self, shape: Shape) -> nn.Module:
        return AttentionBlock(shape[-1], self)

    def out_shape(self, shape: Shape) -> Shape:
        return (shape[0], self.width if self.values else shape[0])


class SequenceResidualBlock(nn.Module):
    def __init__(self, features: int, relu: bool):
        super().__init__()
        self.fc, self.relu = nn.Linear(features, features), relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x) + x
        return F.relu(y) if self.relu else y


@dataclass(frozen=True)
class SequenceResidual(Layer):
    relu: bool = False

    def module(self, shape: Shape) -> nn.Module:
        return SequenceResidualBlock(shape[-1], self.relu)

    def out_shape(self, shape: Shape) -> Shape:
        return shape


class SequenceCatBlock(nn.Module):
    def __init__(self, features: int, spec: SequenceCat):
        super().__init__()
        self.a, self.b = nn.Linear(features, spec.a), nn.Linear(features, spec.b)
        self.dim = spec.dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat((self.a(x), self.b(x)), dim=self.dim)


@dataclass(frozen=True)
class SequenceCat(Layer):
    """torch.cat of two Linears, along the features (-1) or the positions (1, equal widths)."""

    a: int
    b: int
    dim: int = -1

    def module(self, shape: Shape) -> nn.Module:
        return SequenceCatBlock(shape[-1], self)

    def out_shape(self, shape: Shape) -> Shape:
        if self.dim == -1:
            return (*shape[:-1], self.a + self.b)
        return (2 * shape[0], self.a)


# -- a whole model ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Graph:
    input_shape: Shape
    layers: tuple[Layer, ...]

    def shapes(self) -> list[Shape]:
        """The shape after every layer, the input's first."""
        shapes = [self.input_shape]
        for layer in self.layers:
            shapes.append(layer.out_shape(shapes[-1]))
        return shapes

    def build(self) -> nn.Module:
        torch.manual_seed(0)
        shapes = self.shapes()
        return nn.Sequential(
            *(layer.module(s) for layer, s in zip(self.layers, shapes[:-1], strict=True))
        )


# -- idioms beyond the spec's wording (dg.frontend.idioms) -------------------------------


class PartsBlock(nn.Module):
    def __init__(self, spec: Parts):
        super().__init__()
        self.spec = spec

    def forward(self, y: torch.Tensor) -> torch.Tensor:
        kind, dim, size = self.spec.kind, self.spec.dim, self.spec.size
        if kind == "unbind":  # the last token before the first, side by side
            tokens = y.unbind(1)
            return torch.cat((tokens[-1], tokens[0]), dim=-1).reshape(y.shape[0], 1, -1)
        if kind == "chunk":
            parts = y.chunk(size, dim=dim)
        elif kind == "split":
            parts = y.split(size, dim=dim)
        else:
            parts = torch.split(y, [size, y.shape[dim] - size], dim=dim)
        return torch.cat(parts[::-1], dim=dim)


@dataclass(frozen=True)
class Parts(Layer):
    """`chunk`, `split` (by size or sizes) of a sequence tensor, its parts concatenated again
    in reverse order; `unbind(1)`, its last and first token side by side."""

    kind: str
    dim: int = -1
    size: int = 2

    def module(self, shape: Shape) -> nn.Module:
        return PartsBlock(self)

    def out_shape(self, shape: Shape) -> Shape:
        return (1, 2 * shape[1]) if self.kind == "unbind" else shape


@dataclass(frozen=True)
class TokenMean(Layer):
    """`y.mean(1, keepdim=True)`: token mean-pooling of [B, S, D] -> [B, 1, D]."""

    def module(self, shape: Shape) -> nn.Module:
        return Lambda(lambda y: y.mean(1, keepdim=True))

    def out_shape(self, shape: Shape) -> Shape:
        return (1, shape[1])
