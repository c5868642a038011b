"""Random models built from the supported rows, and the two checks every one of them must pass.

A model is described by a `Graph`: an input shape and a chain of layer specs
(frozen dataclasses, so a failing case prints as Python that rebuilds it and
can be pasted into a regression test). `image_graphs()` and
`sequence_graphs()` are hypothesis strategies that only draw what the rows of
`shared/spec/supported-pytorch-ops.txt` allow: relu only as a fusion tail,
F.pad only right before a Conv2d or AvgPool2d, no max-pool padding, nearest
resizes by whole factors, slices of sequence tensors only, and so on.

`check_graph` runs one model the way a user does (prepare_ptq -> calibrate ->
freeze -> export -> run) and returns an `Outcome`:

1. the program is within one output step of the frozen model on every element
   (`harness.assert_matches_frozen`, the standard of every model test);
2. the device model (`run_int`) equals the scalar reference
   (`dghw_reference.run_module`) on the same compiled program, exactly.

`rejected_graphs()` draws models that break one row's constraint;
`check_rejected` requires a `dg.ExportError` for them, never another exception
and never a silently compiled program.
"""

from __future__ import annotations

import math
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field

import dghw_reference as ref
import harness
import numpy as np
import torch
import torch.nn.functional as F
from arena_check import arena_mismatch
from harness import Lambda
from hypothesis import strategies as st
from torch import nn

import dg
from dg.dialects.common import window_counts
from dg.runtime.program import torch_quant_ops

Shape = tuple[int, ...]
"""The shape of one sample (no batch axis): (C, H, W) for images, (S, D) for sequences."""

MAX_SIDE = 10
"""Spatial extents stay small: the scalar reference loops over every multiply-add."""
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
}


@dataclass(frozen=True)
class Flatten(Layer):
    kind: str

    def module(self, shape: Shape) -> nn.Module:
        return FLATTENS[self.kind]()

    def out_shape(self, shape: Shape) -> Shape:
        return (shape[0],) if self.kind == "global_avg_pool" else (math.prod(shape),)


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


# -- strategies ------------------------------------------------------------------------------


def pairs(low: int, high: int) -> st.SearchStrategy[tuple[int, int]]:
    return st.tuples(st.integers(low, high), st.integers(low, high))


@st.composite
def convs(draw, shape: Shape, allow_pre_pad: bool = True) -> Conv:
    c, h, w = shape
    depthwise = c > 1 and draw(st.integers(0, 3)) == 0
    pre_pad = None
    if allow_pre_pad and draw(st.integers(0, 3)) == 0:
        pre_pad = tuple(draw(st.integers(0, 2)) for _ in range(4))
    left, right, top, bottom = pre_pad or (0, 0, 0, 0)
    padding = draw(pairs(0, 1))
    kernel = (
        draw(st.integers(1, min(3, h + top + bottom + 2 * padding[0]))),
        draw(st.integers(1, min(3, w + left + right + 2 * padding[1]))),
    )
    conv = Conv(
        out_channels=draw(st.integers(1, 6)),
        kernel=kernel,
        stride=draw(pairs(1, 2)),
        padding=padding,
        relu=draw(st.booleans()),
        pre_pad=pre_pad,
        depthwise=depthwise,
        bias=draw(st.integers(0, 4)) > 0,
    )
    _, oh, ow = conv.out_shape(shape)
    if max(oh, ow) <= MAX_SIDE:
        return conv
    # Too large: a plain strided conv instead, its kernel no larger than the map (one side of
    # a wide map may be short; `make fuzz` drew a 3-high kernel for a 2-high map here).
    return Conv(conv.out_channels, (min(3, h), min(3, w)), (2, 2))


@st.composite
def max_pools(draw, shape: Shape) -> MaxPool:
    _, h, w = shape
    return MaxPool(
        kernel=(draw(st.integers(1, min(3, h))), draw(st.integers(1, min(3, w)))),
        stride=draw(pairs(1, 2)),
    )


@st.composite
def avg_pools(draw, shape: Shape) -> AvgPool:
    _, h, w = shape
    kernel = (draw(st.integers(1, min(3, h))), draw(st.integers(1, min(3, w))))
    padding = (draw(st.integers(0, kernel[0] // 2)), draw(st.integers(0, kernel[1] // 2)))
    count_include_pad = draw(st.booleans())
    pre_pad = None
    # F.pad folds into the pool's padding; its zeros count as input elements for torch, which
    # dghw's single count_include_pad flag expresses only if the pool's own padding counts too.
    if (count_include_pad or padding == (0, 0)) and draw(st.integers(0, 3)) == 0:
        pre_pad = tuple(draw(st.integers(0, 1)) for _ in range(4))
    area = kernel[0] * kernel[1]
    override = draw(st.one_of(st.none(), st.none(), st.integers(1, area + 2)))
    return AvgPool(
        kernel,
        stride=draw(pairs(1, 2)),
        padding=padding,
        ceil_mode=draw(st.booleans()),
        count_include_pad=count_include_pad,
        divisor_override=override,
        pre_pad=pre_pad,
    )


@st.composite
def cats(draw, shape: Shape) -> Cat:
    c = shape[0]
    dim = draw(st.sampled_from([1, 2, 3, -1]))
    if dim == 1:
        a, b = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    else:  # the channel extents must agree
        a = b = c
    return Cat(dim, a, b, relu_b=draw(st.booleans()), with_input=draw(st.booleans()))


@st.composite
def interpolations(draw, shape: Shape) -> Interpolate:
    _, h, w = shape
    mode = draw(st.sampled_from(["nearest", "nearest-exact"]))
    if max(h, w) * 2 <= MAX_SIDE and draw(st.booleans()):
        return Interpolate(mode, scale_factor=2)

    # Whole ratios only: torch's float32 source index is dghw's exact one (docs/dghw.md).
    def side(n: int) -> int:
        # n itself always: a side past MAX_SIDE with no divisor 2 or 3 (11) had no option and
        # `make fuzz` stopped drawing.
        options = [n, *(n * f for f in (2, 3) if n * f <= MAX_SIDE)]
        options += [n // d for d in (2, 3) if n % d == 0]
        return draw(st.sampled_from(options))

    return Interpolate(mode, size=(side(h), side(w)))


@st.composite
def mul_constants(draw, shape: Shape) -> MulConstant:
    c, h, w = shape
    table = draw(st.sampled_from([(c, 1, 1), (c, h, w), (1, h, w), (w,)]))
    return MulConstant(table, seed=draw(st.integers(0, 9)))


@st.composite
def image_layers(draw, shape: Shape) -> Layer:
    c, h, w = shape
    kinds = ["conv", "conv", "max_pool", "avg_pool", "residual", "cat", "interpolate"]
    kinds += ["sigmoid", "mul"]
    if max(c, h, w) > 1:
        kinds.append("softmax")
    kind = draw(st.sampled_from(kinds))
    if kind == "conv":
        return draw(convs(shape))
    if kind == "max_pool":
        return draw(max_pools(shape))
    if kind == "avg_pool":
        return draw(avg_pools(shape))
    if kind == "residual":
        return Residual(draw(st.sampled_from([1, 3])), draw(st.booleans()), draw(st.booleans()))
    if kind == "cat":
        return draw(cats(shape))
    if kind == "interpolate":
        return draw(interpolations(shape))
    if kind == "sigmoid":
        return Sigmoid()
    if kind == "mul":
        return draw(mul_constants(shape))
    return Softmax(draw(st.sampled_from([d for d in (1, 2, 3) if shape[d - 1] > 1])))


@st.composite
def vector_heads(draw, shape: Shape) -> list[Layer]:
    """Flatten (or global pool) -> 1-2 Linears -> optionally softmax or sigmoid."""
    kinds = ["torch.flatten", "nn.Flatten", "view", "dg.Flatten", "global_avg_pool"]
    if math.prod(shape) > 192:
        kinds = ["global_avg_pool"]
    head: list[Layer] = [Flatten(draw(st.sampled_from(kinds)))]
    for _ in range(draw(st.integers(1, 2))):
        head.append(Linear(draw(st.integers(2, 8)), relu=draw(st.booleans())))
    tail = draw(st.sampled_from(["none", "softmax", "sigmoid"]))
    if tail == "softmax":
        head.append(Softmax(-1))
    elif tail == "sigmoid":
        head.append(Sigmoid())
    return head


@st.composite
def image_graphs(draw, max_layers: int = 4) -> Graph:
    shape: Shape = (draw(st.integers(1, 4)), draw(st.integers(3, 8)), draw(st.integers(3, 8)))
    input_shape = shape
    # A weight op first, so that every model quantizes something of its own.
    first = draw(
        st.one_of(
            convs(shape),
            st.builds(Residual, st.sampled_from([1, 3]), st.booleans(), st.booleans()),
            cats(shape),
        )
    )
    layers: list[Layer] = [first]
    shape = first.out_shape(shape)
    for _ in range(draw(st.integers(0, max_layers - 1))):
        layer = draw(image_layers(shape))
        layers.append(layer)
        shape = layer.out_shape(shape)
    if draw(st.booleans()):
        layers += draw(vector_heads(shape))
    return Graph(input_shape, tuple(layers))


@st.composite
def attentions(draw) -> Attention:
    width = draw(st.integers(2, 6))
    values = draw(st.booleans())
    heads = 2 if values and width % 2 == 0 and draw(st.booleans()) else 1
    return Attention(width, draw(st.sampled_from(["none", "mul", "div"])), values, heads)


@st.composite
def sequence_layers(draw, shape: Shape) -> Layer:
    s, d = shape
    kind = draw(
        st.sampled_from(
            ["linear", "linear", "transpose", "slice", "attention", "residual", "cat", "mul"]
            + ["sigmoid", "softmax"]
        )
    )
    if kind == "linear":
        return Linear(draw(st.integers(2, 8)), draw(st.booleans()))
    if kind == "transpose":
        return Transpose()
    if kind == "slice" and max(s, d) > 1:
        axis = draw(st.sampled_from([a for a, n in ((1, s), (-1, d)) if n > 1]))
        n = s if axis == 1 else d
        start = draw(st.integers(0, n - 1))
        return Slice(axis, start, draw(st.integers(start + 1, n)))
    if kind == "attention":
        return draw(attentions())
    if kind == "residual":
        return SequenceResidual(draw(st.booleans()))
    if kind == "cat":
        dim = draw(st.sampled_from([-1, 1]))
        a = draw(st.integers(1, 5))
        return SequenceCat(a, a if dim == 1 else draw(st.integers(1, 5)), dim)
    if kind == "mul":
        table = draw(st.sampled_from([(s, d), (d,), (1, d), (s, 1)]))
        return MulConstant(table, seed=draw(st.integers(0, 9)))
    if kind == "softmax" and d > 1:
        return Softmax(-1)
    return Sigmoid()


@st.composite
def sequence_graphs(draw, max_layers: int = 4) -> Graph:
    shape: Shape = (draw(st.integers(2, 6)), draw(st.integers(2, 8)))
    input_shape = shape
    first = draw(
        st.one_of(
            st.builds(Linear, st.integers(2, 8), st.booleans()),
            st.builds(SequenceResidual, st.booleans()),
            attentions(),
        )
    )
    layers: list[Layer] = [first]
    shape = first.out_shape(shape)
    for _ in range(draw(st.integers(0, max_layers - 1))):
        layer = draw(sequence_layers(shape))
        if max(layer.out_shape(shape)) > 2 * MAX_SIDE:
            continue
        layers.append(layer)
        shape = layer.out_shape(shape)
    return Graph(input_shape, tuple(layers))


def graphs(max_layers: int = 4) -> st.SearchStrategy[Graph]:
    return st.one_of(image_graphs(max_layers), sequence_graphs(max_layers))


# -- the checks ------------------------------------------------------------------------------


PASSING = frozenset({"passed", "lsb-propagated", "diagnosed", "still-valid"})
"""The outcomes that are not failures (`classify_lsb` says why "lsb-propagated" is not);
"diagnosed" and "still-valid" are the dg-opt mutants'."""


@dataclass(frozen=True)
class Outcome:
    """`kind` is "passed" or the kind of failure; `detail` says what happened."""

    kind: str
    detail: str = ""
    max_lsb: int | None = None

    @property
    def passed(self) -> bool:
        return self.kind in PASSING


def check_graph(graph: Graph) -> Outcome:
    """Compile `graph` as a user does; device vs frozen, then device vs scalar reference."""
    try:
        compiled = harness.compile_model(graph.build(), [graph.input_shape])
    except dg.ExportError as error:
        return Outcome("rejected", str(error))
    except Exception:  # noqa: BLE001 - any other exception is a crash of dg (or torch)
        return Outcome("crash-compile", traceback.format_exc(limit=-6))
    try:
        comparison = harness.assert_matches_frozen("fuzz", repr(graph), compiled)
    except AssertionError as error:
        if "output step" in str(error):
            return classify_lsb(graph, str(error))
        return Outcome("vacuous" if "constant" in str(error) else "harness", str(error))
    except Exception:  # noqa: BLE001
        return Outcome("crash-run", traceback.format_exc(limit=-6))
    mismatch = reference_mismatch(compiled)
    if mismatch:
        return Outcome("reference", mismatch, comparison.max_lsb)
    mismatch = arena_mismatch(compiled.program)
    if mismatch:
        return Outcome("arena", mismatch, comparison.max_lsb)
    return Outcome("passed", max_lsb=comparison.max_lsb)


def prefix_lsb(graph: Graph, layers: int) -> int | None:
    """Max output steps between device and frozen model of the first `layers` layers.

    The prefix model is the full model's front: same weights (`Graph.build` seeds
    them in layer order) and same calibration data, so the same grids. None when
    it does not compile or its output is constant.
    """
    prefix = Graph(graph.input_shape, graph.layers[:layers])
    try:
        compiled = harness.compile_model(prefix.build(), [prefix.input_shape])
        return harness.assert_matches_frozen(
            "fuzz prefix", repr(prefix), compiled, max_lsb=255
        ).max_lsb
    except (AssertionError, dg.ExportError):
        return None


def classify_lsb(graph: Graph, message: str) -> Outcome:
    """More than one step off: a layer's own error, or an upstream step grown by later layers?

    docs/dghw.md: dghw and torch round ties differently (rescale: half up vs half
    to even; avg pool: half away from zero), so single elements differ by one step,
    and a later layer that multiplies (a conv, a Linear, a mul by a constant
    larger than one output step) turns one step of its input into several of its
    output. That is the quantized model's own sensitivity, not a miscompile: the
    outcome is "lsb-propagated" when the model up to the layer before the first
    one over one step already differed. "lsb" when a layer is more than one step
    off on inputs that agreed exactly: a compiler bug.
    """
    previous = 0
    for n in range(1, len(graph.layers) + 1):
        lsb = prefix_lsb(graph, n) if n < len(graph.layers) else 2
        if lsb is None or lsb <= 1:
            previous = lsb if lsb is not None else previous
            continue
        layer = graph.layers[n - 1]
        where = f"layer {n} ({type(layer).__name__}) is the first more than one step off"
        if previous >= 1:
            return Outcome("lsb-propagated", f"{where}; its input already differed by {previous}")
        return Outcome("lsb", f"{where}, on inputs that agreed exactly\n{message}")
    return Outcome("lsb", message)


def device_inputs(compiled: harness.Compiled, batch: int) -> list[np.ndarray]:
    """Int8 inputs the way the host makes them from a float batch."""
    quantize, _ = torch_quant_ops()
    xs = harness.inputs(compiled.shapes, batch, seed=harness.CHECK_SEED + 1)
    return [
        quantize(x, scale, zp, -128, 127, torch.int8).numpy()
        for x, (scale, zp) in zip(xs, compiled.program.input_qparams, strict=True)
    ]


def reference_mismatch(compiled: harness.Compiled) -> str:
    """ "" if the device model's integers are the scalar reference's, else what differs."""
    arrays = device_inputs(compiled, REFERENCE_BATCH)
    device = compiled.program.run_int(*arrays)
    device = list(device) if isinstance(device, (tuple, list)) else [device]
    expected = ref.run_module(compiled.program.dghw, arrays)
    for i, (got, want) in enumerate(zip(device, expected, strict=True)):
        if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
            return (
                f"output {i}: device {got.dtype}{list(got.shape)} != "
                f"reference {want.dtype}{list(want.shape)}; "
                f"{int(np.count_nonzero(np.asarray(got) != np.asarray(want)))} elements differ"
            )
    return ""


# -- models dg must reject -------------------------------------------------------------------

REJECTED: dict[str, tuple[str, object]] = {
    # name: (domain, tail applied to the conv / linear output)
    "standalone_relu_after_pool": ("image", lambda y: F.relu(F.max_pool2d(y, 2))),
    "gelu": ("image", F.gelu),
    "tanh": ("sequence", torch.tanh),
    "silu": ("image", F.silu),
    "permute": ("image", lambda y: y.permute(0, 1, 3, 2)),
    "standalone_pad": ("image", lambda y: F.pad(y, (1, 1, 1, 1))),
    "pad_before_max_pool": ("image", lambda y: F.max_pool2d(F.pad(y, (1, 1, 1, 1)), 2)),
    "max_pool_padding": ("image", lambda y: F.max_pool2d(y, 3, 1, padding=1)),
    "mul_by_scalar": ("sequence", lambda y: y * 3.0),
    "expand": ("sequence", lambda y: y[:, :1].expand(-1, 4, -1)),
    "repeat": ("sequence", lambda y: y.repeat(1, 2, 1)),
    "slice_of_feature_map": ("image", lambda y: y[:, :, 1:3]),
    "slice_step_2": ("sequence", lambda y: y[:, ::2]),
    "interpolate_bilinear": ("image", lambda y: F.interpolate(y, scale_factor=2, mode="bilinear")),
    "activation_times_activation": ("sequence", lambda y: y * y),
    "transpose_batch_axis": ("sequence", lambda y: y.transpose(0, 1)),
    "cat_batch_axis": ("sequence", lambda y: torch.cat((y, y), dim=0)),
    "batch_hard_coded": ("sequence", lambda y: y.view(2, -1)),
    "pad_nonzero_value_before_conv": ("image", "pad_value"),
    "conv_transpose": ("image", "conv_transpose"),
    "grouped_conv": ("image", "grouped"),
}


class RejectedModel(nn.Module):
    def __init__(self, name: str, features: int, channels: int):
        super().__init__()
        domain, tail = REJECTED[name]
        self.stem = (
            nn.Conv2d(channels, 4, 3, padding=1) if domain == "image" else nn.Linear(features, 6)
        )
        self.tail = tail
        if tail == "pad_value" or tail == "grouped":
            self.conv = nn.Conv2d(4, 4, 3, groups=2 if tail == "grouped" else 1)
        elif tail == "conv_transpose":
            self.conv = nn.ConvTranspose2d(4, 2, 2, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.stem(x)
        if self.tail == "pad_value":
            return self.conv(F.pad(y, (1, 1, 1, 1), value=0.5))
        if isinstance(self.tail, str):
            return self.conv(y)
        return self.tail(y)


@dataclass(frozen=True)
class Rejected:
    name: str
    shape: Shape = field(default=(3, 6, 6))

    def input_shape(self) -> Shape:
        return (self.shape[0], *self.shape[1:]) if REJECTED[self.name][0] == "image" else (4, 5)

    def build(self) -> nn.Module:
        torch.manual_seed(0)
        shape = self.input_shape()
        return RejectedModel(self.name, shape[-1], shape[0])


@st.composite
def rejected_graphs(draw) -> Rejected:
    name = draw(st.sampled_from(sorted(REJECTED)))
    return Rejected(
        name, (draw(st.integers(1, 3)), draw(st.integers(4, 7)), draw(st.integers(4, 7)))
    )


def check_rejected(model: Rejected) -> Outcome:
    """dg must raise `ExportError` with at least one problem; anything else is a failure."""
    try:
        harness.compile_model(model.build(), [model.input_shape()])
    except dg.ExportError as error:
        if not error.problems or not all(p.reason for p in error.problems):
            return Outcome("empty-problem", str(error))
        return Outcome("passed", str(error))
    except Exception:  # noqa: BLE001
        return Outcome("crash-reject", traceback.format_exc(limit=-6))
    return Outcome("accepted", f"{model} compiled without an ExportError")


def summarize(outcomes: Sequence[Outcome]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for outcome in outcomes:
        counts[outcome.kind] = counts.get(outcome.kind, 0) + 1
    return counts
