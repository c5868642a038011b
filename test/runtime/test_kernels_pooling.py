"""Max and average pooling on the device model, against the reference and torch's divisors and
ceil-mode overhang."""

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
    INT32_MAX,
    assert_matches_reference,
    avg_pool_module,
    int8_elements,
    int8_zero_points,
    run_one,
    single_op_module,
    window_extents,
)


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
