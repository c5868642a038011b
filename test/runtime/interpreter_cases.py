"""What the device-model kernel tests share: value strategies, the check against the scalar
reference, one-op modules."""

from __future__ import annotations

from collections.abc import Callable

import dghw_reference as ref
import dghw_testing as build
import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import InterpretationError

from dg.dialects.common import window_counts
from dg.runtime.int8_gemm import NOT_EXACT_HERE, int8_gemm_is_exact
from dg.runtime.interpreter import run_dghw

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


# Bounded so that the whole file runs well under a minute.
needs_exact_int8_gemm = pytest.mark.skipif(not int8_gemm_is_exact(), reason=NOT_EXACT_HERE)
"""For tests of the int8 GEMM path: skipped where torch's int8 GEMM fails the worst cases."""

EXAMPLES = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


FEW_EXAMPLES = settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def int8_elements(worst_case: bool) -> st.SearchStrategy[int]:
    return st.sampled_from([-128, 127]) if worst_case else st.integers(-128, 127)


def int32_elements() -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from([INT32_MIN, INT32_MAX, 0]), st.integers(INT32_MIN, INT32_MAX))


def int8_zero_points(worst_case: bool) -> st.SearchStrategy[int]:
    return st.sampled_from([-128, 127]) if worst_case else st.integers(-128, 127)


def assert_matches_reference(
    interpreted: Callable[[], np.ndarray], reference: Callable[[], np.ndarray]
) -> None:
    """Equal dtype, shape and elements; or both report an int32 overflow."""
    try:
        expected = reference()
    except ref.ReferenceOverflow:
        with pytest.raises(InterpretationError, match="overflows int32"):
            interpreted()
        return
    actual = interpreted()
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    np.testing.assert_array_equal(actual, expected)


def run_one(module: ModuleOp, *arrays: np.ndarray) -> np.ndarray:
    (result,) = run_dghw(module, list(arrays))
    return result


def accumulate_module(make_op, x: np.ndarray, w: np.ndarray, b: np.ndarray, result_shape, constant):
    """A module around one conv2d/fully_connected; weights as constants or as arguments."""
    x_type = build.batched(8, x.shape)
    result_type = build.batched(32, result_shape)
    if constant:

        def ops(args):
            wc, bc = build.constant(w), build.constant(b)
            return [wc, bc, make_op(args[0], wc.result, bc.result, result_type)]

        return build.function_module([x_type], ops), (x,)
    arg_types = [x_type, build.tensor(8, *w.shape), build.tensor(32, *b.shape)]
    module = build.function_module(arg_types, lambda args: [make_op(*args, result_type)])
    return module, (x, w, b)


@st.composite
def biases(draw, channels: int) -> np.ndarray:
    # Mostly in range; sometimes the full int32 range, to exercise the overflow report.
    bound = draw(st.sampled_from([2**10, 2**24, INT32_MAX]))
    return draw(arrays(np.int32, channels, elements=st.integers(-bound - 1, bound)))


@st.composite
def rescale_cases(draw):
    in_bits, out_bits = draw(st.sampled_from([8, 32])), draw(st.sampled_from([8, 32]))
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    per_channel = len(shape) >= 2 and draw(st.booleans())
    channels = shape[-1] if per_channel else 1
    multipliers = draw(
        st.lists(
            st.one_of(st.sampled_from([0, 1, 2**30, 2**31 - 1]), st.integers(0, 2**31 - 1)),
            min_size=channels,
            max_size=channels,
        )
    )
    shifts = draw(
        st.lists(
            st.one_of(st.sampled_from([2, 31, 32, 62]), st.integers(2, 62)),
            min_size=channels,
            max_size=channels,
        )
    )
    if in_bits == 8:
        x = draw(arrays(np.int8, shape, elements=int8_elements(draw(st.booleans()))))
        input_zp = draw(int8_zero_points(draw(st.booleans())))
    else:
        x = draw(arrays(np.int32, shape, elements=int32_elements()))
        input_zp = 0  # TOSA: an i32 operand has zero point 0
    lo, hi = (-128, 127) if out_bits == 8 else (INT32_MIN, INT32_MAX)
    output_zp = draw(st.integers(lo, hi)) if out_bits == 8 else 0
    clamp = sorted(draw(st.tuples(st.integers(lo, hi), st.integers(lo, hi))))
    if draw(st.booleans()):
        clamp = [lo, hi]
    return x, multipliers, shifts, input_zp, output_zp, clamp, out_bits


@st.composite
def add_cases(draw):
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    a = draw(arrays(np.int32, shape, elements=int32_elements()))
    b = draw(arrays(np.int32, shape, elements=int32_elements()))
    if draw(st.booleans()):  # keep clear of overflow half of the time
        a, b = a // 2, b // 2
    return a, b


@st.composite
def movement_cases(draw):
    bits = draw(st.sampled_from([8, 32]))
    shape = draw(st.lists(st.integers(1, 4), min_size=2, max_size=4))
    elements = st.integers(-128, 127) if bits == 8 else int32_elements()
    x = draw(arrays(np.int8 if bits == 8 else np.int32, shape, elements=elements))
    return x, bits


def module_zp(i8_input: bool) -> int:
    return -128 if i8_input else 0


def single_op_module(inputs: list[np.ndarray], make_op) -> ModuleOp:
    """A module around one op of the batched `inputs`; make_op(args) returns it."""
    arg_types = [build.batched(a.dtype.itemsize * 8, a.shape) for a in inputs]
    return build.function_module(arg_types, lambda args: [make_op(args)])


def window_extents(
    shape: tuple[int, int], kernel, stride, pad: tuple[int, int, int, int], ceil_mode: bool
) -> tuple[int, int]:
    """(OH, OW) in floor or ceil mode, as the dialect counts windows (torch's rule)."""
    counts = [
        window_counts(size, k, s, *pad[2 * axis : 2 * axis + 2])
        for axis, (size, k, s) in enumerate(zip(shape, kernel, stride, strict=True))
    ]
    mode = int(ceil_mode)  # window_counts returns (floor, ceil)
    return counts[0][mode], counts[1][mode]


def avg_pool_module(case) -> ModuleOp:
    x, kernel, stride, pad, out_hw, include_pad, override, input_zp, output_zp = case
    result_type = build.tensor(8, build.BATCH, *out_hw, x.shape[3])
    return single_op_module(
        [x],
        lambda args: build.avg_pool2d(
            args[0], result_type, kernel, stride, pad, include_pad, override, input_zp, output_zp
        ),
    )


@st.composite
def concat_cases(draw):
    rank = draw(st.integers(2, 4))
    shape = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    axis = draw(st.integers(1, rank - 1))
    inputs = []
    for _ in range(draw(st.integers(1, 4))):
        shape[axis] = draw(st.integers(1, 4))
        inputs.append(draw(arrays(np.int8, tuple(shape), elements=st.integers(-128, 127))))
    return inputs, axis


def pair_table_module(
    lhs: tuple[int, int, int], rhs: tuple[int, int, int], out: tuple[int, int, int, int]
) -> ModuleOp:
    """int8 a, b [?, 256] -> rescale each to i32 (multiplier, shift, zp) -> add -> rescale to i8.

    `out` is (multiplier, shift, output zero point, clamp_min); every rescale is per tensor.
    """
    i8, i32 = build.batched(8, [0, 256]), build.batched(32, [0, 256])

    def ops(args):
        a = build.rescale(args[0], i32, [lhs[0]], [lhs[1]], lhs[2], 0, -(2**31), 2**31 - 1)
        b = build.rescale(args[1], i32, [rhs[0]], [rhs[1]], rhs[2], 0, -(2**31), 2**31 - 1)
        total = build.add(a.result, b.result)
        m, shift, zp, low = out
        return [a, b, total, build.rescale(total.result, i8, [m], [shift], 0, zp, low, 127)]

    return build.function_module([i8, i8], ops)
