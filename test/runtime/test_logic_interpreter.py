"""The dghw logic ops (shift, bitwise, compare with a constant or a second tensor, tile):
interpreter against the scalar reference and torch.

Both must give torch's own int32 and int8 results bit for bit, including the edges:
INT32_MIN / INT32_MAX, -128 / 127, shifts by 0 and 31 (7 for int8), left shifts that wrap.
"""

from __future__ import annotations

import dghw_reference as ref
import dghw_testing as build
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from xdsl.dialects.builtin import IntegerAttr, StringAttr, i64

from dg.dialects import dghw
from dg.dialects.common import BITWISE_KINDS, COMPARE_KINDS, SHIFT_DIRECTIONS
from dg.runtime.interpreter import run_dghw

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
EXAMPLES = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

int32_elements = st.one_of(
    st.sampled_from([INT32_MIN, INT32_MAX, 0, -1, 1]), st.integers(INT32_MIN, INT32_MAX)
)
int32_arrays = st.lists(st.integers(1, 4), min_size=1, max_size=3).flatmap(
    lambda shape: arrays(np.int32, shape, elements=int32_elements)
)


def run_unary(
    op_type: type, x: np.ndarray, result_shape, result_bits: int | None = None, **properties
) -> np.ndarray:
    """Run `op_type(x)` with `properties` as the only op of a module (batch axis dynamic).

    The result has `x`'s element width unless `result_bits` says otherwise."""
    bits = 8 * x.dtype.itemsize
    module = build.function_module(
        [build.batched(bits, x.shape)],
        lambda args: [
            op_type.build(
                operands=[args[0]],
                result_types=[build.batched(result_bits or bits, result_shape)],
                properties=properties,
            )
        ],
    )
    (result,) = run_dghw(module, [x])
    return result


def torch_shift(x: np.ndarray, direction: str, amount: int) -> np.ndarray:
    t = torch.from_numpy(x)
    return (t << amount if direction == "left" else t >> amount).numpy()


@EXAMPLES
@given(int32_arrays, st.sampled_from(SHIFT_DIRECTIONS), st.integers(0, 31))
def test_shift_matches_reference_and_torch(x, direction, amount):
    result = run_unary(
        dghw.ShiftOp,
        x,
        x.shape,
        direction=StringAttr(direction),
        shift=IntegerAttr(amount, i64),
    )
    assert result.dtype == np.int32
    np.testing.assert_array_equal(result, ref.shift(x, direction, amount))
    np.testing.assert_array_equal(result, torch_shift(x, direction, amount))


TORCH_BITWISE = {"and": torch.bitwise_and, "or": torch.bitwise_or, "xor": torch.bitwise_xor}


@EXAMPLES
@given(int32_arrays, st.sampled_from(BITWISE_KINDS), int32_elements)
def test_bitwise_matches_reference_and_torch(x, kind, value):
    result = run_unary(
        dghw.BitwiseOp, x, x.shape, kind=StringAttr(kind), value=IntegerAttr(value, i64)
    )
    assert result.dtype == np.int32
    np.testing.assert_array_equal(result, ref.bitwise(x, kind, value))
    np.testing.assert_array_equal(result, TORCH_BITWISE[kind](torch.from_numpy(x), value).numpy())


@EXAMPLES
@given(int32_arrays, st.sampled_from(COMPARE_KINDS), int32_elements)
def test_compare_matches_reference_and_torch(x, kind, value):
    if value == 0 and x.size:  # hit equality too
        x.flat[0] = 0
    result = run_unary(
        dghw.CompareOp, x, x.shape, 32, kind=StringAttr(kind), value=IntegerAttr(value, i64)
    )
    assert result.dtype == np.int32
    np.testing.assert_array_equal(result, ref.compare(x, kind, value))
    expected = getattr(torch, kind)(torch.from_numpy(x), value).to(torch.int32)
    np.testing.assert_array_equal(result, expected.numpy())


@EXAMPLES
@given(int32_arrays, st.data())
def test_tile_matches_reference_and_torch(x, data):
    multiples = [1] + [data.draw(st.integers(1, 3)) for _ in x.shape[1:]]
    shape = [d * m for d, m in zip(x.shape, multiples, strict=True)]
    result = run_unary(dghw.TileOp, x, shape, multiples=build.i64_array(multiples))
    np.testing.assert_array_equal(result, ref.tile(x, multiples))
    np.testing.assert_array_equal(result, torch.from_numpy(x).repeat(*multiples).numpy())


def test_left_shift_wraps_like_torch():
    x = np.array([[INT32_MAX, INT32_MIN, 3, -3]], dtype=np.int32)
    result = run_unary(
        dghw.ShiftOp, x, x.shape, direction=StringAttr("left"), shift=IntegerAttr(31, i64)
    )
    # Only the lowest bit survives, as the sign bit: odd numbers give INT32_MIN.
    np.testing.assert_array_equal(result, [[INT32_MIN, 0, INT32_MIN, INT32_MIN]])


# -- int8 logic tensors ------------------------------------------------------------------

INT8_MIN, INT8_MAX = -128, 127
int8_elements = st.one_of(
    st.sampled_from([INT8_MIN, INT8_MAX, 0, -1, 1]), st.integers(INT8_MIN, INT8_MAX)
)
int8_arrays = st.lists(st.integers(1, 4), min_size=1, max_size=3).flatmap(
    lambda shape: arrays(np.int8, shape, elements=int8_elements)
)


@EXAMPLES
@given(int8_arrays, st.sampled_from(SHIFT_DIRECTIONS), st.integers(0, 7))
def test_int8_shift_matches_reference_and_torch(x, direction, amount):
    properties = {"direction": StringAttr(direction), "shift": IntegerAttr(amount, i64)}
    result = run_unary(dghw.ShiftOp, x, x.shape, **properties)
    assert result.dtype == np.int8
    np.testing.assert_array_equal(result, ref.shift(x, direction, amount))
    np.testing.assert_array_equal(result, torch_shift(x, direction, amount))


@EXAMPLES
@given(int8_arrays, st.sampled_from(BITWISE_KINDS), int8_elements)
def test_int8_bitwise_matches_reference_and_torch(x, kind, value):
    properties = {"kind": StringAttr(kind), "value": IntegerAttr(value, i64)}
    result = run_unary(dghw.BitwiseOp, x, x.shape, **properties)
    assert result.dtype == np.int8
    np.testing.assert_array_equal(result, ref.bitwise(x, kind, value))
    np.testing.assert_array_equal(result, TORCH_BITWISE[kind](torch.from_numpy(x), value).numpy())


@EXAMPLES
@given(int8_arrays, st.sampled_from(COMPARE_KINDS), int8_elements)
def test_int8_compare_gives_int32_like_torch(x, kind, value):
    properties = {"kind": StringAttr(kind), "value": IntegerAttr(value, i64)}
    result = run_unary(dghw.CompareOp, x, x.shape, 32, **properties)
    assert result.dtype == np.int32
    np.testing.assert_array_equal(result, ref.compare(x, kind, value))
    expected = getattr(torch, kind)(torch.from_numpy(x), value).to(torch.int32)
    np.testing.assert_array_equal(result, expected.numpy())


def test_int8_left_shift_wraps_like_torch():
    x = np.array([[100, -100, INT8_MAX, INT8_MIN, 5]], dtype=np.int8)
    properties = {"direction": StringAttr("left"), "shift": IntegerAttr(3, i64)}
    result = run_unary(dghw.ShiftOp, x, x.shape, **properties)
    # torch keeps the low 8 bits: 100 << 3 = 800 = 3 * 256 + 32.
    np.testing.assert_array_equal(result, (torch.from_numpy(x) << 3).numpy())
    np.testing.assert_array_equal(result, [[32, -32, -8, 0, 40]])


# -- logic ops on two tensors ------------------------------------------------------------


def run_binary(op_type: type, lhs: np.ndarray, rhs: np.ndarray, result_bits: int, kind: str):
    """Run `op_type(lhs, rhs)` of `kind` as the only op of a module (batch axis dynamic)."""
    bits = 8 * lhs.dtype.itemsize
    module = build.function_module(
        [build.batched(bits, lhs.shape)] * 2,
        lambda args: [
            op_type.build(
                operands=list(args),
                result_types=[build.batched(result_bits, lhs.shape)],
                properties={"kind": StringAttr(kind)},
            )
        ],
    )
    (result,) = run_dghw(module, [lhs, rhs])
    return result


def operand_pairs(elements: st.SearchStrategy[int], dtype: type) -> st.SearchStrategy:
    """Two arrays of one random shape; where a random mask holds, rhs repeats lhs's element
    (equal operands are where the comparisons flip)."""

    def pair(shape: list[int]) -> st.SearchStrategy:
        lhs, rhs = arrays(dtype, shape, elements=elements), arrays(dtype, shape, elements=elements)
        same = arrays(np.bool_, shape)
        return st.tuples(lhs, rhs, same).map(lambda t: (t[0], np.where(t[2], t[0], t[1])))

    return st.lists(st.integers(1, 4), min_size=1, max_size=3).flatmap(pair)


WIDTHS = {32: (int32_elements, np.int32), 8: (int8_elements, np.int8)}
"""The logic widths: element strategy and dtype of each."""


@EXAMPLES
@given(
    st.sampled_from(sorted(WIDTHS)).flatmap(
        lambda width: st.tuples(st.just(width), operand_pairs(*WIDTHS[width]))
    ),
    st.sampled_from(BITWISE_KINDS),
)
def test_bitwise_tensor_matches_reference_and_torch(width_and_operands, kind):
    """and/or/xor of two tensors keeps their width (int8 or int32), as torch's do."""
    width, (lhs, rhs) = width_and_operands
    result = run_binary(dghw.BitwiseTensorOp, lhs, rhs, width, kind)
    assert result.dtype == WIDTHS[width][1]
    np.testing.assert_array_equal(result, ref.bitwise_tensor(lhs, rhs, kind))
    expected = TORCH_BITWISE[kind](torch.from_numpy(lhs), torch.from_numpy(rhs))
    np.testing.assert_array_equal(result, expected.numpy())


@EXAMPLES
@given(
    st.sampled_from(sorted(WIDTHS)).flatmap(
        lambda width: st.tuples(st.just(width), operand_pairs(*WIDTHS[width]))
    ),
    st.sampled_from(COMPARE_KINDS),
)
def test_compare_tensor_gives_int32_like_torch(width_and_operands, kind):
    """Comparisons of two int8 or int32 tensors give 0/1 as int32."""
    width, (lhs, rhs) = width_and_operands
    result = run_binary(dghw.CompareTensorOp, lhs, rhs, 32, kind)
    assert result.dtype == np.int32
    np.testing.assert_array_equal(result, ref.compare_tensor(lhs, rhs, kind))
    expected = getattr(torch, kind)(torch.from_numpy(lhs), torch.from_numpy(rhs))
    np.testing.assert_array_equal(result, expected.to(torch.int32).numpy())


@pytest.mark.parametrize(
    ("dtype", "lo", "hi"), [(np.int32, INT32_MIN, INT32_MAX), (np.int8, INT8_MIN, INT8_MAX)]
)
def test_logic_tensor_ops_at_the_extremes(dtype, lo, hi):
    """Every pair of the extremes and their neighbours, both ways round: where a widening,
    a wrap or an unsigned comparison would go wrong."""
    edges = np.array([lo, lo + 1, -1, 0, 1, hi - 1, hi], dtype=dtype)
    lhs, rhs = (a.reshape(1, -1) for a in np.meshgrid(edges, edges))
    x, y = torch.from_numpy(lhs), torch.from_numpy(rhs)
    bits = 8 * np.dtype(dtype).itemsize
    for kind in BITWISE_KINDS:
        result = run_binary(dghw.BitwiseTensorOp, lhs, rhs, bits, kind)
        np.testing.assert_array_equal(result, ref.bitwise_tensor(lhs, rhs, kind))
        np.testing.assert_array_equal(result, TORCH_BITWISE[kind](x, y).numpy())
    for kind in COMPARE_KINDS:
        result = run_binary(dghw.CompareTensorOp, lhs, rhs, 32, kind)
        np.testing.assert_array_equal(result, ref.compare_tensor(lhs, rhs, kind))
        np.testing.assert_array_equal(result, getattr(torch, kind)(x, y).to(torch.int32).numpy())
