"""The worst cases the other interpreter-vs-reference property tests left out (issue 5, section 2).

Every dghw op already has a scalar reference and a random property test
(`test_kernels_*.py`, `test_mul_matmul_interpreter.py`,
`test_logic_interpreter.py`). What they did not reach, and this file does:

- the largest centred weights: `|w - weight_zp| = 255` (weight zero point at
  an int8 extreme, weights at the other), which gives the shortest exact
  float32 chunk (258 terms) in conv2d, depthwise_conv2d and fully_connected;
- matmul over long reductions (K in the thousands) at extreme values;
- avg_pool2d over large windows (up to 64 x 64 taps), every divisor rule;
- softmax over long rows (up to 4095 elements) with tables whose row sums reach
  2^31 - 1, the verifier's bound;
- rescale at the 64-bit edge of its intermediate (|v| = 2^31, multiplier
  2^31 - 1, shift 2 and 62).

All comparisons are exact (`assert_matches_reference`).
"""

from __future__ import annotations

import dghw_reference as ref
import dghw_testing as build
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from interpreter_cases import (
    accumulate_module,
    assert_matches_reference,
    avg_pool_module,
    run_one,
    single_op_module,
    window_extents,
)
from test_mul_matmul_interpreter import matmul_module

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

FEW = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))

extremes = st.sampled_from([-128, 127])


@st.composite
def widest_centred_weights(draw, shape) -> tuple[np.ndarray, int]:
    """Weights and a zero point with |w - zp| = 255 somewhere (all of them, mostly)."""
    weight_zp = draw(extremes)
    far = 127 if weight_zp == -128 else -128
    w = draw(arrays(np.int8, shape, elements=st.sampled_from([far, far, far, weight_zp])))
    w.flat[0] = far
    return w, weight_zp


@FEW
@given(st.data())
def test_conv2d_widest_centred_weights(data):
    channels = data.draw(st.sampled_from([64, 300]))
    kh, kw = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    x = data.draw(arrays(np.int8, (1, 3, 3, channels), elements=extremes))
    w, weight_zp = data.draw(widest_centred_weights((2, kh, kw, channels)))
    b = np.array([INT32_MAX - 2**27, -(2**20)], dtype=np.int32)
    input_zp = data.draw(extremes)
    stride, pad = (1, 1), (1, 0, 0, 1)
    oh, ow = 3 + 1 - kh + 1, 3 + 1 - kw + 1
    module, args = accumulate_module(
        lambda xv, wv, bv, t: build.conv2d(xv, wv, bv, t, stride, pad, input_zp, weight_zp),
        x,
        w,
        b,
        (1, oh, ow, 2),
        data.draw(st.booleans()),
    )
    assert_matches_reference(
        lambda: run_one(module, *args),
        lambda: ref.conv2d(x, w, b, stride, pad, input_zp, weight_zp),
    )


@FEW
@given(st.data())
def test_depthwise_conv2d_widest_centred_weights(data):
    kh, kw = data.draw(st.integers(1, 7)), data.draw(st.integers(1, 7))
    channels = data.draw(st.integers(1, 4))
    x = data.draw(arrays(np.int8, (2, 7, 7, channels), elements=extremes))
    w, weight_zp = data.draw(widest_centred_weights((kh, kw, channels)))
    bound = data.draw(st.sampled_from([0, INT32_MAX - 255 * 255 * 49, INT32_MAX]))
    b = np.full(channels, bound, dtype=np.int32)
    input_zp = data.draw(extremes)
    stride, pad = (1, 2), (2, 2, 1, 0)
    oh, ow = (7 + 4 - kh) // 1 + 1, (7 + 1 - kw) // 2 + 1
    module, args = accumulate_module(
        lambda xv, wv, bv, t: build.depthwise_conv2d(
            xv, wv, bv, t, stride, pad, input_zp, weight_zp
        ),
        x,
        w,
        b,
        (2, oh, ow, channels),
        data.draw(st.booleans()),
    )
    assert_matches_reference(
        lambda: run_one(module, *args),
        lambda: ref.depthwise_conv2d(x, w, b, stride, pad, input_zp, weight_zp),
    )


@FEW
@given(st.sampled_from([257, 258, 259, 1000, 4099]), st.data())
def test_fully_connected_widest_centred_weights(k, data):
    # 258 = floor((2^24 - 1) / 255^2) + 1: just past one exact float32 chunk.
    x = data.draw(arrays(np.int8, (2, k), elements=extremes))
    w, weight_zp = data.draw(widest_centred_weights((3, k)))
    b = data.draw(arrays(np.int32, 3, elements=st.sampled_from([0, INT32_MIN, INT32_MAX])))
    input_zp = data.draw(extremes)
    module, args = accumulate_module(
        lambda xv, wv, bv, t: build.fully_connected(xv, wv, bv, t, input_zp, weight_zp),
        x,
        w,
        b,
        (2, 3),
        data.draw(st.booleans()),
    )
    assert_matches_reference(
        lambda: run_one(module, *args),
        lambda: ref.fully_connected(x, w, b, input_zp, weight_zp),
    )


@FEW
@given(st.sampled_from([258, 259, 2000, 4099]), st.data())
def test_matmul_long_reduction_at_extremes(k, data):
    lhs = data.draw(arrays(np.int8, (1, 2, k), elements=extremes))
    rhs = data.draw(arrays(np.int8, (1, k, 2), elements=extremes))
    lhs_zp, rhs_zp = data.draw(extremes), data.draw(extremes)
    module = matmul_module(lhs.shape, rhs.shape, lhs_zp, rhs_zp)
    assert_matches_reference(
        lambda: run_one(module, lhs, rhs), lambda: ref.matmul(lhs, rhs, lhs_zp, rhs_zp)
    )


@FEW
@given(st.data())
def test_avg_pool2d_large_windows(data):
    kernel = (data.draw(st.sampled_from([8, 33, 64])), data.draw(st.sampled_from([5, 64])))
    include_pad = data.draw(st.booleans())
    pad = (1, 2, 0, 3) if include_pad else (0, 0, 0, 0)
    size = (kernel[0] + data.draw(st.integers(0, 2)), kernel[1] + data.draw(st.integers(0, 2)))
    stride = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    out_hw = window_extents(size, kernel, stride, pad, data.draw(st.booleans()))
    area = kernel[0] * kernel[1]
    override = data.draw(st.sampled_from([None, 1, area, area + 1, INT32_MAX]))
    x = data.draw(arrays(np.int8, (1, *size, 1), elements=extremes))
    case = (
        x,
        kernel,
        stride,
        pad,
        out_hw,
        include_pad,
        override,
        *data.draw(st.tuples(extremes, extremes)),
    )
    module = avg_pool_module(case)
    assert_matches_reference(lambda: run_one(module, x), lambda: ref.avg_pool2d(*case))


@FEW
@given(st.sampled_from([256, 511, 1000, 4095]), st.data())
def test_softmax_long_rows_with_largest_sums(length, data):
    # The verifier allows length * max(exp_table) <= 2^31 - 1: table entries at that bound
    # make rows of equal values sum to exactly the largest allowed int32.
    top = INT32_MAX // length
    table = data.draw(arrays(np.int32, 256, elements=st.sampled_from([0, 1, top // 2, top])))
    table[0] = top
    kind = data.draw(st.sampled_from(["equal", "one high", "extremes"]))
    x = np.full((2, length), -128, dtype=np.int8)
    if kind == "equal":
        x[...] = data.draw(extremes)
    elif kind == "one high":
        x[:, data.draw(st.integers(0, length - 1))] = 127
    else:
        x = data.draw(arrays(np.int8, (2, length), elements=extremes))
    module = single_op_module([x], lambda args: build.softmax(args[0], table, 1))
    assert_matches_reference(lambda: run_one(module, x), lambda: ref.softmax(x, table, 1))


@FEW
@given(
    st.sampled_from([INT32_MIN, INT32_MAX, -1, 0]),
    st.sampled_from([0, 1, 2**30, 2**31 - 1]),
    st.sampled_from([2, 3, 31, 32, 61, 62]),
    st.sampled_from([8, 32]),
)
def test_rescale_at_the_64_bit_edge(value, multiplier, shift, out_bits):
    x = np.array([[value, INT32_MIN, INT32_MAX]], dtype=np.int32)
    lo, hi = (-128, 127) if out_bits == 8 else (INT32_MIN, INT32_MAX)
    result_type = build.batched(out_bits, x.shape)
    module = build.function_module(
        [build.batched(32, x.shape)],
        lambda args: [build.rescale(args[0], result_type, [multiplier], [shift], 0, 0, lo, hi)],
    )
    assert_matches_reference(
        lambda: run_one(module, x),
        lambda: ref.rescale(x, [multiplier], [shift], 0, 0, lo, hi, out_bits),
    )
