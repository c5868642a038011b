"""Hypothesis strategies drawing the fuzzer's random models from the supported rows.

`image_graphs()` and `sequence_graphs()` only draw what the rows of the spec
allow: relu only as a fusion tail, F.pad only right before a Conv2d or
AvgPool2d, no max-pool padding, nearest resizes by whole factors, slices of
sequence tensors only, and so on; plus dg's beyond-the-spec idioms.
"""

from __future__ import annotations

import math

import torch
from fuzz_layers import (
    MAX_CHANNELS,
    MAX_SIDE,
    POOLING_HEADS,
    Attention,
    AvgPool,
    Cat,
    Conv,
    Flatten,
    Graph,
    Interpolate,
    Layer,
    Linear,
    MaxPool,
    MulConstant,
    Parts,
    Residual,
    SequenceCat,
    SequenceResidual,
    Shape,
    Sigmoid,
    Slice,
    Softmax,
    TokenMean,
    Transpose,
)
from hypothesis import assume
from hypothesis import strategies as st

# -- strategies ------------------------------------------------------------------------------


def widths(low: int = 1) -> st.SearchStrategy[int]:
    """Channels or features: often few (small cases shrink well), often up to MAX_CHANNELS."""
    return st.one_of(st.integers(low, 8), st.integers(9, MAX_CHANNELS))


def sequence_extents() -> st.SearchStrategy[int]:
    return st.one_of(st.integers(2, 8), st.integers(9, 2 * MAX_SIDE))


@st.composite
def parts(draw, shape: Shape) -> Parts:
    """A chunk / split / split-with-sizes along an axis of [S, D] with room for two parts, or
    an unbind of the tokens."""
    s, d = shape
    kind = draw(st.sampled_from(["chunk", "split", "split_sizes", "unbind"]))
    if kind == "unbind":
        return Parts("unbind", 1) if s > 1 else Parts("chunk", -1, 2)
    dim = draw(st.sampled_from([a for a, n in ((1, s), (-1, d)) if n > 1]))
    n = s if dim == 1 else d
    size = draw(st.integers(2, min(n, 4))) if kind == "chunk" else draw(st.integers(1, n - 1))
    return Parts(kind, dim, size)


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
        out_channels=draw(widths()),
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
        a, b = draw(st.integers(1, 16)), draw(st.integers(1, 16))
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
    kinds = ["torch.flatten", "nn.Flatten", "view", "dg.Flatten", *POOLING_HEADS]
    if math.prod(shape) > 1024:
        kinds = list(POOLING_HEADS)
    head: list[Layer] = [Flatten(draw(st.sampled_from(kinds)))]
    for _ in range(draw(st.integers(1, 2))):
        head.append(Linear(draw(widths(2)), relu=draw(st.booleans())))
    tail = draw(st.sampled_from(["none", "softmax", "sigmoid"]))
    if tail == "softmax":
        head.append(Softmax(-1))
    elif tail == "sigmoid":
        head.append(Sigmoid())
    return head


@st.composite
def image_graphs(draw, max_layers: int = 4) -> Graph:
    side = st.one_of(st.integers(3, 8), st.integers(9, MAX_SIDE))
    shape: Shape = (draw(widths()), draw(side), draw(side))
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
    graph = Graph(input_shape, tuple(layers))
    assume(informative(graph))
    return graph


@st.composite
def attentions(draw) -> Attention:
    width = draw(widths(2))
    values = draw(st.booleans())
    heads = 2 if values and width % 2 == 0 and draw(st.booleans()) else 1
    return Attention(width, draw(st.sampled_from(["none", "mul", "div"])), values, heads)


@st.composite
def sequence_layers(draw, shape: Shape) -> Layer:
    s, d = shape
    kind = draw(
        st.sampled_from(
            ["linear", "linear", "transpose", "slice", "attention", "residual", "cat", "mul"]
            + ["sigmoid", "softmax", "parts", "token_mean"]
        )
    )
    if kind == "linear":
        return Linear(draw(widths(2)), draw(st.booleans()))
    if kind == "parts" and d > 1:
        return draw(parts(shape))
    if kind == "token_mean" and s > 1:
        return TokenMean()
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
        a = draw(st.integers(1, 16))
        return SequenceCat(a, a if dim == 1 else draw(st.integers(1, 16)), dim)
    if kind == "mul":
        table = draw(st.sampled_from([(s, d), (d,), (1, d), (s, 1)]))
        return MulConstant(table, seed=draw(st.integers(0, 9)))
    if kind == "softmax" and d > 1:
        return Softmax(-1)
    return Sigmoid()


@st.composite
def sequence_graphs(draw, max_layers: int = 4) -> Graph:
    shape: Shape = (draw(sequence_extents()), draw(sequence_extents()))
    input_shape = shape
    first = draw(
        st.one_of(
            st.builds(Linear, widths(2), st.booleans()),
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
    graph = Graph(input_shape, tuple(layers))
    assume(informative(graph))
    return graph


def graphs(max_layers: int = 4) -> st.SearchStrategy[Graph]:
    return st.one_of(image_graphs(max_layers), sequence_graphs(max_layers))


def informative(graph: Graph) -> bool:
    """No layer of `graph` is (nearly) constant on random inputs, so nor is its int8 output.

    Quantization gives every layer 256 steps over the range it sees; a layer whose float
    values fall into fewer than `MIN_LEVELS` of them, or mostly into one (a saturated
    sigmoid, a softmax over near-equal scores), makes every later layer constant too, and
    the comparison with the frozen model would compare nothing (a vacuous graph). The
    strategies filter such draws out rather than count them.
    """
    model = graph.build().eval()
    x = torch.randn(8, *graph.input_shape, generator=torch.Generator().manual_seed(7))
    with torch.no_grad():
        for spec, layer in zip(graph.layers, model, strict=True):
            x = layer(x)
            if isinstance(spec, (Softmax, Sigmoid)):
                # Pinned to the fixed grid of [0, 1] (steps of 1/256), not to its own range:
                # near-equal scores all land on one step (`make fuzz` drew three softmaxes).
                x = torch.clamp(torch.round(x * FIXED_GRID_STEPS), max=FIXED_GRID_STEPS - 1)
                x = x / FIXED_GRID_STEPS
                if not _spread(x, (0.0, 1.0), min_levels=3, max_share=0.9):
                    return False
            elif not _spread(x):
                return False
    return True


FIXED_GRID_STEPS = 256


MIN_LEVELS = 8
MAX_SHARE = 0.5
"""The most values one of the 256 levels of a layer's range may hold."""


def _spread(
    values: torch.Tensor,
    grid: tuple[float, float] | None = None,
    min_levels: int = MIN_LEVELS,
    max_share: float = MAX_SHARE,
) -> bool:
    """`values` fall into at least `min_levels` of the 256 levels of `grid` (default: their own
    range), and no level holds more than `max_share` of them."""
    low, high = grid or (values.min().item(), values.max().item())
    if not high > low:
        return False
    levels = torch.round((values - low) / (high - low) * 255).clamp(0, 255).flatten()
    counts = torch.bincount(levels.to(torch.int64), minlength=256)
    return int((counts > 0).sum()) >= min_levels and counts.max().item() <= max_share * len(levels)
