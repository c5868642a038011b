"""`dghw.norm` in the interpreter against the scalar reference, exactly, on random and
worst-case values; and its precision against the real layer / RMS norm (docs/dghw.md)."""

from __future__ import annotations

import math

import dghw_reference as ref
import dghw_testing as build
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import BytesAttr, DenseArrayBase, IntegerAttr, StringAttr, i32, i64

from dg.dialects import dghw
from dg.dialects.common import MAX_NORM_EXTENT, NORM_KINDS
from dg.lowering.convert_dgq_to_dghw import NormParameterError, norm_parameters
from dg.runtime.interpreter import run_dghw
from dg.runtime.kernels import norm as norm_module_under_test
from dg.runtime.kernels.norm import norm_shift, normalized_fixed_point, root_of_quotient
from dg.runtime.program import torch_quant_ops

pytestmark = pytest.mark.usefixtures("both_pass_forms")

EXAMPLES = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW_EXAMPLES = settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TORCH_EXAMPLES = settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

ROWS = ("random", "extremes", "constant", "one outlier", "narrow")
"""Row shapes: uniform values; only -128 and 127; variance 0 (eps alone); one value far from
the others (the largest |z|, sqrt(n - 1)); values one step apart (a tiny variance)."""


def norm_module(shape, kind, input_zp, output_zp, eps, multiplier, bias, shift):
    def ops(args):
        return [
            dghw.NormOp.build(
                operands=[args[0]],
                properties={
                    "kind": StringAttr(kind),
                    "input_zp": IntegerAttr(input_zp, i32),
                    "output_zp": IntegerAttr(output_zp, i32),
                    "eps": IntegerAttr(eps, i64),
                    "multiplier": build.i32_array(multiplier),
                    "bias": DenseArrayBase(i64, BytesAttr(np.asarray(bias, dtype="<i8").tobytes())),
                    "shift": IntegerAttr(shift, i32),
                },
                result_types=[build.batched(8, shape)],
            )
        ]

    return build.function_module([build.batched(8, shape)], ops)


def make_rows(rng: np.random.Generator, shape: tuple[int, ...], row: str) -> np.ndarray:
    n = shape[-1]
    if row == "random":
        return rng.integers(-128, 128, shape, dtype=np.int8)
    if row == "extremes":
        return rng.choice(np.array([-128, 127], dtype=np.int8), shape)
    if row == "constant":
        return np.broadcast_to(rng.integers(-128, 128, (*shape[:-1], 1)), shape).astype(np.int8)
    if row == "one outlier":
        x = np.full(shape, -128, dtype=np.int8)
        x[..., rng.integers(n)] = 127
        return x
    base = rng.integers(-128, 127, (*shape[:-1], 1))
    return (base + rng.integers(0, 2, shape)).astype(np.int8)


def run_norm(x, kind, input_zp, output_zp, eps, multiplier, bias, shift) -> np.ndarray:
    module = norm_module(x.shape, kind, input_zp, output_zp, eps, multiplier, bias, shift)
    (result,) = run_dghw(module, [x])
    return result


SHORT_ROWS = st.integers(1, 48)


@st.composite
def norm_cases(draw, lengths=SHORT_ROWS):
    n = draw(lengths)
    shape = (draw(st.integers(1, 3)), *([draw(st.integers(1, 3))] if draw(st.booleans()) else []))
    extreme = draw(st.booleans())
    zero_point = st.sampled_from([-128, 127]) if extreme else st.integers(-128, 127)
    multiplier = st.integers(-(2**31), 2**31 - 1)
    bias = st.integers(-(2**61), 2**61)
    return (
        (*shape, n),
        draw(st.sampled_from(NORM_KINDS)),
        draw(st.sampled_from(ROWS)),
        draw(zero_point),
        draw(zero_point),
        draw(st.sampled_from([1, 2**61]) if extreme else st.integers(1, 2**61)),
        draw(st.lists(multiplier, min_size=n, max_size=n)),
        draw(st.lists(bias, min_size=n, max_size=n)),
        draw(st.sampled_from([2, 62]) if extreme else st.integers(2, 62)),
        draw(st.integers(0, 2**32 - 1)),
    )


def check_against_reference(case) -> None:
    shape, kind, row, input_zp, output_zp, eps, multiplier, bias, shift, seed = case
    x = make_rows(np.random.default_rng(seed), shape, row)
    parameters = (kind, input_zp, output_zp, eps, multiplier, bias, shift)
    actual = run_norm(x, *parameters)
    expected = ref.norm(x, *parameters)
    assert actual.dtype == expected.dtype == np.int8
    np.testing.assert_array_equal(actual, expected)


@EXAMPLES
@given(norm_cases())
def test_norm_matches_reference(case):
    check_against_reference(case)


@FEW_EXAMPLES
@given(norm_cases(lengths=st.sampled_from([1000, MAX_NORM_EXTENT])))
def test_long_norm_rows_match_reference(case):
    check_against_reference(case)


@pytest.mark.usefixtures("numpy_parts")
@pytest.mark.parametrize("kind", NORM_KINDS)
def test_norm_over_several_blocks_matches_reference(monkeypatch, kind):
    """A map of more than two `NORM_BLOCK`s (made short here) runs a block of whole rows at a
    time, on two threads too: every row of every kind of row, the last block partial, as
    the reference's; per-channel multipliers and biases line up in every block."""
    monkeypatch.setattr(norm_module_under_test, "NORM_BLOCK", 1 << 10)
    rng = np.random.default_rng(11)
    n = 112
    x = np.concatenate([make_rows(rng, (2, 7, n), row) for row in ROWS], axis=1)
    assert x.size > 2 * norm_module_under_test.NORM_BLOCK
    assert (x.size // n) % (norm_module_under_test.NORM_BLOCK // n) != 0
    multiplier = [int(m) for m in rng.integers(-(2**31), 2**31 - 1, n)]
    bias = [int(b) for b in rng.integers(-(2**40), 2**40, n)]
    parameters = (kind, 3, -5, 1000, multiplier, bias, 40)
    np.testing.assert_array_equal(run_norm(x, *parameters), ref.norm(x, *parameters))


def test_norm_shift_is_exact_on_the_edges():
    """t = max(0, floor((bitlen(D) - 21) / 2)) at every power of two, one below and one
    above, and on random D up to 2^62."""
    powers = [1 << k for k in range(63)]
    edges = [v + d for v in powers for d in (-1, 0, 1) if 0 <= v + d <= 2**62]
    rng = np.random.default_rng(0)
    values = [0, *edges, *rng.integers(0, 2**62, 1000).tolist()]
    expected = [max(0, (int(v).bit_length() - 21) // 2) for v in values]
    assert norm_shift(np.array(values, dtype=np.int64)).tolist() == expected


def test_root_of_quotient_is_isqrt_up_to_2_to_the_42():
    """isqrt exactly on q <= 2^42 (every quotient of a row with V >= 1): next to squares up
    to 2^21 and 2^42 itself; on any larger q up to 2^62 (rows with V = 0, where Z = 0
    whatever R) at most 2^31. Past 2^53 the float64 root can round up: 2^54 - 1 gives
    2^27, not isqrt's 2^27 - 1."""
    roots = [1, 2, 3, 2**20 - 1, 2**20, 2**20 + 1, 2**21 - 1, 2**21]
    near_squares = [r * r + d for r in roots for d in (-1, 0, 1) if 0 <= r * r + d <= 2**42]
    rng = np.random.default_rng(1)
    values = [0, 2**40 + 1, 2**42, *near_squares, *rng.integers(0, 2**42, 1000).tolist()]
    q = np.array(values, dtype=np.int64)
    assert root_of_quotient(q).tolist() == [math.isqrt(v) for v in values]
    large = np.array([2**42 + 1, 2**53 + 1, 2**62 - 1, 2**62], dtype=np.int64)
    assert root_of_quotient(large).max() <= 2**31
    assert root_of_quotient(np.array([2**54 - 1])).tolist() == [2**27] != [math.isqrt(2**54 - 1)]


def real_normalized(x: np.ndarray, kind: str, input_zp: int, eps_steps: float) -> np.ndarray:
    """z in float64: (x - mean) / sqrt(var + eps), or x / sqrt(mean(x^2) + eps), in input steps."""
    centered = x.astype(np.float64) - input_zp
    if kind == "layer":
        centered = centered - centered.mean(axis=-1, keepdims=True)
    return centered / np.sqrt((centered * centered).mean(axis=-1, keepdims=True) + eps_steps)


@EXAMPLES
@given(
    st.sampled_from(NORM_KINDS),
    st.sampled_from(ROWS),
    st.sampled_from([2, 3, 16, 64, 768, MAX_NORM_EXTENT]),
    st.integers(-128, 127),
    st.floats(2**-12, 1.0),
    st.sampled_from([1e-12, 1e-6, 1e-5, 1e-2]),
    st.integers(0, 2**32 - 1),
)
def test_normalized_value_is_within_the_documented_bound(kind, row, n, zp, scale, eps, seed):
    """|Z / 2^21 - z| <= |z| * 1.25 * 2^-20 + 2^-22: the rsqrt, eps and rounding error."""
    x = make_rows(np.random.default_rng(seed), (2, n), row)
    eps_steps = eps / (scale * scale)
    device_eps = max(1, round(n * n * eps_steps * 2**dghw.NORM_EPS_BITS))
    z = real_normalized(x, kind, zp, device_eps / (n * n * 2**dghw.NORM_EPS_BITS))
    device = normalized_fixed_point(x, kind, zp, device_eps) / 2.0**dghw.NORM_Z_BITS
    assert np.all(np.abs(device - z) <= np.abs(z) * 1.25 * 2**-20 + 2**-22)


def torch_norm_then_quantize(x, kind, zp, scale, eps, gamma, beta, out_scale, out_zp):
    """What the frozen model computes: dequantize, dg.Norm's float32 body, quantize."""
    import torch

    from dg.frontend.modules import Norm

    quantize, dequantize = torch_quant_ops()
    module = Norm(x.shape[-1], eps, kind)
    with torch.no_grad():
        module.weight.copy_(torch.tensor(gamma))
        if module.bias is not None:
            module.bias.copy_(torch.tensor(beta))
        y = module(dequantize(torch.tensor(x), scale, zp, -128, 127, torch.int8))
    return quantize(y, out_scale, out_zp, -128, 127, torch.int8).numpy()


@TORCH_EXAMPLES
@given(
    st.sampled_from(NORM_KINDS),
    st.sampled_from(ROWS),
    st.sampled_from([2, 7, 64, 512]),
    st.integers(-128, 127),
    st.floats(2**-12, 0.5),
    st.sampled_from([1e-6, 1e-5, 1e-3]),
    st.sampled_from(["unit", "random", "extreme"]),
    st.integers(0, 2**32 - 1),
)
def test_norm_is_the_float_norm_within_one_step(kind, row, n, zp, scale, eps, weights, seed):
    rng = np.random.default_rng(seed)
    x = make_rows(rng, (3, 2, n), row)
    gamma = {"unit": np.ones(n), "random": rng.uniform(-2, 2, n), "extreme": rng.uniform(-8, 8, n)}[
        weights
    ].astype(np.float32)
    beta = rng.uniform(-1, 1, n).astype(np.float32) if kind == "layer" else np.zeros(n, np.float32)
    # An output grid like an observer's: the range of the results, tight.
    z_max = math.sqrt(n)
    out_scale = float(np.abs(gamma).max() * min(z_max, 4.0) + np.abs(beta).max()) / 127
    out_zp = int(rng.integers(-10, 10))
    parameters = norm_parameters(eps, gamma, beta, scale, out_scale)
    actual = run_norm(
        x,
        kind,
        zp,
        out_zp,
        parameters.eps,
        parameters.multiplier.tolist(),
        parameters.bias.tolist(),
        parameters.shift,
    )
    expected = torch_norm_then_quantize(x, kind, zp, scale, eps, gamma, beta, out_scale, out_zp)
    assert np.abs(actual.astype(int) - expected).max() <= 1


def test_constant_rows_give_the_bias_exactly():
    """Variance 0: A = 0 for every element, so the output is round(beta / s_out) + zp."""
    x = np.full((2, 3, 8), 17, dtype=np.int8)
    beta = np.linspace(-1.0, 1.0, 8)
    parameters = norm_parameters(1e-5, np.full(8, 3.0), beta, 0.05, 0.01)
    out = run_norm(
        x,
        "layer",
        -5,
        4,
        parameters.eps,
        parameters.multiplier.tolist(),
        parameters.bias.tolist(),
        parameters.shift,
    )
    expected = np.clip(np.floor(beta / 0.01 + 0.5) + 4, -128, 127)
    np.testing.assert_array_equal(out, np.broadcast_to(expected, x.shape))


@pytest.mark.parametrize("n", [1, 64, MAX_NORM_EXTENT])
def test_norm_parameters_refuse_a_spread_beyond_the_precision_bound(n):
    """max|gamma| / s_out * sqrt(n) <= 2^16 is where docs/dghw.md proves the one-step promise."""
    out_scale = 0.01
    g_limit = dghw.NORM_MAX_SPREAD / math.sqrt(n)  # output steps
    beta = np.zeros(n)
    at_limit = np.full(n, g_limit * out_scale * (1 - 1e-9))
    norm_parameters(1e-5, at_limit, beta, 0.05, out_scale)
    with pytest.raises(NormParameterError, match="fixed-point rsqrt stays within one step"):
        norm_parameters(1e-5, at_limit * (1 + 1e-6), beta, 0.05, out_scale)


@pytest.mark.parametrize("kind", NORM_KINDS)
def test_norm_sums_stay_in_int64_at_the_longest_row(kind):
    """The bounds docs/dghw.md states: |A| < 2^20, V * 2^20 < 2^60 for n = MAX_NORM_EXTENT."""
    n = MAX_NORM_EXTENT
    x = np.full((1, n), -128, dtype=np.int8)
    x[0, ::2] = 127  # the largest variance; with zp = -128 for rms the largest mean square
    zp = -128 if kind == "rms" else 0
    centered = x.astype(object) - zp
    total, squares = sum(centered[0]), sum(v * v for v in centered[0])
    v = n * squares - (total * total if kind == "layer" else 0)
    assert v * 2**dghw.NORM_EPS_BITS < 2**60
    assert max(abs(n * int(c) - (total if kind == "layer" else 0)) for c in centered[0]) < 2**20
    z = normalized_fixed_point(x, kind, zp, dghw.NORM_MAX_EPS)
    np.testing.assert_array_equal(z, ref_z(x, kind, zp, dghw.NORM_MAX_EPS))


def ref_z(x: np.ndarray, kind: str, zp: int, eps: int) -> np.ndarray:
    """Z in Python integers, as docs/dghw.md states it (the scalar reference only shows Z
    through the int8 output, which saturates)."""
    out = np.zeros(x.shape, dtype=np.int64)
    n = x.shape[-1]
    for r in range(x.shape[0]):
        row = [int(v) - zp for v in x[r]]
        total, squares = sum(row), sum(v * v for v in row)
        a = [n * v - (total if kind == "layer" else 0) for v in row]
        d = (n * squares - (total * total if kind == "layer" else 0)) * 2**20 + eps
        t = max(0, (d.bit_length() + 1) // 2 - 11)
        root = math.isqrt(2**62 // (d >> (2 * t)))
        out[r] = [(ai * root + (2 ** (t - 1) if t else 0)) >> t for ai in a]
    return out
