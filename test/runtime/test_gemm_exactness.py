"""The exact integer GEMMs behind the weight kernels (docs/dghw.md, "Exactness of the device
model's GEMMs"): chunked reductions and weight splits at their bounds."""

from __future__ import annotations

import dghw_testing as build
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from interpreter_cases import (
    EXAMPLES,
    FEW_EXAMPLES,
    INT32_MAX,
    accumulate_module,
    int8_zero_points,
    run_one,
)

from dg.runtime.exact import (
    F32_EXACT_LIMIT,
    exact_chunk_length,
    exact_integer_gemm,
    exact_split_gemm,
    exact_weight_splits,
)
from dg.runtime.kernels.gemm_weights import WIDEN_PER_BLOCK_ABOVE, GemmWeights, WidenedRows


def worst_case_fc(k: int):
    """Inputs all -128 with zero point 127 (|x - zp| = 255), weights 127 except one 126.

    Each output is -255 * (127 * (k - 1) + 126): an odd integer far above 2^24,
    which float32 cannot represent, so no single float32 GEMM can return it.
    """
    x = np.full((2, k), -128, dtype=np.int8)
    w = np.full((3, k), 127, dtype=np.int8)
    w[:, 0] = 126
    return x, w, 127


def test_chunking_makes_long_reductions_exact():
    k = 4096
    x, w, input_zp = worst_case_fc(k)
    exact = (x.astype(np.int64) - input_zp) @ w.astype(np.int64).T  # integer matmul, no BLAS
    assert np.all(np.abs(exact) > F32_EXACT_LIMIT) and np.all(exact % 2 == 1)
    single_gemm = (x.astype(np.float32) - input_zp) @ w.astype(np.float32).T
    assert not np.array_equal(single_gemm.astype(np.int64), exact)  # the naive way is wrong

    b = np.zeros(3, dtype=np.int32)
    module, args = accumulate_module(
        lambda xv, wv, bv, t: build.fully_connected(xv, wv, bv, t, input_zp, 0),
        x,
        w,
        b,
        (2, 3),
        constant=True,
    )
    np.testing.assert_array_equal(run_one(module, *args), exact.astype(np.int32))


@EXAMPLES
@given(st.integers(1, 255), st.integers(1, 255))
def test_chunk_length_is_the_longest_exact_one(x_bound, w_bound):
    chunk = exact_chunk_length(x_bound, w_bound)
    assert chunk * x_bound * w_bound < F32_EXACT_LIMIT <= (chunk + 1) * x_bound * w_bound


@FEW_EXAMPLES
@given(st.integers(1, 5000), st.data())
def test_exact_integer_gemm_on_worst_case_values(k, data):
    lhs = data.draw(arrays(np.int64, (3, k), elements=st.sampled_from([-255, 255])))
    rhs = data.draw(arrays(np.int64, (k, 2), elements=st.sampled_from([-255, 255])))
    chunk = exact_chunk_length(255, 255)
    product = exact_integer_gemm(lhs.astype(np.float32), rhs.astype(np.float32), chunk)
    np.testing.assert_array_equal(product, lhs @ rhs)


def product_extremes(w: np.ndarray, x_range: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Per (k, n): the largest positive and negative magnitude of x * w[k, n] over x_range."""
    at = np.stack([x_range[0] * w, x_range[1] * w])
    return np.maximum(at.max(axis=0), 0), np.maximum(-at.min(axis=0), 0)


@st.composite
def weight_split_cases(draw):
    k, n = draw(st.integers(1, 3000)), draw(st.integers(1, 4))
    worst = draw(st.booleans())
    elements = st.sampled_from([-255, 255, -127, 127]) if worst else st.integers(-255, 255)
    w = draw(arrays(np.int64, (k, n), elements=elements))
    zp = draw(int8_zero_points(draw(st.booleans())))
    return w, (-128 - zp, 127 - zp)


@EXAMPLES
@given(weight_split_cases())
def test_weight_splits_are_exact_and_as_long_as_exactness_allows(case):
    w, x_range = case
    splits = exact_weight_splits(w, x_range)
    bounds = (0, *splits, len(w))
    assert all(a < b for a, b in zip(bounds[:-1], bounds[1:], strict=True))
    positive, negative = product_extremes(w, x_range)
    for start, end in zip(bounds[:-1], bounds[1:], strict=True):
        for sums in (positive[start:end].sum(axis=0), negative[start:end].sum(axis=0)):
            assert sums.max() < F32_EXACT_LIMIT  # every partial sum is a float32 integer
        if end < len(w):  # greedy: one more row would break the bound
            grown = max(
                positive[start : end + 1].sum(axis=0).max(),
                negative[start : end + 1].sum(axis=0).max(),
            )
            assert grown >= F32_EXACT_LIMIT


@FEW_EXAMPLES
@given(weight_split_cases(), st.data())
def test_weight_split_gemm_on_worst_case_inputs(case, data):
    """Inputs at the range ends, chosen per element so that a column's products all share a sign."""
    w, (lo, hi) = case
    column = data.draw(st.integers(0, w.shape[1] - 1))
    aligned = np.where(w[:, column] * hi >= w[:, column] * lo, hi, lo)  # every product >= 0
    x = np.stack([aligned, np.where(aligned == hi, lo, hi)])  # and every one <= 0
    weights = GemmWeights.prepare(w, 0, np.zeros(w.shape[1], dtype=np.int64), (lo, hi))
    product = exact_split_gemm(x.astype(np.float32), weights.matrix, weights.splits)
    np.testing.assert_array_equal(product, x @ w)


@FEW_EXAMPLES
@given(weight_split_cases(), st.sampled_from([0, 1, 2, 3]), st.data())
def test_int32_accumulation_with_tiled_bias_over_items(case, items, data):
    """`GemmWeights.accumulate` on worst-case inputs, split chunks, a bias tiled over
    items of several rows: the exact int64 sum, when int32 provably holds it."""
    w, (lo, hi) = case
    rows = data.draw(st.integers(1, 3))
    bias = data.draw(arrays(np.int64, w.shape[1], elements=st.integers(-(2**20), 2**20)))
    weights = GemmWeights.prepare(w, 0, bias, (lo, hi))
    x = data.draw(arrays(np.int64, (items * rows, len(w)), elements=st.sampled_from([lo, hi])))
    if weights.may_overflow:
        return
    for _ in range(2):  # the second call reuses the tiled bias
        got = weights.accumulate(x.astype(np.float32), None, items)  # type: ignore[arg-type]
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, x @ w + bias)


def fc_weights_at_widening_bound(extra_rows: int, weight_zp: int) -> np.ndarray:
    """An int8 [K, N] weight matrix of `WIDEN_PER_BLOCK_ABOVE` elements plus `extra_rows` rows
    of N, as fully_connected passes it: the transpose of the stored [N, K] weight."""
    n = 1024
    k = WIDEN_PER_BLOCK_ABOVE // n + extra_rows
    rng = np.random.default_rng(extra_rows)
    low, high = max(-128, weight_zp - 255), min(127, weight_zp + 255)
    return rng.integers(low, high + 1, (n, k), dtype=np.int8).T


@pytest.mark.parametrize("extra_rows", [0, 1])
@pytest.mark.parametrize("weight_zp", [0, -7])
@pytest.mark.parametrize("int32_path", [True, False])
def test_big_weights_are_widened_per_block_with_the_same_integers(
    extra_rows, weight_zp, int32_path
):
    """At `WIDEN_PER_BLOCK_ABOVE` elements the weights are widened once to float32; one row
    more, they stay the caller's int8 (no copy, not even a centered int16 one: the
    preparation and a GEMM allocate less than the weights' own bytes) and each GEMM widens
    them per block. Both give the exact integer sums, on the int32 and the int64 path."""
    w = fc_weights_at_widening_bound(extra_rows, weight_zp)
    k, n = w.shape
    input_zp = -128 if int32_path else 5
    lo, hi = -128 - input_zp, 127 - input_zp
    rng = np.random.default_rng(k)
    centered = w.astype(np.int64) - weight_zp
    if int32_path:  # a row at the range ends with every product of column 0 >= 0, one random
        aligned = np.where(centered[:, 0] * hi >= centered[:, 0] * lo, hi, lo)
        x = np.stack([aligned, rng.integers(lo, hi + 1, k)])
        bias = rng.integers(-(2**20), 2**20, n)
    else:  # a bias the static bound says may overflow, with inputs that keep the sums in range
        x = rng.integers(-1, 2, (2, k))
        bias = np.full(n, INT32_MAX - 2**20)

    def prepare_and_accumulate() -> tuple[GemmWeights, np.ndarray]:
        weights = GemmWeights.prepare(w, weight_zp, bias, (lo, hi))
        return weights, weights.accumulate(x.astype(np.float32), None, 1)  # type: ignore[arg-type]

    (weights, got), peak = build.traced_peak(prepare_and_accumulate)
    assert weights.may_overflow != int32_path
    np.testing.assert_array_equal(got, x @ centered + bias)
    if extra_rows:
        assert isinstance(weights.matrix, WidenedRows)
        assert np.shares_memory(weights.matrix.stored, w)
        assert peak < w.nbytes, peak
    else:
        assert isinstance(weights.matrix, np.ndarray)
        assert weights.matrix.nbytes == 4 * w.size
