"""Compiled programs against their float64 reference: within one output step, and mostly exact.

Each model is random (weights, scales, inputs) and written as convert_pt2e
leaves it; `lower` compiles it and the device model (`run_dghw`) runs it on
the stored input integers. One-op models isolate each lowering; rounding
differs from the exact reference only at near-ties, so almost every element
must match exactly (which an off-by-one zero point or a misordered weight
would break) and none may be off by more than one step. Exact ties (an
average of 2 or 4 integers) are left out of the exact count: torch rounds
them to even, the device (TOSA) up.
"""

from __future__ import annotations

import numpy as np
import pytest
from dgtorch_graphs import FIXED_GRID, DgtorchGraph, Value, grid_for
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.func import Func
from xdsl.parser import Parser

from dg.dialects.dghw import Dghw
from dg.dialects.dgq import Dgq
from dg.dialects.dgtorch import DgTorch
from dg.lowering.pipeline import lower
from dg.runtime.interpreter import run_dghw

SEEDS = range(4)
MIN_EXACT_FRACTION = 0.98


def parse(text: str) -> ModuleOp:
    ctx = Context()
    for dialect in (Builtin, Func, DgTorch, Dgq, Dghw):
        ctx.load_dialect(dialect)
    return Parser(ctx, text).parse_module()


def compile_and_run(graph: DgtorchGraph, *results: Value) -> list[np.ndarray]:
    stages = lower(parse(graph.function(*results)))
    return run_dghw(stages["dghw"], graph.stored_inputs)


def quantize_output(graph: DgtorchGraph, y: Value, relu: bool) -> Value:
    """The partition's output quantize; after a relu on y's own (signed) grid, so that the
    relu's clamp at the zero point is visible (an observer would pick zero point -128)."""
    if not relu:
        return graph.quantize(y)
    return graph.quantize_to(graph.relu(y), *grid_for(y.real))


def assert_matches_reference(actual: np.ndarray, result: Value) -> None:
    assert result.quantized is not None and result.ties is not None
    assert actual.shape == result.quantized.shape
    difference = np.abs(actual.astype(np.int32) - result.quantized.astype(np.int32))
    assert difference.max() <= 1, f"off by {difference.max()} steps"
    exact = float(np.mean(difference[~result.ties] == 0))
    assert exact >= MIN_EXACT_FRACTION, f"only {exact:.1%} of the elements are exact"


def on_input_grid(graph: DgtorchGraph, y: Value, x: Value) -> Value:
    """`y` quantized on `x`'s grid, as dg's quantizer shares it through pools, pads, cats."""
    assert x.scale is not None and x.zero_point is not None
    return graph.quantize_to(y, x.scale, x.zero_point)


def random_input(graph: DgtorchGraph, shape: tuple[int, ...], zero_point: int = -5) -> Value:
    return graph.input(shape, scale=float(graph.rng.uniform(0.01, 0.1)), zero_point=zero_point)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("relu", [False, True])
def test_conv2d(seed: int, relu: bool) -> None:
    rng = np.random.default_rng(seed)
    graph = DgtorchGraph(rng)
    x = graph.input((3, 7, 6), scale=float(rng.uniform(0.01, 0.1)), zero_point=-5)
    y = graph.conv2d(x, 4, kernel=(3, 2), stride=(2, 1), padding=(1, 2), bias=seed % 2 == 0)
    y = quantize_output(graph, y, relu)
    (actual,) = compile_and_run(graph, y)
    assert_matches_reference(actual, y)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("relu", [False, True])
def test_linear(seed: int, relu: bool) -> None:
    rng = np.random.default_rng(seed)
    graph = DgtorchGraph(rng)
    x = graph.input((24,), scale=float(rng.uniform(0.01, 0.1)), zero_point=7)
    y = graph.linear(x, 10, bias=seed % 2 == 1)
    y = quantize_output(graph, y, relu)
    (actual,) = compile_and_run(graph, y)
    assert_matches_reference(actual, y)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("relu", [False, True])
def test_add(seed: int, relu: bool) -> None:
    """Operand scales a few times apart, as in a residual block."""
    rng = np.random.default_rng(seed)
    graph = DgtorchGraph(rng, batch=64)
    a = graph.input((2, 5, 5), scale=float(rng.uniform(0.01, 0.1)), zero_point=-20)
    b = graph.input((2, 5, 5), scale=float(rng.uniform(0.01, 0.4)), zero_point=9)
    y = graph.add(a, b)
    y = quantize_output(graph, y, relu)
    (actual,) = compile_and_run(graph, y)
    assert_matches_reference(actual, y)


@pytest.mark.parametrize("seed", SEEDS)
def test_requantize(seed: int) -> None:
    rng = np.random.default_rng(seed)
    graph = DgtorchGraph(rng, batch=64)
    x = graph.input((3, 4, 2), scale=float(rng.uniform(0.01, 0.1)), zero_point=4)
    y = graph.quantize_to(x, scale=float(rng.uniform(0.01, 0.1)), zero_point=-3)
    (actual,) = compile_and_run(graph, y)
    assert_matches_reference(actual, y)


@pytest.mark.parametrize("seed", SEEDS)
def test_flatten_linear_reads_nhwc(seed: int) -> None:
    """flatten after an NHWC op folds into the linear's weight order (H, W and C all differ).

    The requantize by exactly 2 before the flatten is exact (saturating alike on both
    sides), so the only rounding is the linear's.
    """
    rng = np.random.default_rng(seed)
    graph = DgtorchGraph(rng)
    x = graph.input((3, 2, 5), scale=0.05, zero_point=0)
    doubled = graph.quantize_to(x, scale=0.025, zero_point=0)
    y = graph.quantize(graph.linear(graph.flatten(doubled), 6))
    (actual,) = compile_and_run(graph, y)
    assert_matches_reference(actual, y)


@pytest.mark.parametrize("seed", SEEDS)
def test_flattened_output_is_in_torch_order(seed: int) -> None:
    rng = np.random.default_rng(seed)
    graph = DgtorchGraph(rng)
    x = graph.input((2, 3, 4), scale=0.1, zero_point=2)
    y = graph.quantize(graph.conv2d(x, 3, kernel=(1, 1)))
    flat = graph.flatten(y)
    (actual,) = compile_and_run(graph, flat)
    assert_matches_reference(actual, flat)


def test_small_cnn_end_to_end() -> None:
    """conv+relu -> conv -> residual add+relu -> flatten -> linear+relu -> linear."""
    rng = np.random.default_rng(7)
    graph = DgtorchGraph(rng, batch=32)
    x = graph.input((2, 6, 5), scale=0.05, zero_point=-3)
    c1 = graph.quantize(graph.relu(graph.conv2d(x, 4, (3, 3), padding=(1, 1))), relu=True)
    c2 = graph.quantize(graph.conv2d(c1, 4, (3, 3), padding=(1, 1)))
    s = graph.quantize(graph.relu(graph.add(c2, c1)), relu=True)
    h = graph.quantize(graph.relu(graph.linear(graph.flatten(s), 16)), relu=True)
    y = graph.quantize(graph.linear(h, 5))
    # Each partition is checked against the reference computed from the reference's own
    # integers; intermediate near-ties may shift the output by a step, never by more.
    returned = (c1, c2, s, h, y)
    for actual, result in zip(compile_and_run(graph, *returned), returned, strict=True):
        assert_matches_reference(actual, result)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("relu", [False, True])
def test_depthwise_conv2d(seed: int, relu: bool) -> None:
    rng = np.random.default_rng(seed)
    graph = DgtorchGraph(rng)
    x = random_input(graph, (4, 7, 6))
    y = graph.conv2d(x, 4, kernel=(3, 2), stride=(2, 1), padding=(1, 1), groups=4)
    y = quantize_output(graph, y, relu)
    (actual,) = compile_and_run(graph, y)
    assert_matches_reference(actual, y)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    ("kernel", "stride", "ceil_mode"), [((2, 2), (2, 2), False), ((3, 2), (2, 1), True)]
)
def test_max_pool2d(
    seed: int, kernel: tuple[int, int], stride: tuple[int, int], ceil_mode: bool
) -> None:
    """The second case's ceil mode fits the input (7 = 3 + 2 + 2): no window overhangs."""
    rng = np.random.default_rng(seed)
    graph = DgtorchGraph(rng)
    x = random_input(graph, (3, 7, 6))
    y = on_input_grid(graph, graph.max_pool2d(x, kernel, stride, ceil_mode), x)
    (actual,) = compile_and_run(graph, y)
    assert_matches_reference(actual, y)


AVG_POOLS = [
    {"kernel": (3, 3), "stride": (2, 2), "padding": (1, 1)},
    {"kernel": (3, 3), "stride": (2, 2), "padding": (1, 1), "count_include_pad": False},
    {"kernel": (2, 3), "stride": (2, 2), "padding": (1, 1), "ceil_mode": True},
    {"kernel": (3, 2), "stride": (2, 2), "padding": (1, 0), "ceil_mode": True,
     "count_include_pad": False},
    {"kernel": (2, 2), "stride": (1, 2), "divisor_override": 3},
]  # fmt: skip


@pytest.mark.parametrize("seed", SEEDS[:2])
@pytest.mark.parametrize("options", AVG_POOLS)
def test_avg_pool2d(seed: int, options: dict) -> None:
    rng = np.random.default_rng(seed)
    graph = DgtorchGraph(rng)
    x = random_input(graph, (3, 7, 6))
    y = on_input_grid(graph, graph.avg_pool2d(x, **options), x)
    (actual,) = compile_and_run(graph, y)
    assert_matches_reference(actual, y)


@pytest.mark.parametrize("seed", SEEDS[:2])
@pytest.mark.parametrize("output_size", [(3, 2), (1, 1)])
def test_adaptive_avg_pool2d(seed: int, output_size: tuple[int, int]) -> None:
    rng = np.random.default_rng(seed)
    graph = DgtorchGraph(rng)
    x = random_input(graph, (3, 6, 4))
    y = on_input_grid(graph, graph.adaptive_avg_pool2d(x, output_size), x)
    (actual,) = compile_and_run(graph, y)
    assert_matches_reference(actual, y)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("shape", "dim"), [((10,), -1), ((5, 3, 2), 1), ((2, 3, 5), 3)])
def test_softmax(seed: int, shape: tuple[int, ...], dim: int) -> None:
    """Rank 4 along channels (device axis 3) and width (device axis 2)."""
    rng = np.random.default_rng(seed)
    graph = DgtorchGraph(rng)
    x = graph.input(shape, scale=float(rng.uniform(0.02, 0.2)), zero_point=3)
    y = graph.quantize_to(graph.softmax(x, dim), *FIXED_GRID)
    (actual,) = compile_and_run(graph, y)
    assert_matches_reference(actual, y)


@pytest.mark.parametrize("seed", SEEDS)
def test_sigmoid(seed: int) -> None:
    rng = np.random.default_rng(seed)
    graph = DgtorchGraph(rng, batch=64)
    x = graph.input((2, 3, 4), scale=float(rng.uniform(0.02, 0.1)), zero_point=-9)
    y = graph.quantize_to(graph.sigmoid(x), *FIXED_GRID)
    (actual,) = compile_and_run(graph, y)
    assert_matches_reference(actual, y)


@pytest.mark.parametrize("seed", SEEDS)
def test_pad_folds_into_conv2d(seed: int) -> None:
    rng = np.random.default_rng(seed)
    graph = DgtorchGraph(rng)
    x = random_input(graph, (2, 5, 6))
    padded = on_input_grid(graph, graph.pad(x, (2, 0, 1, 3)), x)
    y = graph.quantize(graph.conv2d(padded, 3, kernel=(3, 3), padding=(1, 0)))
    (actual,) = compile_and_run(graph, y)
    assert_matches_reference(actual, y)


PADDED_AVG_POOLS = [
    # PyTorch counts the F.pad zeros; the pool's own padding only with count_include_pad.
    {"kernel": (3, 3), "stride": (2, 2), "padding": (1, 1)},
    {"kernel": (3, 3), "stride": (2, 2), "count_include_pad": False},
    {"kernel": (2, 2), "stride": (2, 2), "padding": (1, 1), "count_include_pad": False,
     "divisor_override": 2},
]  # fmt: skip


@pytest.mark.parametrize("seed", SEEDS[:2])
@pytest.mark.parametrize("options", PADDED_AVG_POOLS)
def test_pad_folds_into_avg_pool2d(seed: int, options: dict) -> None:
    rng = np.random.default_rng(seed)
    graph = DgtorchGraph(rng)
    x = random_input(graph, (2, 5, 6))
    padded = on_input_grid(graph, graph.pad(x, (1, 0, 2, 1)), x)
    y = on_input_grid(graph, graph.avg_pool2d(padded, **options), x)
    (actual,) = compile_and_run(graph, y)
    assert_matches_reference(actual, y)


@pytest.mark.parametrize("seed", SEEDS[:2])
@pytest.mark.parametrize("dim", [1, 2, -1])
def test_concat(seed: int, dim: int) -> None:
    """Inputs on one grid; a 1x1 conv after the concat reads it in device layout."""
    rng = np.random.default_rng(seed)
    graph = DgtorchGraph(rng)
    a = graph.input((2, 4, 3), scale=0.05, zero_point=1)
    b = graph.input((2, 4, 3), scale=0.05, zero_point=1)
    c = on_input_grid(graph, graph.cat([a, b, a], dim), a)
    y = graph.quantize(graph.conv2d(c, 2, kernel=(1, 1)))
    actual = compile_and_run(graph, c, y)
    for result, expected in zip(actual, (c, y), strict=True):
        assert_matches_reference(result, expected)


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_concat_of_different_grids(seed: int) -> None:
    rng = np.random.default_rng(seed)
    graph = DgtorchGraph(rng, batch=64)
    a = graph.input((3,), scale=float(rng.uniform(0.01, 0.1)), zero_point=4)
    b = graph.input((5,), scale=float(rng.uniform(0.01, 0.1)), zero_point=-6)
    y = graph.quantize(graph.cat([a, b], 1))
    (actual,) = compile_and_run(graph, y)
    assert_matches_reference(actual, y)


@pytest.mark.parametrize("seed", SEEDS[:2])
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("size", [(6, 8), (5, 3)])
def test_resize_nearest(seed: int, mode: str, size: tuple[int, int]) -> None:
    rng = np.random.default_rng(seed)
    graph = DgtorchGraph(rng)
    x = random_input(graph, (2, 3, 4))
    y = on_input_grid(graph, graph.upsample_nearest2d(x, size, mode), x)
    (actual,) = compile_and_run(graph, y)
    assert_matches_reference(actual, y)


@pytest.mark.parametrize("seed", SEEDS)
def test_channels_last_flatten_linear(seed: int) -> None:
    """dg.Flatten orders features (h, w, c); the linear's weight is used as it is."""
    rng = np.random.default_rng(seed)
    graph = DgtorchGraph(rng)
    x = random_input(graph, (3, 2, 5))
    c = graph.quantize(graph.conv2d(x, 4, kernel=(1, 2)))
    flat = on_input_grid(graph, graph.channels_last_flatten(c), c)
    y = graph.quantize(graph.linear(flat, 6))
    actual = compile_and_run(graph, flat, y)
    for result, expected in zip(actual, (flat, y), strict=True):
        assert_matches_reference(result, expected)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("relu", [False, True])
def test_batch_norm_folds_into_linear(seed: int, relu: bool) -> None:
    rng = np.random.default_rng(seed)
    graph = DgtorchGraph(rng)
    x = random_input(graph, (12,), zero_point=7)
    y = graph.batch_norm(graph.linear(x, 8, bias=seed % 2 == 0))
    y = quantize_output(graph, y, relu)
    (actual,) = compile_and_run(graph, y)
    assert_matches_reference(actual, y)


def test_small_cnn_with_every_new_op() -> None:
    """pad+conv+relu -> depthwise -> max pool -> cat -> avg pool -> resize -> adaptive pool
    -> dg.Flatten -> linear+bn+relu -> linear -> softmax, and a sigmoid head.

    The pools average 9 elements: with an even count, exact ties (which torch rounds to
    even and the device up) would shift whole downstream layers by a step.
    """
    rng = np.random.default_rng(11)
    graph = DgtorchGraph(rng, batch=32)
    x = graph.input((2, 8, 8), scale=0.05, zero_point=-3)
    p = on_input_grid(graph, graph.pad(x, (1, 1, 1, 1)), x)
    c1 = graph.quantize(graph.relu(graph.conv2d(p, 4, (3, 3))), relu=True)
    d = graph.quantize(graph.conv2d(c1, 4, (3, 3), padding=(1, 1), groups=4))
    m = on_input_grid(graph, graph.max_pool2d(d, (2, 2), (2, 2)), d)
    cat = on_input_grid(graph, graph.cat([m, m], 1), m)
    a = on_input_grid(graph, graph.avg_pool2d(cat, (3, 3), (1, 1), (1, 1)), cat)
    r = on_input_grid(graph, graph.upsample_nearest2d(a, (6, 6), "nearest"), a)
    g = on_input_grid(graph, graph.adaptive_avg_pool2d(r, (2, 2)), r)
    f = on_input_grid(graph, graph.channels_last_flatten(g), g)
    h = graph.quantize(graph.relu(graph.batch_norm(graph.linear(f, 16))), relu=True)
    logits = graph.quantize(graph.linear(h, 5))
    probabilities = graph.quantize_to(graph.softmax(logits, -1), *FIXED_GRID)
    gate = graph.quantize_to(graph.sigmoid(logits), *FIXED_GRID)
    returned = (c1, d, a, g, h, logits, probabilities, gate)
    for actual, result in zip(compile_and_run(graph, *returned), returned, strict=True):
        assert_matches_reference(actual, result)
