"""`float_gemm`: torch's matmul while it computes in IEEE float32, else numpy's, whose small
GEMMs run on one BLAS thread and big ones on the caller's; exact integers either way up to
the 2^24 bound, and the bound is real (one step past it, neither path is exact)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_limits

from dg.runtime import exact
from dg.runtime.exact import (
    PARALLEL_GEMM_MACS,
    SMALL_GEMM_MACS,
    float_gemm,
    matmul_row_runs,
    one_thread_matmul,
    torch_matmul_is_ieee,
)

PRECISION_SETTINGS = (
    (torch.backends, "fp32_precision"),
    (torch.backends.mkldnn, "fp32_precision"),
    (torch.backends.mkldnn.matmul, "fp32_precision"),  # type: ignore[attr-defined]
)


@pytest.fixture
def restored_precision():
    """Restores torch's float32 precision settings after the test changed them."""
    saved = [getattr(owner, name) for owner, name in PRECISION_SETTINGS]
    yield
    torch.set_float32_matmul_precision("highest")
    for (owner, name), value in zip(PRECISION_SETTINGS, saved, strict=True):
        setattr(owner, name, value)
    assert torch_matmul_is_ieee()


@pytest.fixture
def torch_mm_calls(monkeypatch, spy):
    """The lhs shapes of the calls of torch.mm that `float_gemm` makes."""
    monkeypatch.setattr(exact, "SMALL_GEMM_MACS", 0)  # this file's small GEMMs take the paths
    return spy(exact.torch, "mm", lambda *args, **kwargs: args[0].shape)


@pytest.mark.parametrize("m", [SMALL_GEMM_MACS // 64, SMALL_GEMM_MACS // 64 + 1])
def test_gemms_up_to_small_gemm_macs_take_numpys_matmul(monkeypatch, m):
    """Up to `SMALL_GEMM_MACS` multiply-adds numpy's matmul runs the GEMM straight away (no
    torch call, no BLAS thread limit); one row more takes torch's path; both exact."""
    calls: list[int] = []
    monkeypatch.setattr(exact.torch, "mm", lambda *args, **kwargs: calls.append(1))
    lhs = np.ones((m, 8), np.float32)
    result = float_gemm(lhs, np.ones((8, 8), np.float32))
    if m * 64 <= SMALL_GEMM_MACS:
        assert calls == [] and np.array_equal(result, np.full((m, 8), 8, np.float32))
    else:
        assert calls == [1]


def blas_threads() -> int:
    return exact._blas().select(user_api="blas").info()[0]["num_threads"]


@pytest.mark.parametrize(
    ("m", "parallel"), [(PARALLEL_GEMM_MACS // 64 - 1, False), (PARALLEL_GEMM_MACS // 64, True)]
)
def test_numpys_blas_threads_follow_the_size_of_the_gemm(
    monkeypatch, restored_precision, m, parallel
):
    """On numpy's path (torch's precision lowered), a GEMM of one multiply-add below the
    bound runs on one thread; at the bound, on two."""
    torch.backends.mkldnn.matmul.fp32_precision = "bf16"
    seen = []

    def matmul(lhs, rhs):
        seen.append(blas_threads())
        return np.zeros((*lhs.shape[:-1], rhs.shape[-1]), np.float32)

    monkeypatch.setattr(exact.np, "matmul", matmul)
    lhs = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), (m, 8), (0, 0))
    rhs = np.zeros((8, 8), np.float32)
    with threadpool_limits(2, user_api="blas"):
        float_gemm(lhs, rhs)
        assert blas_threads() == 2  # restored after the call
    assert seen == [2 if parallel else 1]


def worst_case(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Operands whose every product is 255 * 255 (odd), so each output is k * 65025."""
    lhs = np.full((3, k), 255, np.float32)
    rhs = np.full((k, 5), 255, np.float32)
    rhs[:, 1::2] = -255  # negative columns: products of both signs across columns
    lhs[1] = -255
    return lhs, rhs


def exact_product(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    return lhs.astype(np.int64) @ rhs.astype(np.int64)


LAST_EXACT_K = (exact.F32_EXACT_LIMIT - 1) // (255 * 255)
"""258: the longest worst-case reduction float32 holds."""


@pytest.mark.parametrize("ieee", [True, False], ids=["torch", "numpy"])
def test_worst_case_gemm_is_exact_at_the_bound_and_not_one_past(
    restored_precision, torch_mm_calls, ieee
):
    if not ieee:
        torch.backends.mkldnn.matmul.fp32_precision = "bf16"
    lhs, rhs = worst_case(LAST_EXACT_K)
    assert np.array_equal(float_gemm(lhs, rhs), exact_product(lhs, rhs))
    lhs, rhs = worst_case(LAST_EXACT_K + 1)  # 259 * 65025: odd, above 2^24
    assert not np.array_equal(float_gemm(lhs, rhs), exact_product(lhs, rhs))
    assert len(torch_mm_calls) == (2 if ieee else 0)


@pytest.mark.parametrize(
    "lower",
    [
        lambda: setattr(torch.backends.mkldnn.matmul, "fp32_precision", "bf16"),  # type: ignore[attr-defined]
        lambda: setattr(torch.backends.mkldnn, "fp32_precision", "bf16"),
        lambda: setattr(torch.backends, "fp32_precision", "tf32"),
        lambda: torch.set_float32_matmul_precision("medium"),
        lambda: torch.set_float32_matmul_precision("high"),
    ],
    ids=["mkldnn-matmul-bf16", "mkldnn-bf16", "all-tf32", "legacy-medium", "legacy-high"],
)
def test_a_lowered_torch_precision_takes_numpys_path(restored_precision, torch_mm_calls, lower):
    """Read at each call: lowering torch's precision at any level, with the new API or the
    legacy one, sends the next GEMM to numpy."""
    lhs, rhs = worst_case(LAST_EXACT_K)
    float_gemm(lhs, rhs)
    assert len(torch_mm_calls) == 1
    lower()
    assert not torch_matmul_is_ieee()
    assert np.array_equal(float_gemm(lhs, rhs), exact_product(lhs, rhs))
    assert len(torch_mm_calls) == 1


def test_views_torch_cannot_share_take_numpys_path(torch_mm_calls):
    """Read-only and reversed operands (which torch.from_numpy refuses) and batched ones."""
    rng = np.random.default_rng(0)
    lhs = rng.integers(-255, 256, (64, 200)).astype(np.float32)
    rhs = rng.integers(-255, 256, (200, 72)).astype(np.float32)
    read_only = lhs.copy()
    read_only.flags.writeable = False
    for a, b in [(read_only, rhs), (lhs[::-1], rhs), (lhs, rhs[:, ::-1])]:
        assert np.array_equal(float_gemm(a, b), exact_product(a, b))
    batched = rng.integers(-255, 256, (3, 64, 200)).astype(np.float32)
    assert np.array_equal(float_gemm(batched, rhs), np.matmul(batched, rhs))
    assert torch_mm_calls == []
    assert np.array_equal(float_gemm(lhs, rhs.T.copy().T), exact_product(lhs, rhs))
    assert len(torch_mm_calls) == 1  # a transposed (F-order) matrix is shared as it is


@pytest.mark.parametrize("m", [SMALL_GEMM_MACS // (32 * 64), 2 * SMALL_GEMM_MACS // (32 * 64) + 3])
def test_one_thread_matmul_runs_rows_within_small_gemm_macs(m):
    """`one_thread_matmul` of [M, 32] x [32, 64]: one run up to `SMALL_GEMM_MACS`, else runs
    of whole rows, each within it (OpenBLAS's one-thread bound) and together every row
    once; the product is numpy's, in float32 and float64."""
    runs = matmul_row_runs(m, 32, 64)
    assert all((end - start) * 32 * 64 <= SMALL_GEMM_MACS for start, end in runs)
    assert [r for start, end in runs for r in range(start, end)] == list(range(m))
    assert len(runs) == (1 if m * 32 * 64 <= SMALL_GEMM_MACS else 3)
    rng = np.random.default_rng(m)
    for dtype in (np.float32, np.float64):
        lhs = rng.integers(-255, 256, (m, 32)).astype(dtype)
        rhs = rng.integers(-255, 256, (32, 64)).astype(dtype)
        np.testing.assert_array_equal(one_thread_matmul(lhs, rhs), lhs @ rhs)


@pytest.mark.parametrize("threads", [1, 2])
def test_one_thread_matmul_splits_only_for_a_blas_of_several_threads(spy, threads):
    """Past `SMALL_GEMM_MACS`, one numpy call per run of rows on a BLAS of two threads, one
    call on a BLAS of one (which runs it on the calling thread anyway)."""
    m = 2 * SMALL_GEMM_MACS // (32 * 64) + 3
    lhs, rhs = np.ones((m, 32)), np.ones((32, 64))
    calls = spy(np, "matmul", lambda a, b, **kwargs: len(a))
    with threadpool_limits(threads, user_api="blas"):
        assert exact.blas_threads() == threads
        np.testing.assert_array_equal(one_thread_matmul(lhs, rhs), np.full((m, 64), 32.0))
    assert calls == ([m] if threads == 1 else [e - s for s, e in matmul_row_runs(m, 32, 64)])
