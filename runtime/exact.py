"""Exact integer GEMMs on float32 BLAS: chunk lengths and splits that keep every partial sum
below 2^24 (docs/dghw.md, "Exactness of ...").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1

F32_EXACT_LIMIT = 1 << 24
"""Every integer of magnitude <= 2^24 is a float32; 2^24 + 1 is the first one that is not."""


def centered_magnitude_bound(dtype: np.dtype[Any], zero_point: int) -> int:
    """The largest |x - zero_point| over every value x of `dtype` (a static worst case)."""
    info = np.iinfo(dtype)
    return max(abs(int(info.min) - zero_point), abs(int(info.max) - zero_point))


def exact_chunk_length(x_bound: int, w_bound: int) -> int:
    """The longest reduction a float32 GEMM computes exactly for these operand bounds.

    Every product (x - x_zp)(w - w_zp) is an integer of magnitude <= x_bound * w_bound,
    and every partial sum a GEMM forms over a chunk of `n` terms, in whatever order or
    blocking the BLAS chooses (FMA or not), is a sum of a subset of those products, so
    its magnitude is <= n * x_bound * w_bound. While that stays below 2^24, each
    intermediate is an integer float32 represents exactly, so no float operation
    rounds and the chunk's result is the exact integer sum.
    """
    product_bound = x_bound * w_bound
    if product_bound == 0:
        return 1 << 62  # every product is 0: any length is exact
    return max(1, (F32_EXACT_LIMIT - 1) // product_bound)


def exact_integer_gemm(lhs: np.ndarray, rhs: np.ndarray, chunk: int) -> np.ndarray:
    """lhs @ rhs as int64, for float32 integer matrices, exact when `chunk` is exact.

    `chunk` comes from `exact_chunk_length`; chunk results are exact integers
    below 2^24 and are summed in int64, which cannot overflow for any K numpy can
    hold (K * 255 * 255 < 2^63).
    """
    return exact_split_gemm(lhs, rhs, tuple(range(0, lhs.shape[1], chunk))[1:])


def exact_split_gemm(lhs: np.ndarray, rhs: np.ndarray, splits: Sequence[int]) -> np.ndarray:
    """lhs @ rhs as int64: one float32 GEMM per chunk of K between `splits`, summed in int64.

    Exact when every chunk is (`exact_chunk_length`, `exact_weight_splits`).
    """
    bounds = (0, *splits, lhs.shape[1])
    acc = (lhs[:, : bounds[1]] @ rhs[: bounds[1]]).astype(np.int64)
    for start, end in zip(bounds[1:-1], bounds[2:], strict=True):
        acc += (lhs[:, start:end] @ rhs[start:end]).astype(np.int64)
    return acc


def exact_weight_splits(centered_weight: np.ndarray, x_range: tuple[int, int]) -> tuple[int, ...]:
    """Where to split K so that float32 GEMMs with these weights are exact: few, long chunks.

    `centered_weight` is the int64 [K, N] matrix of w - weight_zp; every centered
    input lies in `x_range` = (lo, hi). A GEMM's intermediate for output (m, n)
    over a chunk is a sum of a subset of the products p_k = x_mk * w_kn, so it
    lies in [-sum_k neg_kn, sum_k pos_kn], where pos_kn (neg_kn) is the largest
    positive (negative) magnitude x * w_kn takes for x in `x_range` (0 if none).
    A chunk whose two sums stay <= 2^24 - 1 in every column is exact, by the
    argument of `exact_chunk_length`. This bound uses the actual weights, not
    K * max|w|, and the sign of x (post-ReLU inputs, x - zp >= 0, halve it), so
    most layers need one GEMM where the uniform chunking needed several.
    Greedy: each chunk extends as far as both sums allow.
    """
    lo, hi = x_range
    at_lo, at_hi = lo * centered_weight, hi * centered_weight
    positive = np.maximum(np.maximum(at_lo, at_hi), 0)
    negative = np.maximum(-np.minimum(at_lo, at_hi), 0)
    cumulative = [np.cumsum(p, axis=0) for p in (positive, negative)]  # inclusive prefix sums
    limit = F32_EXACT_LIMIT - 1
    running = [np.zeros(centered_weight.shape[1], dtype=np.int64)] * 2
    splits: list[int] = []
    start, k = 0, centered_weight.shape[0]
    while True:
        # The chunk [start, end) fits while both column sums stay <= limit: the
        # largest such end, found by binary search on the (monotone) column maxima.
        ends = []
        for c, base in zip(cumulative, running, strict=True):
            reach = (c[start:] - base).max(axis=1)
            ends.append(start + int(np.searchsorted(reach, limit, side="right")))
        end = max(start + 1, min(ends))  # one product (<= 255 * 255) is always exact
        if end >= k:
            return tuple(splits)
        splits.append(end)
        running = [c[end - 1] for c in cumulative]
        start = end


def may_leave_int32(centered_weight: np.ndarray, bias: np.ndarray, x_bound: int) -> bool:
    """Whether some partial sum bias[n] + sum_k (x - x_zp)(w[k, n] - w_zp) can leave int32.

    `centered_weight` is the int64 [K, N] matrix of w - weight_zp. Every partial
    sum, whatever order the terms are added in, is bounded by
    |bias[n]| + x_bound * sum_k |w[k, n] - w_zp|: an exact bound, computed once.
    """
    acc_bound = np.abs(bias.astype(np.int64)) + x_bound * np.abs(centered_weight).sum(axis=0)
    return bool(acc_bound.max(initial=0) > INT32_MAX)


def exact_batched_matmul(
    lhs: np.ndarray, rhs: np.ndarray, chunk: int, dtype: type[np.signedinteger[Any]] = np.int64
) -> np.ndarray:
    """lhs [..., M, K] @ rhs [..., K, N] in `dtype`, for float32 integer operands.

    Like `exact_integer_gemm`, batched: each K-chunk is one float32 matmul that
    `chunk` keeps exact, and the chunks are summed in `dtype`: int64 always holds
    the sums; int32 only when no partial sum can leave it (`MatmulPlan`). A chunk's
    float32 result is an exact integer, so its conversion is exact.
    """
    k = lhs.shape[-1]
    acc = np.matmul(lhs[..., :chunk], rhs[..., :chunk, :]).astype(dtype)
    for start in range(chunk, k, chunk):
        part = np.matmul(lhs[..., start : start + chunk], rhs[..., start : start + chunk, :])
        np.add(acc, part, out=acc, dtype=dtype, casting="unsafe")
    return acc
