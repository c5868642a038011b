"""Exact integer GEMMs of int8 operands into int32 (torch's `_int_mm`), used where the CPU has
int8 dot-product instructions (VNNI) and the worst cases check out (docs/dghw.md, "Exactness
of the device model's GEMMs", item 7).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
import torch

from dg.runtime.exact import shared_tensor
from dg.runtime.threads import run_in_parts, threads_for, torch_threads

INT8_PRODUCT_BOUND = 128 * 128
"""The largest |x * w| of two int8 values."""

INT8_GEMM_MAX_K = ((1 << 31) - 1) // INT8_PRODUCT_BOUND
"""The longest reduction whose every partial sum fits int32 (131,071 terms): any subset of K
products of int8 values has magnitude <= K * 2^14, below 2^31 up to here, and is 2^31 (which
int32 does not hold) one term past it (all x = w = -128)."""

NOT_EXACT_HERE = "torch's int8 GEMM is not exact on this CPU (int8_gemm_is_exact)"

_ENABLED: ContextVar[bool | None] = ContextVar("int8_gemms", default=None)
"""A caller's choice (`int8_gemms`); None: the CPU's (`int8_gemm_is_fast_and_exact`)."""


def int8_gemm(lhs: np.ndarray, rhs: torch.Tensor) -> np.ndarray:
    """lhs [M, K] @ rhs [K, N], both int8, as int32 [M, N]: exact for K <= `INT8_GEMM_MAX_K`
    wherever `int8_gemm_is_exact` holds. `lhs` may be read-only (an input constant); `rhs`
    is a `gemm_operand` already (weights, prepared once)."""
    m, n = lhs.shape[0], rhs.shape[1]
    out = np.empty((m, n), np.int32)
    with threads_for(m * lhs.shape[1] * n):
        int8_gemm_into(int8_tensor(lhs), rhs, torch.from_numpy(out))
    return out


def int8_gemm_into(lhs: torch.Tensor, rhs: torch.Tensor, out: torch.Tensor) -> None:
    """out = lhs @ rhs, int8 [M, K] @ [K, N] into int32 [M, N], on torch's current threads:
    the one call to torch's int8 GEMM, for callers that split the work themselves."""
    torch._int_mm(gemm_operand(lhs), gemm_operand(rhs), out=out)


def int8_batched_gemm(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """lhs [..., M, K] @ rhs [..., K, N], both int8 with the same leading axes, as int32
    [..., M, N]: one `int8_gemm` per leading index, each reading its operands' matrices
    where they lie (attention's per-head views are strided: a reshape would copy them),
    the matrices split over the caller's threads (`run_in_parts`), each GEMM on one."""
    lhs_t, rhs_t = int8_tensor(lhs), int8_tensor(rhs)
    out = np.empty((*lhs.shape[:-1], rhs.shape[-1]), np.int32)
    out_t = torch.from_numpy(out)

    def multiply(indices: Sequence[tuple[int, ...]]) -> None:
        for index in indices:
            int8_gemm_into(lhs_t[index], rhs_t[index], out_t[index])

    run_in_parts(multiply, list(np.ndindex(lhs.shape[:-2])), math.prod(lhs.shape) * rhs.shape[-1])
    return out


def int8_tensor(array: np.ndarray) -> torch.Tensor:
    """`array` as a tensor: shared where torch can view it (`shared_tensor`), else a copy
    (read-only memory, negative strides)."""
    shared = shared_tensor(array)
    return shared if shared is not None else torch.from_numpy(np.array(array))


def gemm_operand(matrix: torch.Tensor) -> torch.Tensor:
    """`matrix` where its layout is one the int8 GEMM reads right, else a copy in row-major
    order: row-major (column stride 1) with a row stride of at least the row length, or
    column-major (row stride 1, and not column stride 1) with a column stride of at least
    the column length.

    An axis of one element may carry any stride (numpy and torch still call the array
    contiguous), and torch 2.13's int8 GEMM read garbage from a [1, 2] matrix of strides
    (1, 1), the transpose of a [2, 1] weight: with both strides 1 it reads the matrix as
    row-major (`test_int8_gemm.py`).
    """
    (rows, columns), (row_stride, column_stride) = matrix.shape, matrix.stride()
    if column_stride == 1 and row_stride >= columns:
        return matrix
    if column_stride != 1 and row_stride == 1 and column_stride >= rows:
        return matrix
    return torch.empty((rows, columns), dtype=matrix.dtype).copy_(matrix)


def worst_case_operands(m: int, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """int8 [m, k] and [k, n] operands at the ends of the range, whose pairs of products are
    the ones that saturate an int16 pair sum (255 * -128 * 2 after the +128 shift that
    u8 x s8 instructions need, -128 * -128 * 2 without it): every row and column holds only
    -128, only 127, or the two alternating."""
    alternating = np.resize(np.array([-128, 127], dtype=np.int8), k)
    patterns = [np.full(k, -128, np.int8), np.full(k, 127, np.int8), alternating]
    lhs = np.stack([patterns[i % 3] for i in range(m)])
    rhs = np.stack([patterns[j % 3] for j in range(n)], axis=1)
    return lhs, rhs


WORST_CASE_SHAPES = (
    (3, INT8_GEMM_MAX_K, 3),
    (1, 64, 1000),
    (5, 4099, 7),
    (64, 300, 64),
    (300, 7, 129),
)
"""The shapes `int8_gemm_is_exact` checks: K at `INT8_GEMM_MAX_K`, one row (a GEMV kernel),
K and N not multiples of the instructions' 4 and 16, and blocks past one register tile."""


@functools.cache
def int8_gemm_is_exact() -> bool:
    """Whether torch's int8 GEMM gives the exact sums on worst-case operands
    (`worst_case_operands`) of every shape in `WORST_CASE_SHAPES`, on one thread and on
    torch's current count: a kernel that sums pairs of products in int16 with saturation
    (u8 x s8 without VNNI) fails this."""
    for threads in sorted({1, torch.get_num_threads()}):
        with torch_threads(threads):
            for m, k, n in WORST_CASE_SHAPES:
                lhs, rhs = worst_case_operands(m, k, n)
                exact = lhs.astype(np.int64) @ rhs.astype(np.int64)
                got = torch._int_mm(torch.from_numpy(lhs), torch.from_numpy(rhs))
                if not np.array_equal(got.numpy(), exact):
                    return False
    return True


INT8_DOT_PRODUCT_FEATURES = ("avx512_vnni", "avx_vnni", "amx_int8")
"""x86 features (`torch.cpu.get_capabilities`) whose int8 dot products add u8 x s8 products
into int32 lanes without an int16 intermediate, which oneDNN's int8 kernels use."""


def int8_gemm_is_fast() -> bool:
    """Whether the CPU has int8 dot-product instructions (`INT8_DOT_PRODUCT_FEATURES`), with
    which torch's int8 GEMM (oneDNN) ran 4-9x as fast as torch's float32 GEMM on the zoo's
    shapes (AVX512-VNNI); without them it ran 25x slower (x86 without VNNI, torch 2.13)."""
    capabilities = torch.cpu.get_capabilities()
    return any(capabilities.get(feature, False) for feature in INT8_DOT_PRODUCT_FEATURES)


@functools.cache
def int8_gemm_is_fast_and_exact() -> bool:
    """`int8_gemm_is_fast` and `int8_gemm_is_exact`, found once per process."""
    return int8_gemm_is_fast() and int8_gemm_is_exact()


def int8_gemms_enabled() -> bool:
    """Whether weights prepared now use int8 GEMMs: the caller's choice (`int8_gemms`),
    else this CPU's (`int8_gemm_is_fast_and_exact`)."""
    chosen = _ENABLED.get()
    return int8_gemm_is_fast_and_exact() if chosen is None else chosen


@contextmanager
def int8_gemms(enabled: bool) -> Iterator[None]:
    """Weights prepared inside use int8 GEMMs or not, whatever the CPU (tests and bench A/B:
    a program prepares its weights on its first run). Enabling them where they are not
    exact (`int8_gemm_is_exact`) raises."""
    if enabled and not int8_gemm_is_exact():
        raise RuntimeError(NOT_EXACT_HERE)
    token = _ENABLED.set(enabled)
    try:
        yield
    finally:
        _ENABLED.reset(token)
