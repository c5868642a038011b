"""The dghw interpreter against the scalar reference, on random and worst-case values."""

from __future__ import annotations

from collections.abc import Callable

import dghw_reference as ref
import dghw_testing as build
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from xdsl.dialects.builtin import IntegerType, ModuleOp
from xdsl.utils.exceptions import InterpretationError

from dg.dialects import dghw
from dg.dialects.common import window_counts
from dg.runtime.exact import (
    F32_EXACT_LIMIT,
    exact_chunk_length,
    exact_integer_gemm,
    exact_split_gemm,
    exact_weight_splits,
)
from dg.runtime.interpreter import DeviceModel, ValueRecorder, run_dghw
from dg.runtime.kernels.elementwise import static_range, sum_fits_int32
from dg.runtime.kernels.quantization import ClippedFloatRescale, FoldedRescale
from dg.runtime.kernels.weights import GemmWeights
from dg.runtime.program import torch_quant_ops

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

# Bounded so that the whole file runs well under a minute.
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
def conv_cases(draw, worst_case: bool | None = None, large_k: bool = False):
    worst = draw(st.booleans()) if worst_case is None else worst_case
    channels = draw(st.sampled_from([256, 512]) if large_k else st.integers(1, 4))
    out_channels = draw(st.integers(1, 2 if large_k else 4))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    stride = draw(st.tuples(st.integers(1, 3), st.integers(1, 3)))
    pad = draw(st.tuples(*[st.integers(0, 2)] * 4))
    top, bottom, left, right = pad
    height = draw(st.integers(max(1, kh - top - bottom), 3 if large_k else 6))
    width = draw(st.integers(max(1, kw - left - right), 3 if large_k else 6))
    batch = draw(st.integers(1, 2))
    x = draw(arrays(np.int8, (batch, height, width, channels), elements=int8_elements(worst)))
    w_elements = st.sampled_from([-127, 127]) if worst else st.integers(-128, 127)
    w = draw(arrays(np.int8, (out_channels, kh, kw, channels), elements=w_elements))
    b = draw(biases(out_channels))
    input_zp = 127 if worst else draw(int8_zero_points(False))
    weight_zp = 0 if worst else draw(int8_zero_points(False))
    return x, w, b, stride, pad, input_zp, weight_zp, draw(st.booleans())


def check_conv(case) -> None:
    x, w, b, stride, pad, input_zp, weight_zp, constant = case
    oh = (x.shape[1] + pad[0] + pad[1] - w.shape[1]) // stride[0] + 1
    ow = (x.shape[2] + pad[2] + pad[3] - w.shape[2]) // stride[1] + 1
    module, args = accumulate_module(
        lambda xv, wv, bv, t: build.conv2d(xv, wv, bv, t, stride, pad, input_zp, weight_zp),
        x,
        w,
        b,
        (x.shape[0], oh, ow, w.shape[0]),
        constant,
    )
    assert_matches_reference(
        lambda: run_one(module, *args),
        lambda: ref.conv2d(x, w, b, stride, pad, input_zp, weight_zp),
    )


@EXAMPLES
@given(conv_cases())
def test_conv2d_matches_reference(case):
    check_conv(case)


@FEW_EXAMPLES
@given(conv_cases(worst_case=True, large_k=True))
def test_conv2d_worst_case_long_reduction(case):
    # K = 3*3*512 = 4608 taps of (-128 - 127) * (+-127): far past one float32 GEMM's exact range.
    check_conv(case)


@st.composite
def fc_cases(draw, worst_case: bool | None = None, large_k: bool = False):
    worst = draw(st.booleans()) if worst_case is None else worst_case
    k = draw(st.sampled_from([1000, 2048, 4099]) if large_k else st.integers(1, 64))
    n = draw(st.integers(1, 3 if large_k else 8))
    lead = draw(st.sampled_from([(1,), (3,), (2, 3)]))
    x = draw(arrays(np.int8, (*lead, k), elements=int8_elements(worst)))
    w_elements = st.sampled_from([-127, 127]) if worst else st.integers(-128, 127)
    w = draw(arrays(np.int8, (n, k), elements=w_elements))
    b = draw(biases(n))
    input_zp = 127 if worst else draw(int8_zero_points(False))
    weight_zp = 0 if worst else draw(int8_zero_points(False))
    return x, w, b, input_zp, weight_zp, draw(st.booleans())


def check_fc(case) -> None:
    x, w, b, input_zp, weight_zp, constant = case
    module, args = accumulate_module(
        lambda xv, wv, bv, t: build.fully_connected(xv, wv, bv, t, input_zp, weight_zp),
        x,
        w,
        b,
        (*x.shape[:-1], w.shape[0]),
        constant,
    )
    assert_matches_reference(
        lambda: run_one(module, *args),
        lambda: ref.fully_connected(x, w, b, input_zp, weight_zp),
    )


@EXAMPLES
@given(fc_cases())
def test_fully_connected_matches_reference(case):
    check_fc(case)


@FEW_EXAMPLES
@given(fc_cases(worst_case=True, large_k=True))
def test_fully_connected_worst_case_long_reduction(case):
    check_fc(case)


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


@EXAMPLES
@given(rescale_cases())
def test_rescale_matches_reference(case):
    x, multipliers, shifts, input_zp, output_zp, (cmin, cmax), out_bits = case
    result_type = build.batched(out_bits, x.shape)
    module = build.function_module(
        [build.batched(x.dtype.itemsize * 8, x.shape)],
        lambda args: [
            build.rescale(
                args[0], result_type, multipliers, shifts, input_zp, output_zp, cmin, cmax
            )
        ],
    )
    assert_matches_reference(
        lambda: run_one(module, x),
        lambda: ref.rescale(x, multipliers, shifts, input_zp, output_zp, cmin, cmax, out_bits),
    )


@st.composite
def add_cases(draw):
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    a = draw(arrays(np.int32, shape, elements=int32_elements()))
    b = draw(arrays(np.int32, shape, elements=int32_elements()))
    if draw(st.booleans()):  # keep clear of overflow half of the time
        a, b = a // 2, b // 2
    return a, b


@EXAMPLES
@given(add_cases())
def test_add_matches_reference(case):
    a, b = case
    t = build.batched(32, a.shape)
    module = build.function_module([t, t], lambda args: [build.add(*args)])
    assert_matches_reference(lambda: run_one(module, a, b), lambda: ref.add(a, b))


@st.composite
def movement_cases(draw):
    bits = draw(st.sampled_from([8, 32]))
    shape = draw(st.lists(st.integers(1, 4), min_size=2, max_size=4))
    elements = st.integers(-128, 127) if bits == 8 else int32_elements()
    x = draw(arrays(np.int8 if bits == 8 else np.int32, shape, elements=elements))
    return x, bits


@EXAMPLES
@given(movement_cases(), st.data())
def test_reshape_matches_reference(case, data):
    x, bits = case
    item = list(x.shape[1:])
    target = data.draw(st.one_of(st.permutations(item), st.just([int(np.prod(item))])))
    result_type = build.tensor(bits, build.BATCH, *target)
    module = build.function_module(
        [build.batched(bits, x.shape)], lambda args: [build.reshape(args[0], result_type)]
    )
    assert_matches_reference(lambda: run_one(module, x), lambda: ref.reshape(x, target))


@EXAMPLES
@given(movement_cases(), st.data())
def test_transpose_matches_reference(case, data):
    x, bits = case
    perm = [0, *data.draw(st.permutations(range(1, x.ndim)))]
    result_type = build.tensor(bits, build.BATCH, *[x.shape[p] for p in perm[1:]])
    module = build.function_module(
        [build.batched(bits, x.shape)], lambda args: [build.transpose(args[0], result_type, perm)]
    )
    assert_matches_reference(lambda: run_one(module, x), lambda: ref.transpose(x, perm))


@EXAMPLES
@given(movement_cases(), st.data())
def test_slice_matches_reference(case, data):
    x, bits = case
    axis = data.draw(st.integers(1, x.ndim - 1))
    start = data.draw(st.integers(0, x.shape[axis] - 1))
    end = data.draw(st.integers(start + 1, x.shape[axis]))
    shape = list(x.shape)
    shape[axis] = end - start
    result_type = build.tensor(bits, build.BATCH, *shape[1:])
    module = build.function_module(
        [build.batched(bits, x.shape)],
        lambda args: [build.slice_op(args[0], result_type, axis, start, end)],
    )
    assert_matches_reference(
        lambda: run_one(module, x), lambda: ref.slice_axis(x, axis, start, end)
    )


@EXAMPLES
@given(st.sampled_from([8, 32]), st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_constant_matches_reference(bits, shape, data):
    dtype = np.int8 if bits == 8 else np.int32
    elements = st.integers(-128, 127) if bits == 8 else int32_elements()
    value = data.draw(arrays(dtype, shape, elements=elements))
    op = build.constant(value)
    module = build.function_module([], lambda args: [op])
    assert_matches_reference(
        lambda: run_one(module), lambda: ref.constant(op.value.data.data, shape, bits)
    )


# The chunking argument (docs/dghw.md, "Exactness of the device model's GEMMs").


def worst_case_fc(k: int):
    """Inputs all -128 with zero point 127 (|x - zp| = 255), weights 127 except one 126.

    Each output is -255 * (127 * (k - 1) + 126): an odd integer far above 2^24,
    which float32 cannot represent, so no single float32 GEMM can return it.
    """
    x = np.full((2, k), -128, dtype=np.int8)
    w = np.full((3, k), 127, dtype=np.int8)
    w[:, 0] = 126
    return x, w, 127


def test_chunking_makes_long_reductions_exact():
    k = 4096
    x, w, input_zp = worst_case_fc(k)
    exact = (x.astype(np.int64) - input_zp) @ w.astype(np.int64).T  # integer matmul, no BLAS
    assert np.all(np.abs(exact) > F32_EXACT_LIMIT) and np.all(exact % 2 == 1)
    single_gemm = (x.astype(np.float32) - input_zp) @ w.astype(np.float32).T
    assert not np.array_equal(single_gemm.astype(np.int64), exact)  # the naive way is wrong

    b = np.zeros(3, dtype=np.int32)
    module, args = accumulate_module(
        lambda xv, wv, bv, t: build.fully_connected(xv, wv, bv, t, input_zp, 0),
        x,
        w,
        b,
        (2, 3),
        constant=True,
    )
    np.testing.assert_array_equal(run_one(module, *args), exact.astype(np.int32))


@EXAMPLES
@given(st.integers(1, 255), st.integers(1, 255))
def test_chunk_length_is_the_longest_exact_one(x_bound, w_bound):
    chunk = exact_chunk_length(x_bound, w_bound)
    assert chunk * x_bound * w_bound < F32_EXACT_LIMIT <= (chunk + 1) * x_bound * w_bound


@FEW_EXAMPLES
@given(st.integers(1, 5000), st.data())
def test_exact_integer_gemm_on_worst_case_values(k, data):
    lhs = data.draw(arrays(np.int64, (3, k), elements=st.sampled_from([-255, 255])))
    rhs = data.draw(arrays(np.int64, (k, 2), elements=st.sampled_from([-255, 255])))
    chunk = exact_chunk_length(255, 255)
    product = exact_integer_gemm(lhs.astype(np.float32), rhs.astype(np.float32), chunk)
    np.testing.assert_array_equal(product, lhs @ rhs)


def product_extremes(w: np.ndarray, x_range: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Per (k, n): the largest positive and negative magnitude of x * w[k, n] over x_range."""
    at = np.stack([x_range[0] * w, x_range[1] * w])
    return np.maximum(at.max(axis=0), 0), np.maximum(-at.min(axis=0), 0)


@st.composite
def weight_split_cases(draw):
    k, n = draw(st.integers(1, 3000)), draw(st.integers(1, 4))
    worst = draw(st.booleans())
    elements = st.sampled_from([-255, 255, -127, 127]) if worst else st.integers(-255, 255)
    w = draw(arrays(np.int64, (k, n), elements=elements))
    zp = draw(int8_zero_points(draw(st.booleans())))
    return w, (-128 - zp, 127 - zp)


@EXAMPLES
@given(weight_split_cases())
def test_weight_splits_are_exact_and_as_long_as_exactness_allows(case):
    w, x_range = case
    splits = exact_weight_splits(w, x_range)
    bounds = (0, *splits, len(w))
    assert all(a < b for a, b in zip(bounds[:-1], bounds[1:], strict=True))
    positive, negative = product_extremes(w, x_range)
    for start, end in zip(bounds[:-1], bounds[1:], strict=True):
        for sums in (positive[start:end].sum(axis=0), negative[start:end].sum(axis=0)):
            assert sums.max() < F32_EXACT_LIMIT  # every partial sum is a float32 integer
        if end < len(w):  # greedy: one more row would break the bound
            grown = max(
                positive[start : end + 1].sum(axis=0).max(),
                negative[start : end + 1].sum(axis=0).max(),
            )
            assert grown >= F32_EXACT_LIMIT


@FEW_EXAMPLES
@given(weight_split_cases(), st.data())
def test_weight_split_gemm_on_worst_case_inputs(case, data):
    """Inputs at the range ends, chosen per element so that a column's products all share a sign."""
    w, (lo, hi) = case
    column = data.draw(st.integers(0, w.shape[1] - 1))
    aligned = np.where(w[:, column] * hi >= w[:, column] * lo, hi, lo)  # every product >= 0
    x = np.stack([aligned, np.where(aligned == hi, lo, hi)])  # and every one <= 0
    weights = GemmWeights.prepare(w, np.zeros(w.shape[1], dtype=np.int64), (lo, hi))
    product = exact_split_gemm(x.astype(np.float32), weights.matrix, weights.splits)
    np.testing.assert_array_equal(product, x @ w)


def rescale_module(case) -> ModuleOp:
    x, multipliers, shifts, input_zp, output_zp, (cmin, cmax), out_bits = case
    return build.function_module(
        [build.batched(x.dtype.itemsize * 8, x.shape)],
        lambda args: [
            build.rescale(
                args[0],
                build.batched(out_bits, x.shape),
                multipliers,
                shifts,
                input_zp,
                output_zp,
                cmin,
                cmax,
            )
        ],
    )


@EXAMPLES
@given(rescale_cases(), st.data())
def test_rescale_prepared_forms_hold_across_calls_and_batches(case, data):
    """One device model, several batch sizes: the tiled parameters and the table offsets
    are prepared per item shape once, and every call still equals the reference."""
    x, multipliers, shifts, input_zp, output_zp, (cmin, cmax), out_bits = case
    device = DeviceModel(rescale_module(case))
    for batch in data.draw(st.lists(st.sampled_from([0, 1, 2, 5]), min_size=2, max_size=4)):
        xb = np.resize(x, (batch, *x.shape[1:])).astype(x.dtype)
        (got,) = device([xb])
        expected = ref.rescale(xb, multipliers, shifts, input_zp, output_zp, cmin, cmax, out_bits)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


@EXAMPLES
@given(rescale_cases())
def test_rescale_results_lie_in_their_static_range(case):
    """`static_range` (what lets `dghw.add` add in int32) bounds every result, here on
    inputs that include the extremes of the input type."""
    x = case[0]
    info = np.iinfo(x.dtype)
    x = np.concatenate([x.reshape(-1), [info.min, info.max, 0]]).astype(x.dtype)
    x = x.reshape(-1, 1) if len(case[1]) == 1 else np.resize(x, (x.size, *case[0].shape[1:]))
    case = (x, *case[1:])
    module = rescale_module(case)
    op = next(o for o in module.walk() if isinstance(o, dghw.RescaleOp))
    bounds = static_range(op.result)
    assert bounds is not None
    got = run_one(module, x.astype(case[0].dtype))
    assert got.size == 0 or (bounds[0] <= got.min() and got.max() <= bounds[1])
    if x.dtype == np.int8 and len(case[1]) == 1 and case[-1] == 32:  # the table's range, attained
        every = np.arange(-128, 128, dtype=np.int8).reshape(-1, *[1] * (x.ndim - 1))
        every = np.broadcast_to(every, (256, *x.shape[1:])).copy()
        all_results = run_one(module, every)
        assert (int(all_results.min()), int(all_results.max())) == bounds


def residual_add_module(i8_input: bool, multiplier: int, shift: int, clamp: tuple[int, int]):
    """Two rescales onto int32 (the residual pattern), then their `dghw.add`."""
    bits = 8 if i8_input else 32
    x_type, y_type = build.batched(bits, (1, 3)), build.batched(32, (1, 3))
    zp = -128 if i8_input else 0

    def ops(args):
        a = build.rescale(args[0], y_type, [multiplier], [shift], zp, 0, *clamp)
        b = build.rescale(args[1], y_type, [multiplier], [shift], zp, 0, *clamp)
        return [a, b, build.add(a.result, b.result)]

    return build.function_module([x_type, x_type], ops)


@pytest.mark.parametrize(
    ("i8_input", "multiplier", "shift", "clamp", "in_int32"),
    [
        # clamps whose sum fits: the int32 add
        (False, 2**30, 30, (-(2**30), 2**30 - 1), True),
        # one more at the top: the sum could reach 2^31, so int64 and the range check
        (False, 2**30, 30, (-(2**30), 2**30), False),
        (False, 2**30, 30, (INT32_MIN, INT32_MAX), False),
        # int8 inputs: the table's range, however wide the clamp
        (True, 2**30, 8, (INT32_MIN, INT32_MAX), True),  # |255 * 2^22| * 2 < 2^31
        (True, 2**31 - 1, 8, (INT32_MIN, INT32_MAX), False),  # 255 * 2^23 each: 2^31 and up
    ],
)
def test_add_in_int32_exactly_when_the_operand_ranges_prove_it(
    i8_input, multiplier, shift, clamp, in_int32
):
    module = residual_add_module(i8_input, multiplier, shift, clamp)
    add_op = next(o for o in module.walk() if isinstance(o, dghw.AddOp))
    assert sum_fits_int32(add_op.lhs, add_op.rhs) == in_int32
    dtype = np.int8 if i8_input else np.int32
    info = np.iinfo(dtype)
    extremes = np.array([[info.min, info.max, 0], [info.max, info.max, info.min]], dtype=dtype)
    for lhs, rhs in [(extremes, extremes), (extremes, extremes[::-1].copy())]:

        def reference(lhs=lhs, rhs=rhs):
            a = ref.rescale(lhs, [multiplier], [shift], module_zp(i8_input), 0, *clamp, 32)
            b = ref.rescale(rhs, [multiplier], [shift], module_zp(i8_input), 0, *clamp, 32)
            return ref.add(a, b)

        assert_matches_reference(lambda lhs=lhs, rhs=rhs: run_one(module, lhs, rhs), reference)


def module_zp(i8_input: bool) -> int:
    return -128 if i8_input else 0


@FEW_EXAMPLES
@given(weight_split_cases(), st.sampled_from([0, 1, 2, 3]), st.data())
def test_int32_accumulation_with_tiled_bias_over_items(case, items, data):
    """`GemmWeights.accumulate` on worst-case inputs, split chunks, a bias tiled over
    items of several rows: the exact int64 sum, when int32 provably holds it."""
    w, (lo, hi) = case
    rows = data.draw(st.integers(1, 3))
    bias = data.draw(arrays(np.int64, w.shape[1], elements=st.integers(-(2**20), 2**20)))
    weights = GemmWeights.prepare(w, bias, (lo, hi))
    x = data.draw(arrays(np.int64, (items * rows, len(w)), elements=st.sampled_from([lo, hi])))
    if weights.may_overflow:
        return
    for _ in range(2):  # the second call reuses the tiled bias
        got = weights.accumulate(x.astype(np.float32), None, items)  # type: ignore[arg-type]
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, x @ w + bias)


def test_rescale_folds_zero_points_only_when_int64_holds_every_step():
    def rescale_op(shift: int, output_zp: int):
        x_type, y_type = build.batched(32, (2,)), build.batched(8, (2,))
        module = build.function_module(
            [x_type],
            lambda args: [
                build.rescale(args[0], y_type, [2**31 - 1], [shift], 0, output_zp, -128, 127)
            ],
        )
        return next(op for op in module.walk() if op.name == "dghw.rescale")

    assert FoldedRescale.prepare(rescale_op(31, -128)) is not None
    # 127 << 62 leaves int64: the step-by-step definition (which never forms it) runs instead.
    assert FoldedRescale.prepare(rescale_op(62, 127)) is None


@st.composite
def requantization_cases(draw):
    """int32 accumulators onto int8 as a conv or FC layer's rescale has them: per-channel
    multipliers below 2^31 (down to 1), shifts 31..44 (so m < 2^s), any output zero
    point, the full int8 clamp or a ReLU's."""
    channels = draw(st.integers(1, 5))
    multipliers = draw(
        st.lists(
            st.one_of(st.sampled_from([1, 2**30, 2**31 - 1]), st.integers(1, 2**31 - 1)),
            min_size=channels,
            max_size=channels,
        )
    )
    shifts = draw(
        st.lists(
            st.one_of(st.sampled_from([31, 44]), st.integers(31, 44)),
            min_size=channels,
            max_size=channels,
        )
    )
    output_zp = draw(st.one_of(st.sampled_from([-128, 127]), st.integers(-128, 127)))
    clamp = draw(st.sampled_from([(-128, 127), (output_zp, 127)]))
    return multipliers, shifts, output_zp, clamp


@EXAMPLES
@given(requantization_cases(), st.data())
def test_clipped_float_rescale_at_its_clip_bounds_and_int32_extremes(case, data):
    """The clip-then-float64 form (`ClippedFloatRescale`) is what runs for requantizations,
    and equals the reference on the int32 extremes and on every channel's clip bounds
    and their neighbours, where the clip and the clamp must agree to the last step."""
    multipliers, shifts, output_zp, (cmin, cmax) = case
    channels = len(multipliers)
    x_type, y_type = build.batched(32, (1, channels)), build.batched(8, (1, channels))
    module = build.function_module(
        [x_type],
        lambda args: [
            build.rescale(args[0], y_type, multipliers, shifts, 0, output_zp, cmin, cmax)
        ],
    )
    op = next(o for o in module.walk() if isinstance(o, dghw.RescaleOp))
    plan = ClippedFloatRescale.prepare(op)
    assert plan is not None
    per_channel = [np.broadcast_to(bound, channels) for bound in (plan.low, plan.high)]
    values = {INT32_MIN, INT32_MAX, 0, -1, 1}
    for bound in np.concatenate(per_channel).tolist():
        values.update(bound + d for d in (-1, 0, 1))
    values.update(data.draw(st.lists(int32_elements(), max_size=8)))
    column = np.clip(sorted(values), INT32_MIN, INT32_MAX)
    x = np.repeat(column[:, None], channels, axis=1).astype(np.int32)
    expected = ref.rescale(x, multipliers, shifts, 0, output_zp, cmin, cmax, 8)
    np.testing.assert_array_equal(run_one(module, x), expected)
    np.testing.assert_array_equal(plan.apply(x), expected)


def test_clipped_float_rescale_only_where_float64_is_exact():
    def rescale_op(multiplier: int, shift: int, output_zp: int, out_bits: int = 8):
        x_type, y_type = build.batched(32, (2,)), build.batched(out_bits, (2,))
        lo, hi = (-128, 127) if out_bits == 8 else (INT32_MIN, INT32_MAX)
        module = build.function_module(
            [x_type],
            lambda args: [
                build.rescale(args[0], y_type, [multiplier], [shift], 0, output_zp, lo, hi)
            ],
        )
        return next(op for op in module.walk() if op.name == "dghw.rescale")

    assert ClippedFloatRescale.prepare(rescale_op(2**31 - 1, 44, -128)) is not None
    # |x * m| reaches 2^53 + 2^45 at the clip bound of shift 46: past float64's integers.
    assert ClippedFloatRescale.prepare(rescale_op(2**30, 45, 0)) is not None
    assert ClippedFloatRescale.prepare(rescale_op(2**30, 46, 0)) is None
    assert ClippedFloatRescale.prepare(rescale_op(2**30, 47, 0)) is None
    # m > 2^s: results jump by more than one step, the clamp bound may be skipped.
    assert ClippedFloatRescale.prepare(rescale_op(2**31 - 1, 8, 0)) is None
    # onto int32: the clamp spans 2^32 steps, so x * m reaches far past 2^53.
    assert ClippedFloatRescale.prepare(rescale_op(2**30, 31, 0, 32)) is None
    assert ClippedFloatRescale.prepare(rescale_op(0, 31, 0)) is None


# The device model around the ops.


def conv_model() -> tuple[ModuleOp, np.ndarray]:
    rng = np.random.default_rng(7)
    w = rng.integers(-128, 128, (4, 3, 3, 2), dtype=np.int8)
    b = rng.integers(-1000, 1000, 4, dtype=np.int32)
    x_type, y_type = build.tensor(8, build.BATCH, 5, 5, 2), build.tensor(32, build.BATCH, 3, 3, 4)

    def ops(args):
        wc, bc = build.constant(w), build.constant(b)
        conv = build.conv2d(args[0], wc.result, bc.result, y_type, (2, 2), (1, 1, 1, 1), 3, 0)
        return [wc, bc, conv]

    return build.function_module([x_type], ops), w


def test_device_model_is_vectorized_over_the_batch():
    module, _ = conv_model()
    device = DeviceModel(module)
    x = np.random.default_rng(1).integers(-128, 128, (5, 5, 5, 2), dtype=np.int8)
    (batched,) = device([x])
    for i in range(5):
        (single,) = device([x[i : i + 1]])
        np.testing.assert_array_equal(single[0], batched[i])


def test_cached_weights_do_not_leak_between_calls():
    module, _ = conv_model()
    device = DeviceModel(module)
    rng = np.random.default_rng(2)
    for _ in range(3):
        x = rng.integers(-128, 128, (2, 5, 5, 2), dtype=np.int8)
        np.testing.assert_array_equal(device([x])[0], run_dghw(module, [x])[0])


@pytest.mark.parametrize(
    ("array", "message"),
    [
        (np.zeros((1, 5, 5, 2), np.int32), "expected int8 elements, got int32"),
        (np.zeros((1, 5, 4, 2), np.int8), r"got an array of shape \[1, 5, 4, 2\]"),
        (np.zeros((5, 5, 2), np.int8), r"got an array of shape \[5, 5, 2\]"),
    ],
)
def test_arguments_that_do_not_fit_are_rejected(array, message):
    module, _ = conv_model()
    with pytest.raises(ValueError, match=message):
        run_dghw(module, [array])


def test_argument_count_and_batch_agreement_are_checked():
    t = build.batched(32, (1, 3))
    module = build.function_module([t, t], lambda args: [build.add(*args)])
    with pytest.raises(ValueError, match="takes 2 argument"):
        run_dghw(module, [np.zeros((1, 3), np.int32)])
    with pytest.raises(ValueError, match="batch extent 2 differs from 1"):
        run_dghw(module, [np.zeros((1, 3), np.int32), np.zeros((2, 3), np.int32)])


def test_missing_function_is_reported():
    module, _ = conv_model()
    with pytest.raises(InterpretationError, match="no function @forward"):
        run_dghw(module, [], function="forward")


# The CNN ops: depthwise conv, pooling, tables, softmax, concat, resize.


def single_op_module(inputs: list[np.ndarray], make_op) -> ModuleOp:
    """A module around one op of the batched `inputs`; make_op(args) returns it."""
    arg_types = [build.batched(a.dtype.itemsize * 8, a.shape) for a in inputs]
    return build.function_module(arg_types, lambda args: [make_op(args)])


@st.composite
def depthwise_cases(draw, worst_case: bool | None = None):
    worst = draw(st.booleans()) if worst_case is None else worst_case
    channels = draw(st.integers(1, 5))
    kh, kw = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    stride = draw(st.tuples(st.integers(1, 3), st.integers(1, 3)))
    pad = draw(st.tuples(*[st.integers(0, 2)] * 4))
    top, bottom, left, right = pad
    height = draw(st.integers(max(1, kh - top - bottom), 7))
    width = draw(st.integers(max(1, kw - left - right), 7))
    x = draw(
        arrays(
            np.int8,
            (draw(st.integers(1, 2)), height, width, channels),
            elements=int8_elements(worst),
        )
    )
    w_elements = st.sampled_from([-127, 127]) if worst else st.integers(-128, 127)
    w = draw(arrays(np.int8, (kh, kw, channels), elements=w_elements))
    b = draw(biases(channels))
    input_zp = 127 if worst else draw(int8_zero_points(False))
    weight_zp = 0 if worst else draw(int8_zero_points(False))
    return x, w, b, stride, pad, input_zp, weight_zp, draw(st.booleans())


def check_depthwise(case) -> None:
    x, w, b, stride, pad, input_zp, weight_zp, constant = case
    oh = (x.shape[1] + pad[0] + pad[1] - w.shape[0]) // stride[0] + 1
    ow = (x.shape[2] + pad[2] + pad[3] - w.shape[1]) // stride[1] + 1
    module, args = accumulate_module(
        lambda xv, wv, bv, t: build.depthwise_conv2d(
            xv, wv, bv, t, stride, pad, input_zp, weight_zp
        ),
        x,
        w,
        b,
        (x.shape[0], oh, ow, x.shape[3]),
        constant,
    )
    assert_matches_reference(
        lambda: run_one(module, *args),
        lambda: ref.depthwise_conv2d(x, w, b, stride, pad, input_zp, weight_zp),
    )


@EXAMPLES
@given(depthwise_cases())
def test_depthwise_conv2d_matches_reference(case):
    check_depthwise(case)


@FEW_EXAMPLES
@given(depthwise_cases(worst_case=True))
def test_depthwise_conv2d_worst_case(case):
    check_depthwise(case)


def test_depthwise_conv2d_equals_a_grouped_torch_conv():
    # An independent check of the layout and padding: torch's grouped conv in float64,
    # exact for these magnitudes.
    import torch

    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (2, 7, 6, 3), dtype=np.int8)
    w = rng.integers(-128, 128, (3, 2, 3), dtype=np.int8)
    b = rng.integers(-1000, 1000, 3, dtype=np.int32)
    stride, pad, input_zp, weight_zp = (2, 1), (1, 1, 0, 2), -5, 4
    xt = torch.tensor(x, dtype=torch.float64).permute(0, 3, 1, 2) - input_zp
    xt = torch.nn.functional.pad(xt, (pad[2], pad[3], pad[0], pad[1]))
    wt = (torch.tensor(w, dtype=torch.float64) - weight_zp).permute(2, 0, 1)[:, None]
    expected = torch.nn.functional.conv2d(
        xt, wt, torch.tensor(b, dtype=torch.float64), stride=stride, groups=3
    )
    module, args = accumulate_module(
        lambda xv, wv, bv, t: build.depthwise_conv2d(
            xv, wv, bv, t, stride, pad, input_zp, weight_zp
        ),
        x,
        w,
        b,
        (2, *expected.shape[2:], 3),
        constant=True,
    )
    np.testing.assert_array_equal(
        run_one(module, *args), expected.permute(0, 2, 3, 1).numpy().astype(np.int32)
    )


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


@st.composite
def max_pool_cases(draw):
    worst = draw(st.booleans())
    kernel = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    height, width = draw(st.integers(kernel[0], 8)), draw(st.integers(kernel[1], 8))
    out_hw = window_extents((height, width), kernel, stride, (0, 0, 0, 0), draw(st.booleans()))
    channels = draw(st.integers(1, 3))
    x = draw(
        arrays(
            np.int8,
            (draw(st.integers(1, 2)), height, width, channels),
            elements=int8_elements(worst),
        )
    )
    return x, kernel, stride, out_hw


@EXAMPLES
@given(max_pool_cases())
def test_max_pool2d_matches_reference(case):
    x, kernel, stride, out_hw = case
    result_type = build.tensor(8, build.BATCH, *out_hw, x.shape[3])
    module = single_op_module(
        [x], lambda args: build.max_pool2d(args[0], result_type, kernel, stride)
    )
    assert_matches_reference(
        lambda: run_one(module, x), lambda: ref.max_pool2d(x, kernel, stride, out_hw)
    )


@st.composite
def avg_pool_cases(draw, torch_compatible: bool = False):
    """Random avg pools; `torch_compatible` keeps to torch's constraints (symmetric pad <= k/2)."""
    worst = draw(st.booleans())
    kernel = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    count_include_pad = draw(st.booleans())
    if torch_compatible:
        pad_y, pad_x = draw(st.integers(0, kernel[0] // 2)), draw(st.integers(0, kernel[1] // 2))
        pad = (pad_y, pad_y, pad_x, pad_x)
    else:
        # Without count_include_pad every window must overlap the input (the verifier).
        limit = [2, 2] if count_include_pad else [kernel[0] - 1, kernel[1] - 1]
        pad = tuple(draw(st.integers(0, min(2, limit[i // 2]))) for i in range(4))
    height = draw(st.integers(max(1, kernel[0] - pad[0] - pad[1]), 7))
    width = draw(st.integers(max(1, kernel[1] - pad[2] - pad[3]), 7))
    ceil_mode = draw(st.booleans())
    out_hw = window_extents((height, width), kernel, stride, pad, ceil_mode)
    area = kernel[0] * kernel[1]
    divisor_override = draw(
        st.one_of(
            st.none(),
            st.integers(1, area),
            st.sampled_from([area + 1, 1000, INT32_MAX]) if not torch_compatible else st.none(),
        )
    )
    channels = draw(st.integers(1, 3))
    x = draw(
        arrays(
            np.int8,
            (draw(st.integers(1, 2)), height, width, channels),
            elements=int8_elements(worst),
        )
    )
    input_zp, output_zp = draw(int8_zero_points(worst)), draw(int8_zero_points(worst))
    case = (
        x,
        kernel,
        stride,
        pad,
        out_hw,
        count_include_pad,
        divisor_override,
        input_zp,
        output_zp,
    )
    return case, ceil_mode


def avg_pool_module(case) -> ModuleOp:
    x, kernel, stride, pad, out_hw, include_pad, override, input_zp, output_zp = case
    result_type = build.tensor(8, build.BATCH, *out_hw, x.shape[3])
    return single_op_module(
        [x],
        lambda args: build.avg_pool2d(
            args[0], result_type, kernel, stride, pad, include_pad, override, input_zp, output_zp
        ),
    )


@EXAMPLES
@given(avg_pool_cases())
def test_avg_pool2d_matches_reference(case_and_mode):
    case, _ = case_and_mode
    module = avg_pool_module(case)
    assert_matches_reference(lambda: run_one(module, case[0]), lambda: ref.avg_pool2d(*case))


def round_half_away_from_zero(v: np.ndarray) -> np.ndarray:
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def check_avg_pool_against_torch(case, ceil_mode: bool) -> None:
    """torch's own avg_pool2d (float64, exact here) decides every position's divisor."""
    import torch

    x, kernel, stride, pad, out_hw, include_pad, override, input_zp, output_zp = case
    centered = torch.tensor(x, dtype=torch.float64).permute(0, 3, 1, 2) - input_zp
    mean = torch.nn.functional.avg_pool2d(
        centered, kernel, stride, (pad[0], pad[2]), ceil_mode, include_pad, override
    )
    assert tuple(mean.shape[2:]) == out_hw  # the dialect counts windows as torch does
    # dghw rounds the exact quotient half away from zero (docs/dghw.md).
    expected = round_half_away_from_zero(mean.permute(0, 2, 3, 1).numpy()) + output_zp
    actual = run_one(avg_pool_module(case), x)
    np.testing.assert_array_equal(actual, np.clip(expected, -128, 127).astype(np.int8))


@EXAMPLES
@given(avg_pool_cases(torch_compatible=True))
def test_avg_pool2d_divisors_are_torchs(case_and_mode):
    check_avg_pool_against_torch(*case_and_mode)


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize(
    ("size", "kernel", "stride", "pad"),
    [
        ((6, 6), (3, 3), (2, 2), 1),  # the 4th window overhangs the padded input by 1
        ((5, 8), (2, 3), (2, 3), 0),  # overhang without padding
        ((8, 8), (4, 4), (3, 3), 2),  # overhang past a padding of 2
    ],
)
def test_avg_pool2d_ceil_mode_overhang_is_torchs(count_include_pad, size, kernel, stride, pad):
    x = np.random.default_rng(11).integers(-128, 128, (2, *size, 3), dtype=np.int8)
    pads = (pad, pad, pad, pad)
    out_hw = window_extents(size, kernel, stride, pads, ceil_mode=True)
    assert out_hw != window_extents(size, kernel, stride, pads, ceil_mode=False)
    case = (x, kernel, stride, pads, out_hw, count_include_pad, None, -3, 5)
    check_avg_pool_against_torch(case, ceil_mode=True)
    np.testing.assert_array_equal(run_one(avg_pool_module(case), x), ref.avg_pool2d(*case))


@pytest.mark.parametrize("value", [-128, 127])
@pytest.mark.parametrize(("input_zp", "output_zp"), [(127, -128), (-128, 127), (127, 127)])
def test_pools_of_an_extreme_constant_map(value, input_zp, output_zp):
    # Ceil mode with overhang and padding: the maximum of a constant map is the constant,
    # and so is the average over the input elements (whatever their count).
    x = np.full((2, 5, 6, 3), value, dtype=np.int8)
    kernel, stride = (2, 2), (2, 2)
    out_hw = window_extents((5, 6), kernel, stride, (0, 0, 0, 0), ceil_mode=True)
    assert out_hw == (3, 3)  # the last row of windows overhangs
    max_type = build.tensor(8, build.BATCH, *out_hw, 3)
    module = single_op_module([x], lambda args: build.max_pool2d(args[0], max_type, kernel, stride))
    np.testing.assert_array_equal(run_one(module, x), np.full((2, *out_hw, 3), value))
    kernel, pad = (3, 2), (1, 1, 1, 0)
    out_hw = window_extents((5, 6), kernel, stride, pad, ceil_mode=True)
    assert out_hw == (3, 4)  # the last column of windows overhangs
    case = (x, kernel, stride, pad, out_hw, False, None, input_zp, output_zp)
    expected = np.full((2, *out_hw, 3), np.clip(value - input_zp + output_zp, -128, 127))
    np.testing.assert_array_equal(run_one(avg_pool_module(case), x), expected)
    np.testing.assert_array_equal(run_one(avg_pool_module(case), x), ref.avg_pool2d(*case))


def all_int8_values() -> np.ndarray:
    """Every int8 value once, in order, as a [1, 256] array."""
    return np.arange(-128, 128, dtype=np.int8).reshape(1, 256)


@EXAMPLES
@given(
    arrays(np.int8, 256, elements=st.integers(-128, 127)),
    st.lists(st.integers(1, 4), min_size=1, max_size=3),
    st.data(),
)
def test_table_matches_reference(entries, item_shape, data):
    x = data.draw(arrays(np.int8, (2, *item_shape), elements=st.integers(-128, 127)))
    module = single_op_module([x], lambda args: build.table(args[0], entries))
    assert_matches_reference(lambda: run_one(module, x), lambda: ref.table(x, entries))
    everything = all_int8_values()
    module = single_op_module([everything], lambda args: build.table(args[0], entries))
    np.testing.assert_array_equal(run_one(module, everything)[0], entries)


def exp_table(scale: float, fraction_bits: int = 16) -> np.ndarray:
    """docs/dghw.md: exp_table[k] = round(2^F exp(-k * s_in)), F = 16 unless said otherwise."""
    return np.rint(2.0**fraction_bits * np.exp(-np.arange(256) * scale)).astype(np.int32)


def sigmoid_entries(scale: float, zero_point: int) -> np.ndarray:
    """docs/dghw.md: table[j] = clamp(rint(sigmoid((j - 128 - zp) * s) * 256) - 128)."""
    real = (np.arange(-128, 128) - zero_point) * scale
    return np.clip(np.rint(256 / (1 + np.exp(-real))) - 128, -128, 127).astype(np.int8)


@FEW_EXAMPLES
@given(st.floats(1e-3, 1.0), st.integers(-128, 127), st.integers(1, 5000))
def test_compiler_tables_follow_the_doc(scale, zero_point, row_length):
    from dg.dialects.dgq import FIXED_GRID_SCALE, FIXED_GRID_ZERO_POINT, UniformQuantizedType
    from dg.lowering.convert_dgq_to_dghw import sigmoid_table, softmax_exp_table

    bits = min(30, 31 - row_length.bit_length())
    table = softmax_exp_table(scale, row_length)
    np.testing.assert_array_equal(table, exp_table(scale, bits))
    assert row_length * int(table.max()) < 2**31
    source = UniformQuantizedType(IntegerType(8), [scale], [zero_point])
    fixed = UniformQuantizedType(IntegerType(8), [FIXED_GRID_SCALE], [FIXED_GRID_ZERO_POINT])
    np.testing.assert_array_equal(sigmoid_table(source, fixed), sigmoid_entries(scale, zero_point))


def torch_fixed_grid(p) -> np.ndarray:
    """torch's quantize_per_tensor of probabilities onto the fixed grid (1/256, -128)."""
    import torch

    quantize, _ = torch_quant_ops()
    return quantize(p, 1 / 256, -128, -128, 127, torch.int8).numpy()


def torch_dequantize(x: np.ndarray, scale: float, zero_point: int):
    import torch

    _, dequantize = torch_quant_ops()
    return dequantize(torch.tensor(x), scale, zero_point, -128, 127, torch.int8)


@EXAMPLES
@given(st.floats(1e-3, 1.0), st.integers(-128, 127))
def test_sigmoid_tables_match_float_sigmoid(scale, zero_point):
    import torch

    everything = all_int8_values()
    exact = torch_fixed_grid(torch.sigmoid(torch_dequantize(everything, scale, zero_point)))
    # The table of the frozen model's own float ops is bit-exact by construction; one built
    # in float64 (numpy) is within one step of torch's float32 sigmoid.
    float64_table = sigmoid_entries(scale, zero_point)
    for entries, tolerance in ((exact[0], 0), (float64_table, 1)):
        module = single_op_module([everything], lambda args, t=entries: build.table(args[0], t))
        difference = run_one(module, everything).astype(int) - exact
        assert np.abs(difference).max() <= tolerance


@st.composite
def softmax_cases(draw):
    rank = draw(st.integers(2, 4))
    shape = draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank))
    axis = draw(st.integers(1, rank - 1))
    kind = draw(st.sampled_from(["random", "identical", "one huge", "extremes"]))
    if kind == "random":
        x = draw(arrays(np.int8, shape, elements=st.integers(-128, 127)))
    elif kind == "identical":
        x = np.full(shape, draw(st.integers(-128, 127)), dtype=np.int8)
    else:
        x = draw(arrays(np.int8, shape, elements=st.sampled_from([-128, 127])))
        if kind == "one huge":  # one 127 per row, every other element -128
            x[...] = -128
            index = [slice(None)] * rank
            index[axis] = draw(st.integers(0, shape[axis] - 1))
            x[tuple(index)] = 127
    if draw(st.booleans()):
        table = exp_table(draw(st.floats(1e-3, 2.0)))
    else:  # any table the verifier accepts: entries >= 0, sums within int32
        bound = INT32_MAX // shape[axis]
        table = draw(arrays(np.int32, 256, elements=st.integers(0, bound)))
        table[0] = draw(st.integers(1, bound))
    return x, table, axis


@EXAMPLES
@given(softmax_cases())
def test_softmax_matches_reference(case):
    x, table, axis = case
    module = single_op_module([x], lambda args: build.softmax(args[0], table, axis))
    assert_matches_reference(lambda: run_one(module, x), lambda: ref.softmax(x, table, axis))


@EXAMPLES
@given(
    # (row length, table fraction bits F): docs/dghw.md proves one step for length < 2^(F-7).
    st.sampled_from([(2, 16), (10, 16), (64, 16), (511, 16), (1000, 21), (4095, 19)]),
    st.floats(1e-3, 1.0),
    st.integers(-128, 127),
    st.sampled_from(["random", "identical", "one huge", "one huge over a level", "narrow"]),
    st.integers(0, 2**32 - 1),
)
def test_softmax_is_float_softmax_within_one_step(row, scale, zero_point, kind, seed):
    import torch

    (length, fraction_bits), rng = row, np.random.default_rng(seed)
    x = rng.integers(-128, 128, (3, length), dtype=np.int8)
    if kind == "identical":
        x[...] = x[:, :1]
    elif kind.startswith("one huge"):  # every other element shares one table entry's error
        x[...] = -128 if kind == "one huge" else rng.integers(-128, 127)
        x[:, rng.integers(length)] = 127
    elif kind == "narrow":  # close logits: every exp term counts
        x = rng.integers(100, 128, (3, length), dtype=np.int8)
    expected = torch_fixed_grid(torch.softmax(torch_dequantize(x, scale, zero_point), dim=1))
    table = exp_table(scale, fraction_bits)
    module = single_op_module([x], lambda args: build.softmax(args[0], table, 1))
    actual = run_one(module, x)
    assert np.abs(actual.astype(int) - expected).max() <= 1


def test_softmax_row_whose_exp_sum_is_zero_is_reported():
    table = np.zeros(256, dtype=np.int32)  # entry 0 is 0: a row of equal values sums to 0
    x = np.zeros((1, 4), dtype=np.int8)
    module = single_op_module([x], lambda args: build.softmax(args[0], table, 1))
    with pytest.raises(ref.ReferenceOverflow):
        ref.softmax(x, table, 1)
    with pytest.raises(InterpretationError, match=r"exp sums 0\.\.0 leave \[1, 2\^31 - 1\]"):
        run_one(module, x)


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


@EXAMPLES
@given(concat_cases())
def test_concat_matches_reference(case):
    inputs, axis = case
    shape = list(inputs[0].shape)
    shape[axis] = sum(a.shape[axis] for a in inputs)
    result_type = build.batched(8, shape)
    module = single_op_module(inputs, lambda args: build.concat(args, result_type, axis))
    assert_matches_reference(lambda: run_one(module, *inputs), lambda: ref.concat(inputs, axis))


@EXAMPLES
@given(
    st.tuples(st.integers(1, 6), st.integers(1, 6)),
    st.tuples(st.integers(1, 13), st.integers(1, 13)),
    st.sampled_from(["nearest", "nearest-exact"]),
    st.data(),
)
def test_resize_nearest_matches_reference(in_hw, out_hw, mode, data):
    x = data.draw(arrays(np.int8, (2, *in_hw, 2), elements=st.integers(-128, 127)))
    result_type = build.tensor(8, build.BATCH, *out_hw, 2)
    module = single_op_module([x], lambda args: build.resize_nearest(args[0], result_type, mode))
    assert_matches_reference(
        lambda: run_one(module, x), lambda: ref.resize_nearest(x, out_hw, mode)
    )


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize(
    ("in_hw", "out_hw"), [((3, 5), (6, 15)), ((4, 4), (12, 4)), ((8, 6), (4, 2)), ((7, 5), (7, 5))]
)
def test_resize_nearest_is_torchs_for_whole_factors(mode, in_hw, out_hw):
    # Whole up- and down-scaling factors: torch's float32 index arithmetic is exact.
    import torch

    x = np.random.default_rng(5).integers(-128, 128, (2, *in_hw, 3), dtype=np.int8)
    xt = torch.tensor(x, dtype=torch.float32).permute(0, 3, 1, 2)
    expected = torch.nn.functional.interpolate(xt, size=out_hw, mode=mode)
    result_type = build.tensor(8, build.BATCH, *out_hw, 3)
    module = single_op_module([x], lambda args: build.resize_nearest(args[0], result_type, mode))
    np.testing.assert_array_equal(
        run_one(module, x), expected.permute(0, 2, 3, 1).numpy().astype(np.int8)
    )


# -- residual adds fused into a pair table (DeviceInterpreter's plan) -------------------------


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


def every_int8_pair() -> tuple[np.ndarray, np.ndarray]:
    """[256, 256] arrays holding each of the 65536 (a, b) pairs once."""
    values = np.arange(-128, 128, dtype=np.int8)
    return np.repeat(values[:, None], 256, axis=1), np.tile(values, (256, 1))


@pytest.mark.parametrize(
    "lhs, rhs, out",
    [
        ((1 << 30, 10, -3), (1518500250, 11, 7), (1 << 30, 50, -128, -128)),  # TFLite-like
        ((2**31 - 1, 2, -128), (1, 2, 127), (2**31 - 1, 62, 5, -128)),  # extreme parameters
        ((1 << 30, 30, 0), (1 << 30, 30, 0), (1 << 30, 30, 0, 0)),  # a ReLU clamp
    ],
)
def test_a_residual_add_as_a_pair_table_equals_its_ops(lhs, rhs, out) -> None:
    """The planned walk replaces rescale(add(rescale a, rescale b)) by one lookup; on all
    65536 input pairs it gives the reference's integers and the op-by-op walk's."""
    module = pair_table_module(lhs, rhs, out)
    device = DeviceModel(module)
    a, b = every_int8_pair()
    (planned,) = device([a, b])
    (plan,) = device.interpreter._plans.values()
    assert [step.pair_table is not None for step in plan.steps] == [True, False]  # + return
    (observed,) = device([a, b], [ValueRecorder()])
    (expected,) = ref.run_module(module, [a, b])
    np.testing.assert_array_equal(planned, expected)
    np.testing.assert_array_equal(observed, expected)


def test_a_per_channel_rescale_keeps_the_residual_add_unfused() -> None:
    i8, i32 = build.batched(8, [0, 2]), build.batched(32, [0, 2])

    def ops(args):
        a = build.rescale(args[0], i32, [1 << 30, 1 << 29], [30, 30], 0, 0, -(2**31), 2**31 - 1)
        b = build.rescale(args[1], i32, [1 << 30], [30], 0, 0, -(2**31), 2**31 - 1)
        total = build.add(a.result, b.result)
        return [a, b, total, build.rescale(total.result, i8, [1 << 30], [30], 0, 0, -128, 127)]

    device = DeviceModel(build.function_module([i8, i8], ops))
    x = np.array([[-128, 127], [5, -6]], dtype=np.int8)
    device([x, x])
    (plan,) = device.interpreter._plans.values()
    assert all(step.pair_table is None for step in plan.steps) and len(plan.steps) == 5


def test_pair_tables_can_be_turned_off() -> None:
    """bench/interpreter_floor.py replays recorded results: its walk must not fuse."""
    from dg.runtime.interpreter import DeviceInterpreter, register_device_functions

    module = pair_table_module((1 << 30, 10, -3), (1 << 30, 10, 7), (1 << 30, 40, 0, -128))
    interpreter = DeviceInterpreter(module, fuse_residual_adds=False)
    register_device_functions(interpreter)
    a, b = every_int8_pair()
    (result,) = interpreter.call_op("main", (a, b))
    (plan,) = interpreter._plans.values()
    assert all(step.pair_table is None for step in plan.steps) and len(plan.steps) == 5
    np.testing.assert_array_equal(result, ref.run_module(module, [a, b])[0])
