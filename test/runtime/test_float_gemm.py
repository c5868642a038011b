"""`float_gemm`: small GEMMs run on one BLAS thread, big ones on the caller's; the same result."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from dg.runtime import exact
from dg.runtime.exact import PARALLEL_GEMM_MACS, float_gemm


def blas_threads() -> int:
    return exact._blas().select(user_api="blas").info()[0]["num_threads"]


@pytest.mark.parametrize(
    ("m", "parallel"), [(PARALLEL_GEMM_MACS // 64 - 1, False), (PARALLEL_GEMM_MACS // 64, True)]
)
def test_blas_threads_follow_the_size_of_the_gemm(monkeypatch, m, parallel):
    """A GEMM of one multiply-add below the bound runs on one thread; at the bound, on two."""
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


def test_the_result_is_numpys_matmul():
    rng = np.random.default_rng(0)
    lhs = rng.integers(-255, 256, (3, 64, 200)).astype(np.float32)
    rhs = rng.integers(-255, 256, (3, 200, 72)).astype(np.float32)
    assert np.array_equal(float_gemm(lhs, rhs), np.matmul(lhs, rhs))
