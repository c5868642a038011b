"""`dghw.mul` and `dghw.matmul` in the interpreter against the scalar reference,
on random and extreme values."""

from __future__ import annotations

import dghw_reference as ref
import dghw_testing as build
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from interpreter_cases import needs_exact_int8_gemm
from xdsl.dialects.builtin import IntegerAttr, i32

from dg.dialects import dghw
from dg.runtime.int8_gemm import int8_gemms
from dg.runtime.interpreter import run_dghw
from dg.runtime.kernels import sequence

pytestmark = pytest.mark.usefixtures("both_pass_forms")

EXAMPLES = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def mul_module(x_shape: tuple[int, ...], constant: np.ndarray, input_zp: int, constant_zp: int):
    result_type = build.batched(32, x_shape)

    def ops(args):
        c = build.constant(constant)
        product = dghw.MulOp.build(
            operands=[args[0], c.result],
            properties={
                "input_zp": IntegerAttr(input_zp, i32),
                "constant_zp": IntegerAttr(constant_zp, i32),
            },
            result_types=[result_type],
        )
        return [c, product]

    return build.function_module([build.batched(8, x_shape)], ops)


@st.composite
def mul_cases(draw, extreme: bool = False):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=2, max_size=4)))
    # The constant: extent 1 on the batch axis, each other axis 1 (broadcast) or the input's.
    c_shape = (1, *(draw(st.sampled_from([1, d])) for d in shape[1:]))
    values = st.sampled_from([-128, 127]) if extreme else st.integers(-128, 127)
    x = draw(arrays(np.int8, shape, elements=values))
    c = draw(arrays(np.int8, c_shape, elements=values))
    zero_points = st.sampled_from([-128, 127]) if extreme else st.integers(-128, 127)
    return x, c, draw(zero_points), draw(zero_points)


@EXAMPLES
@given(st.one_of(mul_cases(), mul_cases(extreme=True)))
def test_mul_matches_reference(case) -> None:
    x, c, input_zp, constant_zp = case
    (actual,) = run_dghw(mul_module(x.shape, c, input_zp, constant_zp), [x])
    expected = ref.mul(x, c, input_zp, constant_zp)
    assert actual.dtype == expected.dtype == np.int32
    np.testing.assert_array_equal(actual, expected)


def test_mul_extreme_product_is_exact() -> None:
    """(-128 - 127) * (-128 - 127) = 65025, the largest magnitude the op produces."""
    x = np.full((2, 3), -128, dtype=np.int8)
    c = np.full((1, 3), -128, dtype=np.int8)
    (actual,) = run_dghw(mul_module(x.shape, c, 127, 127), [x])
    np.testing.assert_array_equal(actual, np.full((2, 3), 65025, dtype=np.int32))


# -- dghw.matmul -------------------------------------------------------------------------


def matmul_module(lhs_shape, rhs_shape, lhs_zp: int, rhs_zp: int):
    result_type = build.batched(32, (*lhs_shape[:-1], rhs_shape[-1]))
    arg_types = [build.batched(8, lhs_shape), build.batched(8, rhs_shape)]

    def ops(args):
        properties = {"lhs_zp": IntegerAttr(lhs_zp, i32), "rhs_zp": IntegerAttr(rhs_zp, i32)}
        return [
            dghw.MatmulOp.build(operands=args, properties=properties, result_types=[result_type])
        ]

    return build.function_module(arg_types, ops)


@st.composite
def matmul_cases(draw, extreme: bool = False):
    lead = draw(st.lists(st.integers(1, 3), min_size=1, max_size=2))
    m, k, n = (draw(st.integers(1, 5)) for _ in range(3))
    values = st.sampled_from([-128, 127]) if extreme else st.integers(-128, 127)
    lhs = draw(arrays(np.int8, (*lead, m, k), elements=values))
    rhs = draw(arrays(np.int8, (*lead, k, n), elements=values))
    zero_points = st.sampled_from([-128, 127]) if extreme else st.integers(-128, 127)
    return lhs, rhs, draw(zero_points), draw(zero_points)


@pytest.fixture(scope="module")
def int8_matmuls_of_any_size():
    """The int8 GEMMs for this module's small matrices too (`INT8_MATMUL_MIN_MACS`): their
    arithmetic does not depend on the size (module-scoped: hypothesis's tests)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sequence, "INT8_MATMUL_MIN_MACS", 0)
        yield


@pytest.mark.usefixtures("both_gemm_paths", "int8_matmuls_of_any_size")
@EXAMPLES
@given(st.one_of(matmul_cases(), matmul_cases(extreme=True)))
def test_matmul_matches_reference(case) -> None:
    lhs, rhs, lhs_zp, rhs_zp = case
    module = matmul_module(lhs.shape, rhs.shape, lhs_zp, rhs_zp)
    (actual,) = run_dghw(module, [lhs, rhs])
    expected = ref.matmul(lhs, rhs, lhs_zp, rhs_zp)
    assert actual.dtype == expected.dtype == np.int32
    np.testing.assert_array_equal(actual, expected)


@pytest.mark.usefixtures("both_gemm_paths", "int8_matmuls_of_any_size")
def test_matmul_long_reduction_is_exact() -> None:
    """K = 600 worst-case terms (255 * 255 each) exceed what one float32 GEMM keeps exact."""
    k = 600
    lhs = np.full((1, 1, k), -128, dtype=np.int8)
    rhs = np.full((1, k, 1), -128, dtype=np.int8)
    (actual,) = run_dghw(matmul_module(lhs.shape, rhs.shape, 127, 127), [lhs, rhs])
    assert int(actual[0, 0, 0]) == k * 255 * 255


@pytest.mark.usefixtures("both_gemm_paths")
def test_matmul_of_attention_views_matches_reference() -> None:
    """Q @ K^T and P @ V of 2 items, 3 heads, S = 128, D = 64, the operands strided views
    of [B, S, H, D] maps as attention makes them (per-head transposes)."""
    rng = np.random.default_rng(3)
    q, k, v = (rng.integers(-128, 128, (2, 128, 3, 64), dtype=np.int8) for _ in range(3))
    p = rng.integers(-128, 128, (2, 3, 128, 128), dtype=np.int8)
    cases = (
        (q.transpose(0, 2, 1, 3), k.transpose(0, 2, 3, 1), 5, -7),
        (p, v.transpose(0, 2, 1, 3), -128, 3),
    )
    for lhs, rhs, lhs_zp, rhs_zp in cases:
        module = matmul_module(lhs.shape, rhs.shape, lhs_zp, rhs_zp)
        (actual,) = run_dghw(module, [lhs, rhs])
        np.testing.assert_array_equal(actual, ref.matmul(lhs, rhs, lhs_zp, rhs_zp))


@needs_exact_int8_gemm
@pytest.mark.parametrize("macs", [sequence.INT8_MATMUL_MIN_MACS - 1, sequence.INT8_MATMUL_MIN_MACS])
def test_int8_matmuls_from_their_least_size(spy, macs) -> None:
    """With int8 GEMMs enabled, matrices of fewer than `INT8_MATMUL_MIN_MACS` multiply-adds
    take the float32 GEMM, from it on the int8 GEMMs; both give the reference's sums."""
    calls = spy(sequence, "int8_batched_gemm")
    k = macs if macs % 2 else macs // 2  # M = 1, N = 1 or 2: M * K * N = macs
    n = macs // k
    rng = np.random.default_rng(macs)
    lhs = rng.integers(-128, 128, (2, 1, k), dtype=np.int8)
    rhs = rng.integers(-128, 128, (2, k, n), dtype=np.int8)
    with int8_gemms(True):
        (actual,) = run_dghw(matmul_module(lhs.shape, rhs.shape, 3, -4), [lhs, rhs])
    np.testing.assert_array_equal(actual, ref.matmul(lhs, rhs, 3, -4))
    assert len(calls) == (macs >= sequence.INT8_MATMUL_MIN_MACS)
