"""`dghw.norm` in float64 (`normalized_in_float64`, `FloatNormTail`): the int64 form's integers
where `FloatNormTail.prepare` takes it, against the scalar reference; its bound, where it is
taken and one past; and the lowering's multipliers, which keep compiled norms inside it
(docs/dghw.md, "The device model's float64 norm")."""

from __future__ import annotations

import dghw_reference as ref
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_norm_interpreter import ROWS, make_rows, run_norm

from dg.dialects import dghw
from dg.dialects.common import MAX_NORM_EXTENT, NORM_KINDS
from dg.lowering.dgq_to_dghw.norm import NORM_MULTIPLIER_LIMIT, norm_parameters
from dg.runtime.kernels import norm as norm_kernels
from dg.runtime.kernels.norm import (
    NORM_FLOAT_MIN_ELEMENTS,
    FloatNormTail,
    normalized_fixed_point,
    normalized_in_float64,
)

EXAMPLES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

Z_LIMIT = 1 << 28
"""|Z| < 2^28 for every row (docs/dghw.md)."""


@EXAMPLES
@given(
    st.sampled_from(NORM_KINDS),
    st.sampled_from(ROWS),
    st.sampled_from([1, 2, 7, 32, 192, MAX_NORM_EXTENT]),
    st.sampled_from([-128, 127]) | st.integers(-128, 127),
    st.sampled_from([1, dghw.NORM_MAX_EPS]) | st.integers(1, dghw.NORM_MAX_EPS),
    st.integers(0, 2**32 - 1),
)
def test_the_float64_front_is_the_int64_one(kind, row, n, zp, eps, seed):
    """Z in float64 is the int64 Z on every kind of row, at the longest rows and extreme
    zero points and eps."""
    x = make_rows(np.random.default_rng(seed), (3, n), row)
    exact = normalized_fixed_point(x, kind, zp, eps)
    z = normalized_in_float64(x, kind, zp, eps)
    assert z.dtype == np.float64
    np.testing.assert_array_equal(z, exact.astype(np.float64))


def int64_tail(z: np.ndarray, multiplier, bias, shift: int, output_zp: int) -> np.ndarray:
    """The definition's output of integer Z, in Python integers."""
    out = [
        min(max(((int(v) * m + b + (1 << (shift - 1))) >> shift) + output_zp, -128), 127)
        for v, m, b in zip(z.tolist(), multiplier, bias, strict=True)
    ]
    return np.array(out, np.int8)


def zs_around_the_window(multiplier: int, offset: int, shift: int) -> np.ndarray:
    """Z at both edges of the exact window [-1, 257) of (Z m + offset) 2^-s, 2 either side,
    and at the extremes of Z."""
    edges = [(-offset + k * (1 << shift)) // multiplier for k in (-1, 0, 1, 255, 256, 257)]
    near = [e + d for e in edges for d in range(-2, 3)]
    return np.array([z for z in [*near, -Z_LIMIT + 1, Z_LIMIT - 1, 0] if abs(z) < Z_LIMIT])


def offset_of(bias: int, shift: int, output_zp: int) -> int:
    return bias + (1 << (shift - 1)) + ((output_zp + 128) << shift)


@pytest.mark.parametrize(
    ("multiplier", "shift", "output_zp"), [(2**26 + 1, 44, 127), (-(2**26 + 3), 30, -128)]
)
def test_the_float64_tail_at_its_bound(multiplier, shift, output_zp):
    """2^(s + 8) + |m| + |offset| = 2^53 exactly: taken, and every Z gives the definition's
    output; one more unit of bias: refused."""
    offset = (1 << 53) - (1 << (shift + 8)) - abs(multiplier)
    bias = offset - offset_of(0, shift, output_zp)
    tail = FloatNormTail.prepare([multiplier], [bias], shift, output_zp)
    assert tail is not None
    z = zs_around_the_window(multiplier, offset, shift)
    got = [int(tail.apply(np.array([[float(v)]]))[0, 0]) for v in z]
    want = [int(int64_tail(np.array([v]), [multiplier], [bias], shift, output_zp)[0]) for v in z]
    assert got == want
    assert len(set(want)) > 2  # the window's inside, not only its clamps
    assert FloatNormTail.prepare([multiplier], [bias + 1], shift, output_zp) is None


def test_past_its_bound_the_float64_tail_would_round():
    """Why the bound: with shift 46 the window reaches 2^54, where an odd offset is no float64.
    Z m + offset = 200 * 2^46 - 1 has floor 199 after the shift; in float64 it rounds to 200."""
    shift, multiplier, output_zp, z = 46, 3, -128, 5
    offset = 200 * (1 << shift) - 1 - multiplier * z
    bias = offset - offset_of(0, shift, output_zp)
    assert FloatNormTail.prepare([multiplier], [bias], shift, output_zp) is None
    unchecked = FloatNormTail(
        np.ldexp(np.array([multiplier], np.float64), -shift),
        np.ldexp(np.array([offset], np.float64), -shift),
    )
    want = int64_tail(np.array([z]), [multiplier], [bias], shift, output_zp)
    assert want.tolist() == [199 - 128]
    assert unchecked.apply(np.array([[float(z)]])).tolist() == [[200 - 128]]


@st.composite
def compiled_norms(draw):
    """A norm as the lowering compiles it: weights of at least one output step, biases within
    256 steps."""
    n = draw(st.sampled_from([32, 128, 192]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    out_scale = draw(st.floats(2**-10, 1.0))
    g = draw(st.floats(1.0, 2**16 / np.sqrt(n)))
    gamma = rng.uniform(-1, 1, n) * g * out_scale
    gamma[0] = g * out_scale
    beta = rng.uniform(-256, 256, n) * out_scale
    return n, norm_parameters(1e-5, gamma, beta, draw(st.floats(2**-10, 1.0)), out_scale)


@EXAMPLES
@given(compiled_norms(), st.integers(-128, 127))
def test_compiled_multipliers_stay_below_the_limit_and_take_the_float64_tail(case, output_zp):
    """|m| < `NORM_MULTIPLIER_LIMIT` at the largest such shift, and the float64 form holds."""
    n, p = case
    largest = int(np.abs(p.multiplier.astype(np.int64)).max())
    assert largest < NORM_MULTIPLIER_LIMIT <= 2 * largest + 2 or p.shift == dghw.SHIFT_RANGE[1]
    tail = FloatNormTail.prepare(p.multiplier.tolist(), p.bias.tolist(), p.shift, output_zp)
    assert tail is not None


@pytest.mark.parametrize("kind", NORM_KINDS)
@pytest.mark.parametrize("n", [32, 192])
def test_a_compiled_norm_runs_in_float64_as_the_reference(spy, kind, n):
    """A map of `NORM_FLOAT_MIN_ELEMENTS` and more takes the float64 form, one element fewer
    the int64 one; both give the reference's integers on every kind of row."""
    fronts: list[str] = []
    for name in ("normalized_in_float64", "normalized_fixed_point"):
        spy(norm_kernels, name, lambda *args, name=name: name, into=fronts)
    rng = np.random.default_rng(n)
    p = norm_parameters(1e-5, rng.uniform(0.5, 2, n), rng.uniform(-1, 1, n), 0.05, 0.02)
    rows = -(-NORM_FLOAT_MIN_ELEMENTS // n)  # the fewest rows of at least that many elements
    x = np.concatenate([make_rows(rng, (rows // len(ROWS) + 1, n), row) for row in ROWS])
    parameters = (kind, -3, 5, p.eps, p.multiplier.tolist(), p.bias.tolist(), p.shift)
    for map_rows, front in ((rows, "normalized_in_float64"), (rows - 1, "normalized_fixed_point")):
        fronts.clear()
        np.testing.assert_array_equal(
            run_norm(x[:map_rows], *parameters), ref.norm(x[:map_rows], *parameters)
        )
        assert fronts == [front]
