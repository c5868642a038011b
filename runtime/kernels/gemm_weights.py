"""conv2d and fully_connected weights prepared once for exact GEMMs: float32 (`GemmWeights`,
on any CPU) or int8 into int32 (`Int8GemmWeights`, where the int8 GEMM is fast and exact);
docs/dghw.md, "Exactness of the device model's GEMMs".
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from xdsl.ir import Operation

from dg.runtime.exact import (
    F32_EXACT_LIMIT,
    FLOAT_INT8_GEMM_MACS,
    SPLIT_BLOCK_ROWS,
    centered_magnitude_bound,
    exact_split_gemm,
    exact_weight_splits,
    float_gemm,
    may_leave_int32,
    one_thread_matmul,
)
from dg.runtime.int8_gemm import (
    INT8_GEMM_MAX_K,
    INT8_PRODUCT_BOUND,
    gemm_operand,
    int8_gemm,
)
from dg.runtime.kernels.common import check_int32, per_item_parameters

WIDEN_PER_BLOCK_ABOVE = 1 << 22
"""Weight matrices of more elements (16 MB as float32) stay int8, in the constant's own bytes,
and a GEMM widens them one block of rows at a time (`WidenedRows`): a production runtime's
memory, where a float32 copy of VGG-16's weights would add 552 MB to their 138 MB. Smaller
ones are widened once, which saves the per-call widening (a pass over the weights)."""

WIDENED_BLOCK_ELEMENTS = 1 << 20
"""Elements of one widened block (4 MB as float32): it stays in cache between its widening
and the GEMM that reads it, so a GEMM reads the int8 weights once from memory."""


@dataclass(frozen=True)
class WidenedRows:
    """An integer [K, N] matrix kept as stored, whose rows are read as (w - zero_point) in
    `dtype`, a range of rows at a time: the whole matrix is never widened."""

    stored: np.ndarray
    zero_point: int
    dtype: torch.dtype
    """Exact for every w - zero_point: float32 for a GEMM, int16 for integer sums."""
    tensor: torch.Tensor = field(init=False, compare=False, repr=False)
    """`stored` as a tensor (shared memory): torch's int8 casts are vectorized, numpy's
    are not (a third of the time on VGG-16's first Linear)."""

    def __post_init__(self) -> None:
        with warnings.catch_warnings():
            # A constant's bytes are read-only; they are only ever read here.
            warnings.filterwarnings("ignore", "The given NumPy array is not writable")
            object.__setattr__(self, "tensor", torch.from_numpy(self.stored))

    @property
    def shape(self) -> tuple[int, ...]:
        return self.stored.shape

    def __getitem__(self, rows: slice, /) -> np.ndarray:
        # Widened before the subtraction, which `dtype` holds exactly (|w - zp| <= 255).
        block = self.tensor[rows].to(self.dtype)
        if self.zero_point:
            block -= self.zero_point
        return block.numpy()


def block_splits(splits: tuple[int, ...], k: int, rows: int) -> tuple[int, ...]:
    """`splits` with a further split every `rows` rows inside each chunk: each part of an
    exact chunk is exact too (its partial sums are among the chunk's, docs/dghw.md)."""
    bounds = (0, *splits, k)
    return tuple(
        split
        for start, end in zip(bounds[:-1], bounds[1:], strict=True)
        for split in range(start, end, rows)
        if split
    )


@dataclass(frozen=True)
class GemmWeights:
    """An accumulating op's weights and bias, prepared once for exact float32 GEMMs."""

    matrix: np.ndarray | WidenedRows
    """(w - weight_zp) as a float32 [K, N] matrix, rows in the op's patch order: an array,
    or above `WIDEN_PER_BLOCK_ABOVE` elements the int8 weights, widened per chunk."""
    bias: np.ndarray
    """int64 [N]."""
    bias32: np.ndarray
    """The bias as int32 [N], for `accumulate_in_int32`."""
    splits: tuple[int, ...]
    """Where K is split into chunks one float32 GEMM computes exactly (`exact_weight_splits`;
    for `WidenedRows`, further into blocks of `WIDENED_BLOCK_ELEMENTS`)."""
    may_overflow: bool
    """Whether some accumulator can leave int32; when False the range check is skipped."""
    _tiled_bias: dict[tuple[int, ...], tuple[Any, ...]] = field(
        default_factory=dict, compare=False, repr=False
    )
    """bias32 tiled over an item's rows, by item shape (`per_item_parameters`)."""

    @staticmethod
    def prepare(
        weight: np.ndarray, weight_zp: int, bias: np.ndarray, x_range: tuple[int, int]
    ) -> GemmWeights:
        """`weight`: the integer [K, N] weight matrix; `x_range`: x - x_zp's.

        A matrix above `WIDEN_PER_BLOCK_ABOVE` int8 elements is read a block at a
        time here too, so no copy of it is made, not even to center it.
        """
        # int16 holds w - zp of int8 w and zp (|w - zp| <= 255): an int64 copy would
        # take 8 bytes per element.
        narrow = weight.dtype == np.int8 and -128 <= weight_zp <= 127
        centered_dtype = np.int16 if narrow else np.int64
        x_bound = max(-x_range[0], x_range[1])
        if narrow and weight.size > WIDEN_PER_BLOCK_ABOVE:
            centered = WidenedRows(weight, weight_zp, torch.int16)
            rows = max(1, WIDENED_BLOCK_ELEMENTS // max(1, weight.shape[1]))
            return GemmWeights(
                matrix=WidenedRows(weight, weight_zp, torch.float32),
                bias=bias.astype(np.int64),
                bias32=bias.astype(np.int32),
                splits=block_splits(exact_weight_splits(centered, x_range), len(weight), rows),
                may_overflow=may_leave_int32(centered, bias, x_bound),
            )
        whole = np.subtract(weight, weight_zp, dtype=centered_dtype)
        return GemmWeights(
            # In the weight's own memory order: conv and FC pass [N, K] weights transposed,
            # which BLAS reads as they are; a C-order [K, N] copy would be a slow strided pass.
            matrix=whole.astype(np.float32, order="K"),
            bias=bias.astype(np.int64),
            bias32=bias.astype(np.int32),
            splits=exact_weight_splits(whole, x_range),
            may_overflow=may_leave_int32(whole, bias, x_bound),
        )

    def one_gemm_sums(self) -> tuple[np.ndarray, int] | None:
        """(the bias, a bound on |sums|) where one float32 GEMM gives the accumulators less
        the bias (`sums`) and int32 holds every partial sum: one chunk, no int32 overflow,
        a matrix widened once; else None."""
        if self.splits or self.may_overflow or isinstance(self.matrix, WidenedRows):
            return None
        return self.bias, F32_EXACT_LIMIT

    def sums(self, patches: np.ndarray) -> np.ndarray:
        """patches @ matrix in float32: the exact sums, where `one_gemm_sums` holds."""
        return float_gemm(patches, self.matrix)

    def accumulate(self, patches: np.ndarray, op: Operation, items: int) -> np.ndarray:
        """bias + patches @ matrix as int32 [M, N], for float32 [M, K] centered patches.

        `items` divides M: the patches are `items` runs of M / items rows (one per
        batch item), which lets the int32 path add a bias tiled over a whole run.
        """
        if not self.may_overflow:
            return self.accumulate_in_int32(patches, items)
        acc = exact_split_gemm(patches, self.matrix, self.splits)
        acc += self.bias
        check_int32(acc, op)
        return acc.astype(np.int32)

    def accumulate_in_int32(self, patches: np.ndarray, items: int) -> np.ndarray:
        """`accumulate` when no partial sum can leave int32 (`may_overflow` is False).

        Then int32 holds every chunk sum plus the bias exactly, and each chunk's
        float32 result (an exact integer below 2^24) converts to int32 exactly
        inside the add: one pass per chunk instead of three (to int64, add, to int32).
        The adds run over [items, M / items * N] rows with the bias tiled to a row
        (`per_channel_rows`): the same sums, without N-element inner loops.
        """
        m, n = patches.shape[0], self.matrix.shape[1]
        bounds = (0, *self.splits, patches.shape[1])
        first = float_gemm(patches[:, : bounds[1]], self.matrix[: bounds[1]])
        rows, (bias,) = per_item_parameters(self._tiled_bias, by_item(first, items), (self.bias32,))
        # float32 -> int32 of exact integers: exact
        acc = np.add(rows, bias, dtype=np.int32, casting="unsafe")
        for start, end in zip(bounds[1:-1], bounds[2:], strict=True):
            chunk = float_gemm(patches[:, start:end], self.matrix[start:end]).reshape(acc.shape)
            np.add(acc, chunk, out=acc, dtype=np.int32, casting="unsafe")
        return acc.reshape(m, n)


@dataclass(frozen=True)
class Int8GemmWeights:
    """An accumulating op's weights and bias, prepared once for exact int8 GEMMs
    (`int8_gemm`): the int8 weights as they are stored, and the input zero point folded
    into the bias, so the GEMM reads the op's int8 input as it is (docs/dghw.md, item 7 of
    "Exactness of the device model's GEMMs"):

        bias[n] + sum_k (x - input_zp) w[k, n] = sum_k x w[k, n] + folded[n],
        folded[n] = bias[n] - input_zp * sum_k w[k, n].
    """

    matrix: torch.Tensor
    """w as int8 [K, N], sharing the constant's bytes (rows in the op's patch order)."""
    input_zp: int
    folded: np.ndarray
    """The folded bias, int64 [N]."""
    may_overflow: bool
    """Whether some accumulator can leave int32 (`may_leave_int32`)."""
    small: np.ndarray | None
    """The weights as float32 [K, N], where one float32 GEMM of int8 rows is exact (K at
    most `FLOAT32_INT8_MAX_K`) and the matrix is small (`FLOAT_INT8_GEMM_MACS`): `sums` of a few
    rows then skips the int8 GEMM's torch calls."""
    _tiled: dict[tuple[int, ...], tuple[Any, ...]] = field(
        default_factory=dict, compare=False, repr=False
    )
    """The folded bias as int32, tiled over an item's rows, by item shape
    (`per_item_parameters`)."""

    @staticmethod
    def prepare(
        weight: np.ndarray, weight_zp: int, bias: np.ndarray, input_zp: int
    ) -> Int8GemmWeights | None:
        """For the integer [K, N] `weight`, where it is int8 with weight_zp 0 (dg's symmetric
        weights) and K is at most `INT8_GEMM_MAX_K`; else None."""
        if weight.dtype != np.int8 or weight_zp != 0 or weight.shape[0] > INT8_GEMM_MAX_K:
            return None
        # Read as int16 a block of rows at a time: |w| of int8 -128 does not fit int8.
        wide = WidenedRows(weight, 0, torch.int16)
        columns = np.zeros(weight.shape[1], dtype=np.int64)
        for start in range(0, weight.shape[0], SPLIT_BLOCK_ROWS):
            columns += wide[start : start + SPLIT_BLOCK_ROWS].sum(axis=0, dtype=np.int32)
        x_bound = centered_magnitude_bound(np.dtype(np.int8), input_zp)
        return Int8GemmWeights(
            matrix=gemm_operand(wide.tensor),
            input_zp=input_zp,
            folded=bias.astype(np.int64) - input_zp * columns,
            may_overflow=may_leave_int32(wide, bias, x_bound),
            small=small_float_matrix(weight),
        )

    def one_gemm_sums(self) -> tuple[np.ndarray, int] | None:
        """(the folded bias, a bound on |sums|: K * 2^14 < 2^31) where no accumulator can
        leave int32; else None."""
        if self.may_overflow:
            return None
        return self.folded, self.matrix.shape[0] * INT8_PRODUCT_BOUND

    def sums(self, rows: np.ndarray) -> np.ndarray:
        """sum_k x w[k, n] as [M, N] exact integers: float32 for a GEMM of at most
        `FLOAT_INT8_GEMM_MACS` on a `small` matrix (`one_thread_matmul`), else int32
        (`int8_gemm`)."""
        if self.small is not None and rows.shape[0] * self.small.size <= FLOAT_INT8_GEMM_MACS:
            return one_thread_matmul(rows.astype(np.float32), self.small)
        return int8_gemm(rows, self.matrix)

    def accumulate(self, rows: np.ndarray, op: Operation, items: int) -> np.ndarray:
        """bias + sum_k (x - input_zp) w as int32 [M, N], for the int8 [M, K] `rows` of x.

        The GEMM's sums are exact int32 (K <= `INT8_GEMM_MAX_K`). Without `may_overflow`
        the folded bias and the result fit int32 too (both are bounded by the accumulator
        bound), so the add runs in int32, over rows of one batch item (`items`, as
        `GemmWeights.accumulate_in_int32`); else in int64, range-checked.
        """
        sums = int8_gemm(rows, self.matrix)
        if self.may_overflow:
            acc = sums + self.folded
            check_int32(acc, op)
            return acc.astype(np.int32)
        rows, (bias,) = per_item_parameters(
            self._tiled, by_item(sums, items), (self.folded.astype(np.int32),)
        )
        np.add(rows, bias, out=rows)  # a view of sums
        return sums


FLOAT32_INT8_MAX_K = F32_EXACT_LIMIT // INT8_PRODUCT_BOUND
"""The longest reduction of int8 products whose every partial sum a float32 GEMM holds exactly
(1,024 terms): each is an integer of magnitude <= K * 2^14 <= 2^24 (docs/dghw.md, item 8)."""


def small_float_matrix(weight: np.ndarray) -> np.ndarray | None:
    """The int8 [K, N] `weight` as float32, where `Int8GemmWeights.sums` may use it: C-ordered,
    although an FC's [N, K] weights come transposed, because OpenBLAS multiplies by a
    C-ordered matrix faster ([256, 32] x [32, 32]: 6.0 against 8.1 us; the copy is made once
    and the matrix is small)."""
    if weight.shape[0] > FLOAT32_INT8_MAX_K or weight.size > FLOAT_INT8_GEMM_MACS:
        return None
    return np.ascontiguousarray(weight, dtype=np.float32)


def by_item(sums: np.ndarray, items: int) -> np.ndarray:
    """[M, N] sums as [items, M / items, N]: one run of rows per batch item (a view)."""
    m, n = sums.shape
    return sums.reshape(items, m // items if items else 0, n)


AnyGemmWeights = GemmWeights | Int8GemmWeights
"""The weights of a conv2d or fully_connected, prepared for one of the two GEMMs."""
