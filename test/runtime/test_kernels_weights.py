"""Conv2d, depthwise conv2d and fully connected on the device model, against the scalar reference
at random and worst-case values."""

from __future__ import annotations

import dghw_reference as ref
import dghw_testing as build
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from interpreter_cases import (
    EXAMPLES,
    FEW_EXAMPLES,
    accumulate_module,
    assert_matches_reference,
    biases,
    int8_elements,
    int8_zero_points,
    run_one,
)

from dg.runtime.exact import INT32_MIN
from dg.runtime.kernels.common import TORCH_MIN_ELEMENTS, centered_into
from dg.runtime.kernels.weights import DepthwiseWeights

pytestmark = pytest.mark.usefixtures("both_gemm_paths")


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
    w_elements = st.sampled_from([-128, -127, 127]) if worst else st.integers(-128, 127)
    w = draw(arrays(np.int8, (out_channels, kh, kw, channels), elements=w_elements))
    b = draw(biases(out_channels))
    input_zp = 127 if worst else draw(int8_zero_points(False))
    # 0 (dg's symmetric weights) half the time: the int8 GEMMs take only those.
    weight_zp = 0 if worst or draw(st.booleans()) else draw(int8_zero_points(False))
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
    w_elements = st.sampled_from([-128, -127, 127]) if worst else st.integers(-128, 127)
    w = draw(arrays(np.int8, (n, k), elements=w_elements))
    b = draw(biases(n))
    input_zp = 127 if worst else draw(int8_zero_points(False))
    # 0 (dg's symmetric weights) half the time: the int8 GEMMs take only those.
    weight_zp = 0 if worst or draw(st.booleans()) else draw(int8_zero_points(False))
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


@pytest.mark.parametrize("past", [0, 1])
def test_depthwise_float_taps_at_their_bound_and_one_past(past):
    """The float32 taps run exactly while X * sum |w - weight_zp| <= 2^24 - 1 in every
    channel (`float_taps_are_exact`): at that bound, with every product of one sign,
    the sum is -(2^24 - 1); one more unit of weight sends the channel to the integer
    taps. Both equal the reference, with a bias that takes the result to int32's edge."""
    # 2^24 - 1 = 255 * 65793 = 255 * (258 * 255 + 3): 258 taps of 255 and one of 3.
    kh, kw, channels = 16, 17, 2
    centered = np.zeros((kh * kw, channels), dtype=np.int64)
    centered[:258] = 255
    centered[258] = (3, 3 + past)
    weight_zp = -128
    w = (centered + weight_zp).astype(np.int8).reshape(kh, kw, channels)
    x = np.full((2, kh, kw, channels), -128, dtype=np.int8)  # x - input_zp = -255
    b = np.array([INT32_MIN + 2**24 - 1, 7], dtype=np.int32)
    input_zp = 127
    weights = DepthwiseWeights.prepare(w, b, weight_zp, 255)
    assert (weights.float_taps is not None) == (past == 0)
    module, args = accumulate_module(
        lambda xv, wv, bv, t: build.depthwise_conv2d(
            xv, wv, bv, t, (1, 1), (0, 0, 0, 0), input_zp, weight_zp
        ),
        x,
        w,
        b,
        (2, 1, 1, channels),
        True,
    )
    got = run_one(module, *args)
    expected = ref.depthwise_conv2d(x, w, b, (1, 1), (0, 0, 0, 0), input_zp, weight_zp)
    np.testing.assert_array_equal(got, expected)
    assert got[0, 0, 0, 0] == INT32_MIN


@pytest.mark.parametrize("elements", [TORCH_MIN_ELEMENTS - 1, TORCH_MIN_ELEMENTS])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "read-only"])
@pytest.mark.parametrize("zero_point", [-128, 127])
def test_centered_into_below_and_at_torch_min_elements(elements, layout, zero_point):
    """x - zero_point in float32, exact for every int8 (|x - zp| <= 255), by numpy's pass
    below `TORCH_MIN_ELEMENTS` and torch's from it; of a transposed view, and of read-only
    memory (a constant's, which torch cannot share: numpy's pass) too."""
    rows, columns = (151, 217) if elements % 2 else (128, 256)  # 32767 and 32768 elements
    assert rows * columns == elements
    rng = np.random.default_rng(elements)
    x = rng.integers(-128, 128, (rows, columns), dtype=np.int8)
    x[0, :2] = (-128, 127)
    if layout == "transposed":
        x = x.T
    if layout == "read-only":
        x.flags.writeable = False
    out = centered_into(np.empty(x.shape, np.float32), x, zero_point)
    np.testing.assert_array_equal(out, x.astype(np.int64) - zero_point)
