"""The fast paths of the sequence ops (matmul, norm, softmax) at the edges of their proofs.

Each fast path is exact only under a static bound (docs/dghw.md); these tests
put values right at each bound, on both sides, where a path chosen one step
too eagerly would round (float32 above 2^24), wrap (int32) or misplace a floor,
and compare against the scalar reference or plain Python integers.
"""

from __future__ import annotations

import dghw_reference as ref
import dghw_testing as build
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from interpreter_cases import assert_matches_reference, run_one, single_op_module
from test_mul_matmul_interpreter import matmul_module
from test_norm_interpreter import norm_module, ref_z

from dg.dialects import dghw
from dg.dialects.common import MAX_NORM_EXTENT, NORM_KINDS
from dg.runtime.kernels.common import INT32_MAX
from dg.runtime.kernels.norm import NormPlan, normalized_fixed_point
from dg.runtime.kernels.sequence import (
    INT8_MATMUL_MAX_K,
    SOFTMAX_BLOCK,
    SOFTMAX_SHORT_ROW,
    MatmulPlan,
    SoftmaxPlan,
)

FEW = settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
EXAMPLES = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))

WORST_PRODUCT = 255 * 255
"""|(-128 - 127) * (-128 - 127)|: the largest centred int8 product."""
SINGLE_GEMM_K = (2**24 - 1) // WORST_PRODUCT  # 258
INT32_K = INT32_MAX // WORST_PRODUCT  # 33025


def matmul_plan(lhs_zp: int, rhs_zp: int, k: int) -> MatmulPlan:
    module = matmul_module((1, 1, k), (1, k, 1), lhs_zp, rhs_zp)
    op = next(o for o in module.walk() if isinstance(o, dghw.MatmulOp))
    return MatmulPlan.prepare(op)


def test_matmul_paths_switch_at_their_bounds() -> None:
    plan = matmul_plan(127, 127, 1)
    assert plan.product_bound == WORST_PRODUCT and plan.chunk == SINGLE_GEMM_K
    assert (INT32_K + 1) * plan.product_bound > INT32_MAX >= INT32_K * plan.product_bound


@pytest.mark.usefixtures("both_gemm_paths")
@FEW
@given(
    st.sampled_from(
        [
            SINGLE_GEMM_K,
            SINGLE_GEMM_K + 1,
            INT8_MATMUL_MAX_K,
            INT8_MATMUL_MAX_K + 1,
            INT32_K,
            INT32_K + 1,
        ]
    ),
    st.sampled_from(["equal", "extremes"]),
    st.data(),
)
def test_matmul_at_the_path_bounds(k, values, data) -> None:
    """K at the last length of each path and one past it, with the worst products, on both
    GEMM paths (with int8 GEMMs, K up to `INT8_MATMUL_MAX_K` takes them).

    "equal": every product is 255 * 255, so the sum is odd above 2^24 at K = 259 (one
    float32 GEMM would round it) and leaves int32 at K = 33026 (int32 would wrap: the
    device must report it). "extremes": random signs, a sum in range on every path.
    """
    lhs_zp, rhs_zp = data.draw(st.sampled_from([(127, 127), (-128, -128), (127, -128)]))
    far_l, far_r = (-128 if lhs_zp == 127 else 127), (-128 if rhs_zp == 127 else 127)
    if values == "equal":
        lhs = np.full((1, 1, k), far_l, dtype=np.int8)
        rhs = np.full((1, k, 2), far_r, dtype=np.int8)
    else:
        lhs = data.draw(arrays(np.int8, (1, 1, k), elements=st.sampled_from([-128, 127])))
        rhs = data.draw(arrays(np.int8, (1, k, 2), elements=st.sampled_from([-128, 127])))
    module = matmul_module(lhs.shape, rhs.shape, lhs_zp, rhs_zp)
    assert_matches_reference(
        lambda: run_one(module, lhs, rhs), lambda: ref.matmul(lhs, rhs, lhs_zp, rhs_zp)
    )


@pytest.mark.parametrize("kind", NORM_KINDS)
@pytest.mark.parametrize("zp", [-128, 127])
@pytest.mark.parametrize("eps", [1, dghw.NORM_MAX_EPS])
@pytest.mark.parametrize("row", ["constant", "alternating", "one outlier"])
def test_normalized_value_at_the_largest_in_place_terms(kind, zp, eps, row) -> None:
    """Z = (n R x + (h - Σx R)) >> t at its largest terms: n = 4096, |x - zp| = 255,
    and, for constant rows with eps = 1, t = 0 and R = 2^31 (V = 0)."""
    n = MAX_NORM_EXTENT
    far = -128 if zp == 127 else 127
    x = np.full((3, n), far, dtype=np.int8)
    if row == "alternating":
        x[:, ::2] = zp
    elif row == "one outlier":
        x[:, 0] = zp
    x[2] = x[2, ::-1]
    np.testing.assert_array_equal(normalized_fixed_point(x, kind, zp, eps), ref_z(x, kind, zp, eps))


@FEW
@given(
    st.sampled_from(NORM_KINDS),
    st.sampled_from([-128, 0, 127]),
    st.sampled_from([2, 40, 46, 60, 61, 62]),
    st.sampled_from([-(2**61), 0, 2**61]),
    st.sampled_from([-(2**31), 2**31 - 1]),
    st.integers(0, 2**32 - 1),
)
def test_norm_output_zero_point_folded_or_not(kind, output_zp, shift, bias, multiplier, seed):
    """The output zero point is folded into the offset only when int64 holds it (large
    shifts with a zero point do not); both forms match the reference at the extremes."""
    n = 16
    rng = np.random.default_rng(seed)
    x = rng.choice(np.array([-128, 127], dtype=np.int8), (2, 3, n))
    x[1] = rng.integers(-128, 128, (3, n), dtype=np.int8)
    parameters = (kind, -128, output_zp, 1, [multiplier] * n, [bias] * n, shift)
    module = norm_module(x.shape, *parameters)
    op = next(o for o in module.walk() if isinstance(o, dghw.NormOp))
    plan = NormPlan.prepare(op)
    folded = (1 << 59) + abs(bias + (1 << (shift - 1)) + (output_zp << shift)) < 2**63
    assert plan.output_zp == (0 if folded else output_zp)
    np.testing.assert_array_equal(run_one(module, x), ref.norm(x, *parameters))


@st.composite
def quotients_near_an_integer(draw):
    """Rows [e, r1, r2] whose quotient (512 e + S) / (2 S), S = e + r1 + r2, is an
    integer k, or 1 / (2 S) below or above one: the closest a floor can be to k."""
    k = draw(st.integers(1, 256))
    offset = draw(st.sampled_from([-1, 0, 1]))
    # 512 e = (2k - 1) S + offset: S must be (2k - 1)^-1 * (-offset) mod 512 for e to be
    # an integer; the largest sums (near 2^31) make 1 / (2 S) the smallest.
    inverse = pow(2 * k - 1, -1, 512)
    residue = (-offset * inverse) % 512
    total = draw(st.integers(2**30, INT32_MAX - 512)) // 512 * 512 + residue
    e = ((2 * k - 1) * total + offset) // 512
    assert 512 * e == (2 * k - 1) * total + offset and 0 <= e <= total
    r1 = draw(st.integers(0, total - e))
    return e, r1, total - e - r1


@pytest.mark.parametrize("extent", [3, SOFTMAX_SHORT_ROW + 1], ids=["across", "along"])
@EXAMPLES
@given(quotients_near_an_integer())
@example(entries=(418696110, 0, 1622945874))  # integer quotients 53 and 111 that float64
@example(entries=(912592317, 1, 1201648706))  # rounds below without `SOFTMAX_NUDGE`
def test_softmax_float64_division_keeps_the_floor(extent, entries) -> None:
    """Rows whose three entries put a quotient at or 1 / (2 sum) from an integer, in rows
    short enough to go across (`quotients_across_rows`) and one element too long for it
    (the rest read the table's entry 0 at index 255)."""
    table = np.zeros(256, dtype=np.int64)
    table[:3] = entries
    plan = SoftmaxPlan(1, table, table.astype(np.float64))
    row = [127, 126, 125] + [-128] * (extent - 3)  # max - x = 0, 1, 2, then 255
    e, total = [*entries] + [0] * (extent - 3), sum(entries)
    expected = [min(max((512 * v + total) // (2 * total) - 128, -128), 127) for v in e]
    rows = np.array([row, row[::-1]], dtype=np.int8)
    assert plan.quotients_in_float64(rows).tolist() == [expected, expected[::-1]]


@pytest.mark.parametrize("extent", [SOFTMAX_SHORT_ROW, SOFTMAX_SHORT_ROW + 1])
@pytest.mark.parametrize("axis", [2, 3])
def test_softmax_short_and_long_rows_of_an_attention(extent, axis) -> None:
    """An attention's scores [B, H, S, S] as the matmul's transposed view gives them, rows of
    `SOFTMAX_SHORT_ROW` elements (across the rows) and one more (along them), with rows of
    one value and of one dominant value: every element as the reference's."""
    rng = np.random.default_rng(extent + axis)
    memory = rng.integers(-128, 128, (3, extent, 2, extent), dtype=np.int8)
    x = memory.transpose(0, 2, 1, 3)
    x[0, 0, 0], x[1, 1, :, 0] = 7, -128
    x[1, 1, 3, 0] = 127
    table = np.round(2**23 * np.exp(-np.arange(256) * 0.05)).astype(np.int32)
    module = single_op_module([x], lambda args: build.softmax(args[0], table, axis))
    np.testing.assert_array_equal(run_one(module, x), ref.softmax(x, table, axis))


def test_softmax_takes_the_int64_path_unless_sums_are_in_range() -> None:
    x = np.zeros((1, 4), dtype=np.int8)
    for table, fast in (([1] * 256, True), ([0] * 256, False), ([0] + [7] * 255, False)):
        entries = np.resize(np.array(table, dtype=np.int32), 256)
        module = single_op_module([x], lambda args, t=entries: build.softmax(args[0], t, 1))
        op = next(o for o in module.walk() if isinstance(o, dghw.SoftmaxOp))
        assert (SoftmaxPlan.prepare(op).table_f64 is not None) == fast


@FEW
@given(st.sampled_from([1, 2, 3]), st.integers(0, 2**32 - 1))
def test_softmax_rows_walked_in_memory_order(axis, seed) -> None:
    """An attention-like input: a transposed view whose rows along `axis` lie contiguous
    in memory (or, for other axes, strided), each walked in memory order; the result keeps
    the view's axis order and matches the reference."""
    rng = np.random.default_rng(seed)
    memory = rng.integers(-128, 128, (2, 3, 5, 7), dtype=np.int8)
    x = memory.transpose(0, 2, 3, 1)  # [2, 5, 7, 3]: axis 2 contiguous in memory
    table = np.resize(np.array([2**20, 2**19, 3, 0, 7], dtype=np.int32), 256)
    module = single_op_module([x], lambda args: build.softmax(args[0], table, axis))
    op = next(o for o in module.walk() if isinstance(o, dghw.SoftmaxOp))
    assert SoftmaxPlan.prepare(op).table_f64 is not None
    np.testing.assert_array_equal(run_one(module, x), ref.softmax(x, table, axis))


@pytest.mark.usefixtures("numpy_parts")
@pytest.mark.parametrize("extra, blocked", [(0, False), (1, True)])
def test_softmax_rows_in_blocks(extra, blocked) -> None:
    """Just within two blocks (one pass) and past them (blocks of whole rows, the last one
    shorter, split over two threads too): every row as the reference's, rows of one value
    and one dominant value too."""
    rows = 2 * SOFTMAX_BLOCK // 197 + extra
    rng = np.random.default_rng(rows)
    x = rng.integers(-128, 128, (1, rows, 197), dtype=np.int8)
    x[0, 0], x[0, -1, :] = 5, -128
    x[0, -1, 3] = 127
    table = np.round(2**23 * np.exp(-np.arange(256) * 0.05)).astype(np.int32)
    module = single_op_module([x], lambda args: build.softmax(args[0], table, 2))
    assert (x.size > 2 * SOFTMAX_BLOCK) == blocked
    np.testing.assert_array_equal(run_one(module, x), ref.softmax(x, table, 2))
