"""Exact integer GEMMs on float32 BLAS: chunk lengths and splits that keep every partial sum
below 2^24 (docs/dghw.md, "Exactness of ...").
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from typing import Any, Protocol, cast

import numpy as np
import torch
from threadpoolctl import LibController, ThreadpoolController

from dg.runtime.threads import threads_for

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


PARALLEL_GEMM_MACS = 1 << 30
"""Multiply-adds from which a float32 GEMM on numpy's BLAS runs on its threads (`float_gemm`)."""

SMALL_GEMM_MACS = 1 << 18
"""Multiply-adds up to which `float_gemm` calls numpy's matmul straight away: OpenBLAS runs
such a GEMM on the calling thread (its multithreading threshold, 65536 x 4), in a few
microseconds, less than torch's precision check and thread setting cost (the digits demos'
GEMMs)."""

FLOAT_INT8_GEMM_MACS = 1 << 19
"""Multiply-adds up to which an int8 GEMM of a small matrix runs as numpy's float GEMM
(`Int8GemmWeights.sums`, `ScaledGemm`), in runs of rows of at most `SMALL_GEMM_MACS` each
(`one_thread_matmul`): torch's int8 GEMM of a [256, 32] x [32, 64] FC took 10 us alone,
25 us between the digits transformer's other kernels. 2^19 holds that FC at batch 32
(`TORCH_MIN_ELEMENTS` has the A/B); 2^20 made the digits CNN at batch 32 5% slower."""


def one_thread_matmul(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """lhs [M, K] @ rhs [K, N] by numpy's matmul, on the calling thread: on a BLAS of more
    than one thread, in runs of rows of at most `SMALL_GEMM_MACS` multiply-adds
    (`matmul_row_runs`), each of which OpenBLAS runs there. Waking its threads between the
    device model's passes, on a busy machine, cost milliseconds (ResNet-18 at batch 1 on 2
    threads); the runs' calls cost 4% of the digits transformer at batch 32, so a BLAS of
    one thread takes one call. Each row's result is computed from that row alone, so the
    runs give the whole product's."""
    m, k = lhs.shape
    n = rhs.shape[1]
    # The common case first, without the runs: a GEMM within one run (most of a network's
    # at batch 1), where forming them cost 1.1 us a call.
    if m * k * n <= SMALL_GEMM_MACS or blas_threads() == 1:
        return np.matmul(lhs, rhs)
    runs = matmul_row_runs(m, k, n)
    out = np.empty((m, n), np.result_type(lhs, rhs))
    for start, end in runs:
        np.matmul(lhs[start:end], rhs, out=out[start:end])
    return out


def matmul_row_runs(m: int, k: int, n: int) -> list[tuple[int, int]]:
    """[start, end) runs of M rows, each of at most `SMALL_GEMM_MACS` multiply-adds (at
    least one row)."""
    rows = max(1, SMALL_GEMM_MACS // max(1, k * n))
    return [(start, min(start + rows, m)) for start in range(0, max(m, 1), rows)]


IEEE_PRECISIONS = ("none", "ieee")
"""torch's float32 precision settings under which its CPU matmul computes in IEEE float32:
"none" (the default: inherit, and IEEE at the root) or "ieee"; "tf32" and "bf16" let oneDNN
round the operands."""


@functools.cache
def _blas() -> ThreadpoolController:
    return ThreadpoolController()


NUMPY_BLAS_DIRECTORIES = ("numpy.libs", "numpy/.dylibs")
"""Where numpy's wheels carry their own BLAS, beside or inside the `numpy` package (auditwheel
and delvewheel, delocate)."""


@functools.cache
def _numpy_blas_thread_counts() -> tuple[Callable[[], int | None], ...]:
    """How many threads each BLAS that numpy's matmul may call has: its wheels' own library
    (`NUMPY_BLAS_DIRECTORIES`), not another package's. scipy's OpenBLAS, loaded by an import
    of scikit-learn (the digits examples' data) after a `threadpool_limits(1)`, keeps its
    default of two threads, and reading it made `one_thread_matmul` split the GEMMs of a
    process limited to one thread: the digits transformer at batch 32 took 1.05 times as
    long. A numpy built against the system's BLAS carries none: every BLAS counts there."""
    return tuple(lib.get_num_threads for lib in numpys_blas(_blas().select(user_api="blas")))


def numpys_blas(blas: ThreadpoolController) -> list[LibController]:
    """The libraries of `blas` in numpy's own BLAS directories (`NUMPY_BLAS_DIRECTORIES`), or
    all of them where none is."""
    site = os.path.dirname(os.path.dirname(os.path.abspath(np.__file__)))
    own = {os.path.join(site, *directory.split("/")) for directory in NUMPY_BLAS_DIRECTORIES}
    libraries = blas.lib_controllers
    numpys = [lib for lib in libraries if os.path.dirname(os.path.abspath(lib.filepath)) in own]
    return numpys or libraries


def _read_blas_threads() -> int:
    return max((count() or 1 for count in _numpy_blas_thread_counts()), default=1)


_BLAS_THREADS_OF_CALL: ContextVar[list[int] | None] = ContextVar("blas_threads", default=None)
"""Inside `blas_threads_read_once`: numpy's BLAS threads, once read (empty before)."""


def blas_threads() -> int:
    """The most threads numpy's BLAS may use (threadpoolctl's reading of each of its
    libraries; 1 where it cannot tell): read at the first call inside a device call
    (`blas_threads_read_once`), else at each call. Reading it for each GEMM cost the digits
    transformer at batch 32 2% of its time (three to five microseconds a reading between
    its kernels)."""
    read = _BLAS_THREADS_OF_CALL.get()
    if read is None:
        return _read_blas_threads()
    if not read:
        read.append(_read_blas_threads())
    return read[0]


@contextmanager
def blas_threads_read_once() -> Iterator[None]:
    """`blas_threads` read once inside: a device call, during which only dg's own
    `one_blas_thread` changes numpy's BLAS threads, and lowers them: a GEMM there may still
    split its rows (`one_thread_matmul`), the same product."""
    token = _BLAS_THREADS_OF_CALL.set([])
    try:
        yield
    finally:
        _BLAS_THREADS_OF_CALL.reset(token)


def torch_matmul_is_ieee() -> bool:
    """Whether torch's float32 CPU matmul computes in IEEE float32 now: its precision at
    every level (all backends, oneDNN, oneDNN's matmul) is `IEEE_PRECISIONS`. Read at each
    call, because a user may lower it at any time (`torch.set_float32_matmul_precision`)."""
    # torch sets these attributes on its backend modules at import; its stubs lack them.
    backends = torch.backends
    return (
        backends.mkldnn.matmul.fp32_precision in IEEE_PRECISIONS  # type: ignore[attr-defined]
        and backends.mkldnn.fp32_precision in IEEE_PRECISIONS
        and backends.fp32_precision in IEEE_PRECISIONS  # type: ignore[attr-defined]
    )


def shared_tensor(array: np.ndarray) -> torch.Tensor | None:
    """`array` as a tensor sharing its memory, or None where torch cannot view it
    (read-only, negative strides)."""
    if not array.flags.writeable or any(stride < 0 for stride in array.strides):
        return None
    return torch.from_numpy(array)


def as_tensor(array: np.ndarray) -> torch.Tensor | None:
    """`array` as a float32 tensor sharing its memory (`shared_tensor`), or None where it
    is not float32 or torch cannot view it."""
    return shared_tensor(array) if array.dtype == np.float32 else None


def float_gemm(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """lhs [..., M, K] @ rhs [..., K, N] in float32: numpy's up to `SMALL_GEMM_MACS`, else
    torch's matmul for two matrices while it computes in IEEE float32
    (`torch_matmul_is_ieee`), else numpy's, on one BLAS thread below `PARALLEL_GEMM_MACS`.

    torch's matmul (MKL) runs on torch's own intra-op threads, the pool its elementwise
    kernels and the float model use, so a second thread helps without a second pool to
    wake; inside a device call only a GEMM of `PARALLEL_WORK` multiply-adds takes the
    caller's threads (`threads_for`). Waking numpy's OpenBLAS threads for each of a
    network's small GEMMs, between the device model's elementwise passes, made MobileNetV2
    at batch 1 run 15x slower on 2 threads than on 1 (bench/zoo.py). The result is the
    same either way: every exact GEMM here sums integers below 2^24 (docs/dghw.md), which
    IEEE float32 gets exactly in any order; a bf16 or tf32 matmul would round the
    operands, hence the check.
    """
    macs = math.prod(lhs.shape) * rhs.shape[-1]
    if macs <= SMALL_GEMM_MACS:
        return np.matmul(lhs, rhs)
    if lhs.ndim == 2 and rhs.ndim == 2 and torch_matmul_is_ieee():
        lhs_t, rhs_t = as_tensor(lhs), as_tensor(rhs)
        if lhs_t is not None and rhs_t is not None:
            # numpy's allocator: it asks for huge pages on large buffers, torch's does not.
            out = np.empty((lhs.shape[0], rhs.shape[1]), np.float32)
            with threads_for(macs):
                torch.mm(lhs_t, rhs_t, out=torch.from_numpy(out))
            return out
    if macs >= PARALLEL_GEMM_MACS:
        return np.matmul(lhs, rhs)
    with one_blas_thread():
        return np.matmul(lhs, rhs)


def float32_gemm_into(lhs: torch.Tensor, rhs: torch.Tensor, out: torch.Tensor) -> None:
    """out = lhs @ rhs, float32 [M, K] @ [K, N] into [M, N], by torch's matmul on its current
    threads, for callers that split the work themselves: exact for integer operands whose
    every partial sum is below 2^24 only while `torch_matmul_is_ieee` (the caller checks)."""
    torch.mm(lhs, rhs, out=out)


def one_blas_thread() -> AbstractContextManager[object]:
    """numpy's BLAS on one thread inside the block: for small GEMMs, whose thread wake-ups
    cost more than they save, and for GEMMs already split over the caller's threads
    (`run_in_parts`), where BLAS's own threads would contend with them."""
    return cast(AbstractContextManager[object], _blas().limit(limits=1, user_api="blas"))


class MatrixRows(Protocol):
    """A [K, N] integer matrix read a range of rows at a time: an ndarray, or one whose rows
    are widened from narrower storage on each read (`WidenedRows`)."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    def __getitem__(self, rows: slice, /) -> np.ndarray: ...


def exact_integer_gemm(lhs: np.ndarray, rhs: np.ndarray, chunk: int) -> np.ndarray:
    """lhs @ rhs as int64, for float32 integer matrices, exact when `chunk` is exact.

    `chunk` comes from `exact_chunk_length`; chunk results are exact integers
    below 2^24 and are summed in int64, which cannot overflow for any K numpy can
    hold (K * 255 * 255 < 2^63).
    """
    return exact_split_gemm(lhs, rhs, tuple(range(0, lhs.shape[1], chunk))[1:])


def exact_split_gemm(lhs: np.ndarray, rhs: MatrixRows, splits: Sequence[int]) -> np.ndarray:
    """lhs @ rhs as int64: one float32 GEMM per chunk of K between `splits`, summed in int64.

    Exact when every chunk is (`exact_chunk_length`, `exact_weight_splits`).
    """
    bounds = (0, *splits, lhs.shape[1])
    acc = float_gemm(lhs[:, : bounds[1]], rhs[: bounds[1]]).astype(np.int64)
    for start, end in zip(bounds[1:-1], bounds[2:], strict=True):
        acc += float_gemm(lhs[:, start:end], rhs[start:end]).astype(np.int64)
    return acc


SPLIT_BLOCK_ROWS = 512
"""Rows of the weight matrix `exact_weight_splits` and `column_magnitude_sums` reduce at a
time: their temporaries stay ~1 MB per 1000 columns, whatever K (VGG-16's first Linear has
K = 25088)."""


def exact_weight_splits(centered_weight: MatrixRows, x_range: tuple[int, int]) -> tuple[int, ...]:
    """Where to split K so that float32 GEMMs with these weights are exact: few, long chunks.

    `centered_weight` is the integer [K, N] matrix of w - weight_zp (|w - weight_zp|
    <= 255, any integer dtype); every centered input lies in `x_range` = (lo, hi),
    |lo|, |hi| <= 255. A GEMM's intermediate for output (m, n)
    over a chunk is a sum of a subset of the products p_k = x_mk * w_kn, so it
    lies in [-sum_k neg_kn, sum_k pos_kn], where pos_kn (neg_kn) is the largest
    positive (negative) magnitude x * w_kn takes for x in `x_range` (0 if none).
    A chunk whose two sums stay <= 2^24 - 1 in every column is exact, by the
    argument of `exact_chunk_length`. This bound uses the actual weights, not
    K * max|w|, and the sign of x (post-ReLU inputs, x - zp >= 0, halve it), so
    most layers need one GEMM where the uniform chunking needed several.
    Greedy: each chunk extends as far as both sums allow. The rows are read in
    blocks of `SPLIT_BLOCK_ROWS`; a block that fits in the open chunk whole (its
    column sums, `block_extreme_sums`) joins it, and in a block where a chunk
    ends, bisection on the rows finds where.
    """
    limit = F32_EXACT_LIMIT - 1
    running = np.zeros((2, centered_weight.shape[1]), dtype=np.int64)
    """The open chunk's column sums of pos and of neg."""
    splits: list[int] = []
    chunk_start = 0
    for block_start in range(0, centered_weight.shape[0], SPLIT_BLOCK_ROWS):
        block = centered_weight[block_start : block_start + SPLIT_BLOCK_ROWS]
        row = 0  # the first row of the block not yet in a chunk
        while (totals := running + block_extreme_sums(block[row:], x_range)).max() > limit:
            # Some chunk ends in this block: after the most rows that still fit (the
            # sums only grow with rows, so bisection finds them).
            fits, breaks = 0, len(block) - row
            while breaks - fits > 1:
                middle = (fits + breaks) // 2
                grown = running + block_extreme_sums(block[row : row + middle], x_range)
                fits, breaks = (middle, breaks) if grown.max() <= limit else (fits, middle)
            # A chunk holds at least one row (one product, <= 255 * 255, is always exact).
            end = max(chunk_start + 1, block_start + row + fits)
            splits.append(end)
            chunk_start, row = end, end - block_start
            running = np.zeros_like(running)
        running = totals
    return tuple(splits)


def block_extreme_sums(centered_weight: np.ndarray, x_range: tuple[int, int]) -> np.ndarray:
    """int64 [2, N]: the column sums of pos and neg (`exact_weight_splits`), from two
    reductions of w.

    With H = max(hi, 0) and L = max(-lo, 0), the largest positive product of x in
    [lo, hi] with w is H * w for w > 0 and L * |w| for w < 0, the largest negative
    one L * w and H * |w|: pos = H * w+ + L * w-, neg = L * w+ + H * w-, linear in
    w+ = max(w, 0) and w- = max(-w, 0), whose sums are (sum |w| +- sum w) / 2.
    """
    lo, hi = x_range
    high, low = max(hi, 0), max(-lo, 0)
    total = centered_weight.sum(axis=0, dtype=np.int32).astype(np.int64)
    magnitude = column_magnitude_sums(centered_weight)
    plus, minus = (magnitude + total) // 2, (magnitude - total) // 2
    return np.stack([high * plus + low * minus, low * plus + high * minus])


def column_magnitude_sums(centered_weight: MatrixRows) -> np.ndarray:
    """int64 [N]: sum_k |w[k, n]| of an integer [K, N] matrix with |w| <= 255.

    Reduced `SPLIT_BLOCK_ROWS` rows at a time, so |w| never exists for the whole
    matrix (VGG-16's first Linear: 102.8 M elements); each block sums in int32
    (numpy's int32 reduction runs at twice the speed of int64's: 512 * 255 fits).
    """
    k, n = centered_weight.shape
    sums = np.zeros(n, dtype=np.int64)
    for start in range(0, k, SPLIT_BLOCK_ROWS):
        block = centered_weight[start : start + SPLIT_BLOCK_ROWS]
        sums += np.abs(block).sum(axis=0, dtype=np.int32)
    return sums


def may_leave_int32(centered_weight: MatrixRows, bias: np.ndarray, x_bound: int) -> bool:
    """Whether some partial sum bias[n] + sum_k (x - x_zp)(w[k, n] - w_zp) can leave int32.

    `centered_weight` is the integer [K, N] matrix of w - weight_zp. Every partial
    sum, whatever order the terms are added in, is bounded by
    |bias[n]| + x_bound * sum_k |w[k, n] - w_zp|: an exact bound, computed once.
    """
    column_sums = column_magnitude_sums(centered_weight)
    acc_bound = np.abs(bias.astype(np.int64)) + x_bound * column_sums
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
    acc = float_gemm(lhs[..., :chunk], rhs[..., :chunk, :]).astype(dtype)
    for start in range(chunk, k, chunk):
        part = float_gemm(lhs[..., start : start + chunk], rhs[..., start : start + chunk, :])
        np.add(acc, part, out=acc, dtype=dtype, casting="unsafe")
    return acc
