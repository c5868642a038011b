"""int8 GEMMs (`dg.runtime.int8_gemm`): torch's `_int_mm` at the reduction bound and one past
it, the layouts it reads right, the worst-case check that turns the path off where a kernel
saturates, and the conv2d / fully_connected weights that use it."""

from __future__ import annotations

import itertools

import dghw_reference as ref
import dghw_testing as build
import numpy as np
import pytest
import torch
from interpreter_cases import needs_exact_int8_gemm, run_one
from test_float_gemm import exact_product
from xdsl.utils.exceptions import InterpretationError

from dg.runtime import int8_gemm as int8_module
from dg.runtime.exact import FLOAT_INT8_GEMM_MACS
from dg.runtime.int8_gemm import (
    INT8_GEMM_MAX_K,
    gemm_operand,
    int8_batched_gemm,
    int8_gemm,
    int8_gemm_is_exact,
    int8_gemms,
    int8_gemms_enabled,
    worst_case_operands,
)
from dg.runtime.kernels import gemm_weights as gemm_weights_module
from dg.runtime.kernels.gemm_weights import (
    FLOAT32_INT8_MAX_K,
    Int8GemmWeights,
    small_float_matrix,
)
from dg.runtime.threads import one_intra_op_thread, torch_threads


@needs_exact_int8_gemm
@pytest.mark.parametrize("past", [0, 1])
def test_worst_case_sums_at_the_longest_reduction_and_one_past(past):
    """K = `INT8_GEMM_MAX_K` terms of -128 * -128 sum to 2^31 - 2^14, exact in int32; one
    term more makes 2^31, which int32 does not hold."""
    lhs, rhs = worst_case_operands(3, INT8_GEMM_MAX_K + past, 3)
    assert exact_product(lhs, rhs).max() == (INT8_GEMM_MAX_K + past) * 128 * 128
    same = np.array_equal(int8_gemm(lhs, torch.from_numpy(rhs)), exact_product(lhs, rhs))
    assert same == (not past)


@needs_exact_int8_gemm
@pytest.mark.parametrize("threads", [1, 2])
def test_random_sums_are_exact_on_each_thread_count(threads):
    """A GEMM big enough to take the caller's threads (`threads_for`) gives the same sums."""
    rng = np.random.default_rng(threads)
    lhs = rng.integers(-128, 128, (3000, 700), dtype=np.int8)
    rhs = rng.integers(-128, 128, (700, 40), dtype=np.int8)
    with torch_threads(threads):
        sums = int8_gemm(lhs, torch.from_numpy(rhs))
    np.testing.assert_array_equal(sums, exact_product(lhs, rhs))


@needs_exact_int8_gemm
def test_every_layout_of_small_matrices_is_read_right():
    """Every 2-D stride pair of matrices of 1..3 rows and columns, as either operand, through
    `gemm_operand`: torch 2.13 read a [1, 2] matrix of strides (1, 1) as garbage."""
    rng = np.random.default_rng(0)
    base = torch.from_numpy(rng.integers(-128, 128, 64, dtype=np.int8))
    for rows, columns, row_stride, column_stride in itertools.product(
        (1, 2, 3), (1, 2, 3), (1, 2, 3, 4), (1, 2, 3, 4)
    ):
        matrix = base.as_strided((rows, columns), (row_stride, column_stride))
        left = torch.from_numpy(rng.integers(-128, 128, (4, rows), dtype=np.int8))
        right = torch.from_numpy(rng.integers(-128, 128, (columns, 4), dtype=np.int8))
        for lhs, rhs in ((matrix, right), (left, matrix)):
            got = torch._int_mm(gemm_operand(lhs), gemm_operand(rhs)).numpy()
            np.testing.assert_array_equal(got, exact_product(lhs.numpy(), rhs.numpy()))


def test_gemm_operand_copies_only_the_layouts_it_must():
    matrix = torch.zeros((3, 5), dtype=torch.int8)
    transposed = matrix.t()
    assert gemm_operand(matrix) is matrix
    assert gemm_operand(transposed) is transposed
    odd = torch.zeros(2, dtype=torch.int8).as_strided((1, 2), (1, 1))
    copied = gemm_operand(odd)
    assert copied.stride() == (2, 1) and copied.data_ptr() != odd.data_ptr()


def saturating_int_mm(lhs: torch.Tensor, rhs: torch.Tensor) -> torch.Tensor:
    """An int8 GEMM as u8 x s8 instructions without VNNI compute it: x + 128 (u8) times w,
    each pair of adjacent products summed in int16 with saturation, then the 128 * sum w
    correction in int32."""
    shifted = lhs.numpy().astype(np.int64) + 128
    w = rhs.numpy().astype(np.int64)
    k = shifted.shape[1] + shifted.shape[1] % 2
    shifted = np.pad(shifted, ((0, 0), (0, k - shifted.shape[1])))
    w = np.pad(w, ((0, k - w.shape[0]), (0, 0)))
    products = shifted[:, :, None] * w[None, :, :]
    pairs = np.clip(products[:, 0::2] + products[:, 1::2], -(1 << 15), (1 << 15) - 1)
    return torch.from_numpy((pairs.sum(axis=1) - 128 * w.sum(axis=0)).astype(np.int32))


def test_a_saturating_int8_gemm_fails_the_worst_cases(monkeypatch):
    """With a kernel that saturates int16 pair sums, the check fails, and the path cannot be
    enabled; the same kernel is exact on small operands, so only worst cases show it."""
    small = np.array([[1, 2], [3, 4]], dtype=np.int8)
    sums = saturating_int_mm(torch.from_numpy(small), torch.from_numpy(small))
    np.testing.assert_array_equal(sums.numpy(), exact_product(small, small))
    monkeypatch.setattr(int8_module, "WORST_CASE_SHAPES", ((4, 64, 5),))
    monkeypatch.setattr(torch, "_int_mm", saturating_int_mm)
    assert not int8_gemm_is_exact.__wrapped__()
    monkeypatch.setattr(int8_module, "int8_gemm_is_exact", lambda: False)
    with pytest.raises(RuntimeError, match="not exact on this CPU"):
        with int8_gemms(True):
            pass


def test_the_callers_choice_overrides_the_cpus():
    assert int8_gemms_enabled() == int8_module.int8_gemm_is_fast_and_exact()
    with int8_gemms(False):
        assert not int8_gemms_enabled()
    if int8_gemm_is_exact():
        with int8_gemms(True):
            assert int8_gemms_enabled()


class CountedInt8Gemm:
    """`int8_gemm` as the weights kernels call it, counting the calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, lhs: np.ndarray, rhs: torch.Tensor) -> np.ndarray:
        self.calls += 1
        return int8_gemm(lhs, rhs)


def conv_case(weight_zp: int, pad: tuple[int, int, int, int], stride: tuple[int, int]):
    """A 3x3 conv of 64 channels on a 28x28 map of two items, its module and reference."""
    rng = np.random.default_rng(weight_zp + sum(pad))
    x = rng.integers(-128, 128, (2, 28, 28, 64), dtype=np.int8)
    w = rng.integers(-128, 128, (64, 3, 3, 64), dtype=np.int8)
    b = rng.integers(-(1 << 20), 1 << 20, 64, dtype=np.int32)
    input_zp = -7
    oh = (28 + pad[0] + pad[1] - 3) // stride[0] + 1
    ow = (28 + pad[2] + pad[3] - 3) // stride[1] + 1

    def ops(args):
        wc, bc = build.constant(w), build.constant(b)
        out = build.batched(32, (2, oh, ow, 64))
        conv = build.conv2d(args[0], wc.result, bc.result, out, stride, pad, input_zp, weight_zp)
        return [wc, bc, conv]

    module = build.function_module([build.batched(8, x.shape)], ops)
    return module, x, ref.conv2d(x, w, b, stride, pad, input_zp, weight_zp)


@needs_exact_int8_gemm
@pytest.mark.parametrize("enabled", [False, True])
@pytest.mark.parametrize(("pad", "stride"), [((1, 1, 1, 1), (1, 1)), ((0, 1, 2, 0), (2, 1))])
def test_conv2d_takes_the_int8_gemm_where_enabled(monkeypatch, enabled, pad, stride):
    """With int8 GEMMs, a conv2d of symmetric weights reads its int8 input padded with the
    input zero point, and its sums with the folded bias are the reference's."""
    counted = CountedInt8Gemm()
    monkeypatch.setattr(gemm_weights_module, "int8_gemm", counted)
    module, x, expected = conv_case(0, pad, stride)
    with int8_gemms(enabled):
        np.testing.assert_array_equal(run_one(module, x), expected)
    assert counted.calls == int(enabled)


@needs_exact_int8_gemm
def test_weights_with_a_zero_point_take_the_float32_gemm(monkeypatch):
    counted = CountedInt8Gemm()
    monkeypatch.setattr(gemm_weights_module, "int8_gemm", counted)
    module, x, expected = conv_case(3, (1, 1, 1, 1), (1, 1))
    with int8_gemms(True):
        np.testing.assert_array_equal(run_one(module, x), expected)
    assert counted.calls == 0


@pytest.mark.parametrize("past", [0, 1])
def test_int8_weights_up_to_the_longest_reduction(past):
    """`Int8GemmWeights` take K up to `INT8_GEMM_MAX_K`; one row more, the float32 GEMM's
    splits do."""
    weight = np.ones((INT8_GEMM_MAX_K + past, 2), dtype=np.int8)
    prepared = Int8GemmWeights.prepare(weight, 0, np.zeros(2, np.int32), input_zp=5)
    assert (prepared is None) == bool(past)
    if prepared is not None:
        np.testing.assert_array_equal(prepared.folded, [-5 * INT8_GEMM_MAX_K] * 2)


@needs_exact_int8_gemm
def test_the_folded_bias_may_leave_int32_and_the_sum_is_still_checked():
    """|bias| near 2^31 with input_zp -128: the folded bias leaves int32, so the add runs in
    int64 and the result's range is checked: an accumulator in range comes out exact, one
    out of range is reported."""
    w = np.full((4, 1000), 127, dtype=np.int8)
    b = np.array([(1 << 31) - 1, -(1 << 31), 5, -5], dtype=np.int32)
    prepared = Int8GemmWeights.prepare(np.ascontiguousarray(w.T), 0, b, input_zp=-128)
    assert prepared is not None and prepared.may_overflow
    x = np.full((1, 1000), -128, dtype=np.int8)  # x - input_zp = 0: the bias alone
    op = build.constant(b)
    np.testing.assert_array_equal(prepared.accumulate(x, op, 1), b[None])
    with pytest.raises(InterpretationError, match="overflows int32"):
        prepared.accumulate(np.full((1, 1000), 1, dtype=np.int8), op, 1)


@needs_exact_int8_gemm
def test_batched_gemm_reads_strided_heads_in_place():
    """Per-head views of [B, S, H, D] maps (Q and K^T): the same sums as the exact product."""
    rng = np.random.default_rng(1)
    q = rng.integers(-128, 128, (2, 50, 3, 16), dtype=np.int8)
    k = rng.integers(-128, 128, (2, 50, 3, 16), dtype=np.int8)
    lhs, rhs = q.transpose(0, 2, 1, 3), k.transpose(0, 2, 3, 1)
    np.testing.assert_array_equal(int8_batched_gemm(lhs, rhs), exact_product(lhs, rhs))


@needs_exact_int8_gemm
@pytest.mark.parametrize("threads", [1, 2])
def test_batched_gemm_split_over_the_callers_threads(threads):
    """Attention-sized heads at batch 8 (`run_in_parts`: with 2 caller threads, half the
    matrices on each, each GEMM on one thread): the exact product."""
    rng = np.random.default_rng(threads)
    lhs = rng.integers(-128, 128, (8, 4, 128, 64), dtype=np.int8)
    rhs = rng.integers(-128, 128, (8, 4, 64, 128), dtype=np.int8)
    with torch_threads(threads), one_intra_op_thread():
        sums = int8_batched_gemm(lhs, rhs)
    np.testing.assert_array_equal(sums, exact_product(lhs, rhs))


def test_torchs_private_int8_gemm_is_what_dg_relies_on():
    """`torch._int_mm` (private in torch 2.13): int8 [M, K] x int8 [K, N] into a given int32
    [M, N] tensor, returned as that tensor, exact on small values on any CPU."""
    lhs = torch.tensor([[1, -2, 3]], dtype=torch.int8)
    rhs = torch.tensor([[4], [5], [-6]], dtype=torch.int8)
    out = torch.empty((1, 1), dtype=torch.int32)
    result = torch._int_mm(lhs, rhs, out=out)
    assert result.data_ptr() == out.data_ptr() and result.dtype == torch.int32
    assert out.item() == 1 * 4 - 2 * 5 - 3 * 6


@pytest.mark.parametrize(
    ("capabilities", "fast"),
    [({}, False), ({"avx512_vnni": False, "avx2": True}, False), ({"avx_vnni": True}, True)],
)
def test_the_int8_gemm_is_fast_with_int8_dot_products(monkeypatch, capabilities, fast):
    monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: capabilities)
    assert int8_module.int8_gemm_is_fast() == fast


@pytest.mark.parametrize("past", [0, 1])
def test_small_sums_in_float32_up_to_k_1024_and_one_past(past):
    """K = `FLOAT32_INT8_MAX_K` terms of -128 * -128 sum to 2^24, which float32 holds: a small
    matrix keeps a float32 copy whose GEMM gives the exact sums; one term more and it keeps
    none (its sums would pass 2^24)."""
    k = FLOAT32_INT8_MAX_K + past
    lhs, rhs = worst_case_operands(3, k, 3)
    prepared = Int8GemmWeights.prepare(rhs, 0, np.zeros(3, np.int32), input_zp=0)
    assert prepared is not None
    assert (prepared.small is None) == bool(past)
    if not past:
        sums = prepared.sums(lhs)
        assert sums.dtype == np.float32 and sums.max() == 1 << 24
        np.testing.assert_array_equal(sums, exact_product(lhs, rhs))


@needs_exact_int8_gemm
@pytest.mark.parametrize("past", [0, 1])
def test_small_sums_up_to_small_gemm_macs_and_one_past(monkeypatch, past):
    """`Int8GemmWeights.sums` of M rows takes the float32 GEMM while M * K * N is at most
    `FLOAT_INT8_GEMM_MACS`, the int8 GEMM one row past it: the same exact sums."""
    counted = CountedInt8Gemm()
    monkeypatch.setattr(gemm_weights_module, "int8_gemm", counted)
    k, n = 64, 32
    rows = FLOAT_INT8_GEMM_MACS // (k * n) + past
    rng = np.random.default_rng(past)
    lhs = rng.integers(-128, 128, (rows, k), dtype=np.int8)
    rhs = rng.integers(-128, 128, (k, n), dtype=np.int8)
    prepared = Int8GemmWeights.prepare(rhs, 0, np.zeros(n, np.int32), input_zp=3)
    assert prepared is not None and prepared.small is not None
    assert prepared.small.flags.c_contiguous  # OpenBLAS's faster operand order
    np.testing.assert_array_equal(prepared.sums(lhs), exact_product(lhs, rhs))
    assert counted.calls == past


def test_no_float32_copy_of_a_matrix_past_small_gemm_macs():
    assert small_float_matrix(np.ones((2, FLOAT_INT8_GEMM_MACS // 2), np.int8)) is not None
    assert small_float_matrix(np.ones((2, FLOAT_INT8_GEMM_MACS // 2 + 1), np.int8)) is None
