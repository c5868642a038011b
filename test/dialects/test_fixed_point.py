"""dg.dialects.fixed_point: quantize_multiplier against exact rational arithmetic
(fractions.Fraction), reciprocal_scale against the scalar TOSA reference."""

from __future__ import annotations

import math
from fractions import Fraction

import dghw_reference as ref
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dg.dialects.fixed_point import (
    MAX_SHIFT,
    MIN_SHIFT,
    QuantMathError,
    quantize_multiplier,
    reciprocal_scale,
)

NORMALIZED_LOW, NORMALIZED_HIGH = 2**30, 2**31


def assert_nearest_encoding(factor: float, multiplier: int, shift: int) -> None:
    """(multiplier, shift) is a legal encoding of `factor` and the nearest one at that shift."""
    assert MIN_SHIFT <= shift <= MAX_SHIFT
    assert 0 <= multiplier < NORMALIZED_HIGH
    # Normalized (31 significant bits) unless the shift is pinned at its maximum.
    if shift < MAX_SHIFT:
        assert multiplier >= NORMALIZED_LOW
    exact = Fraction(factor) * 2**shift
    assert abs(multiplier - exact) <= Fraction(1, 2)


@pytest.mark.parametrize(
    "factor",
    [
        1.0,
        0.5,
        0.3,
        1 / 3,
        2.0**-20,
        1 - 2.0**-53,  # mantissa just below 1: rounds up to 2^31, must renormalize
        1 - 2.0**-33,
        2.0**28,
        (2**31 - 1) / 4,  # the largest encodable factor: multiplier 2^31 - 1 at shift 2
        2.0**-31,  # shift 61
        2.0**-32,  # shift 62, still normalized
        2.0**-33,  # shift pinned: multiplier 2^29
        3e-19,
        2.0**-62,
        2.0**-63,  # multiplier 0.5 rounds to 0 (half to even)
        2.0**-70,
        5e-324,  # the smallest subnormal double
    ],
)
def test_edge_cases_are_nearest_encodings(factor: float) -> None:
    multiplier, shift = quantize_multiplier(factor)
    assert multiplier.dtype == np.int32 and shift.dtype == np.int32
    assert_nearest_encoding(factor, int(multiplier), int(shift))


def test_exact_powers_of_two() -> None:
    multiplier, shift = quantize_multiplier([1.0, 0.25, 2.0**10, 2.0**-32])
    assert multiplier.tolist() == [2**30] * 4
    assert shift.tolist() == [30, 32, 20, 62]


def test_renormalizes_when_the_multiplier_rounds_up_to_2_31() -> None:
    multiplier, shift = quantize_multiplier(1 - 2.0**-40)
    assert (int(multiplier), int(shift)) == (2**30, 30)


def test_tiny_factors_keep_the_largest_shift() -> None:
    multiplier, shift = quantize_multiplier([2.0**-40, 2.0**-64])
    assert shift.tolist() == [MAX_SHIFT, MAX_SHIFT]
    assert multiplier.tolist() == [2**22, 0]


def test_largest_encodable_factor() -> None:
    multiplier, shift = quantize_multiplier((2**31 - 1) / 4)
    assert (int(multiplier), int(shift)) == (2**31 - 1, MIN_SHIFT)


# Just below 2^29 the nearest multiplier at shift 2 would be 2^31, one too many bits.
@pytest.mark.parametrize("factor", [2.0**29, 2.0**29 - 2.0**-23, (2**31 - 0.5) / 4, 1e12])
def test_factors_too_large_raise(factor: float) -> None:
    with pytest.raises(QuantMathError, match="too large"):
        quantize_multiplier(factor)


@pytest.mark.parametrize("factor", [0.0, -0.5, math.nan, math.inf])
def test_non_positive_or_non_finite_factors_raise(factor: float) -> None:
    with pytest.raises(QuantMathError, match="finite and positive"):
        quantize_multiplier([0.5, factor])


def test_vectorized_over_channels_keeps_shape() -> None:
    factors = np.array([[0.1, 0.2, 0.3], [2.0**-40, 7.0, 1e-3]])
    multiplier, shift = quantize_multiplier(factors)
    assert multiplier.shape == shift.shape == factors.shape
    for f, m, s in zip(factors.ravel(), multiplier.ravel(), shift.ravel(), strict=True):
        assert_nearest_encoding(float(f), int(m), int(s))


@given(st.floats(min_value=2.0**-80, max_value=(2**31 - 1) / 4))
def test_every_encodable_factor_is_encoded_to_nearest(factor: float) -> None:
    multiplier, shift = quantize_multiplier(factor)
    assert_nearest_encoding(factor, int(multiplier), int(shift))


@given(
    st.floats(min_value=2.0**-40, max_value=2.0**8),
    st.integers(min_value=-(2**31), max_value=2**31 - 1),
)
def test_tosa_rescale_with_the_encoding_rounds_like_exact_arithmetic(
    factor: float, value: int
) -> None:
    """TOSA's (v * m + 2^(s-1)) >> s lands within one unit of v * factor.

    The multiplier's relative error is below 2^-31, so this holds while the
    result stays well inside int32 (as every rescale onto i8 or i32 does).
    """
    assume(abs(value * factor) < 2**30)
    multiplier, shift = (int(x) for x in quantize_multiplier(factor))
    device = (value * multiplier + (1 << (shift - 1))) >> shift
    exact = Fraction(value) * Fraction(factor)
    assert abs(device - exact) <= 1


INT32_MAX = 2**31 - 1
EXAMPLES = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@EXAMPLES
@given(st.one_of(st.integers(1, 2**16), st.integers(1, INT32_MAX)))
def test_reciprocal_scale_matches_reference(divisor):
    multiplier, shift = reciprocal_scale(np.array([divisor]))
    assert (int(multiplier[0]), int(shift[0])) == ref.reciprocal_scale(divisor)


@EXAMPLES
@given(st.integers(1, 2**16), st.integers(-(2**29) + 1, 2**29 - 1))
def test_reciprocal_scale_rounds_half_away_from_zero(divisor, acc):
    # docs/dghw.md: for |acc| < 2^29 the TOSA reciprocal rescale is the exact quotient
    # rounded half away from zero.
    multiplier, shift = ref.reciprocal_scale(divisor)
    quotient, remainder = divmod(abs(acc), divisor)
    rounded = quotient + (2 * remainder >= divisor)
    assert ref.apply_scale_32(acc, multiplier, shift) == (rounded if acc >= 0 else -rounded)
