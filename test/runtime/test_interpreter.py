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
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import InterpretationError

from dg.runtime.interpreter import (
    F32_EXACT_LIMIT,
    DeviceModel,
    exact_chunk_length,
    exact_integer_gemm,
    run_dghw,
)

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
