"""Compiled programs against their float64 reference: within one output step, and mostly exact.

Each model is random (weights, scales, inputs) and written as convert_pt2e
leaves it; `lower` compiles it and the device model (`run_dghw`) runs it on
the stored input integers. One-op models isolate each lowering; rounding
differs from the exact reference only at near-ties, so almost every element
must match exactly (which an off-by-one zero point or a misordered weight
would break) and none may be off by more than one step.
"""

from __future__ import annotations

import numpy as np
import pytest
from dgtorch_graphs import DgtorchGraph, Value, grid_for
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
    assert result.quantized is not None
    assert actual.shape == result.quantized.shape
    difference = np.abs(actual.astype(np.int32) - result.quantized.astype(np.int32))
    assert difference.max() <= 1, f"off by {difference.max()} steps"
    exact = float(np.mean(difference == 0))
    assert exact >= MIN_EXACT_FRACTION, f"only {exact:.1%} of the elements are exact"


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
