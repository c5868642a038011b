"""The rescale of an accumulate op's bias-less sums (a float32 GEMM's or float taps', or an
int8 GEMM's int32) to int8, the bias folded in: the int32 accumulator is never formed
(docs/dghw.md, "Requantizing float32 sums").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from dg.dialects import dghw
from dg.runtime.exact import one_thread_matmul
from dg.runtime.kernels.common import clip_in_place, numpy_dtype, runs_in_torch
from dg.runtime.kernels.quantization import F64_EXACT_LIMIT, clip_window, folded_offset
from dg.runtime.threads import run_blocks_in_parts

TORCH_DTYPES = {np.dtype(np.int8): torch.int8, np.dtype(np.int32): torch.int32}

SUM_BLOCK = 1 << 17
"""Elements `SumRequantization.apply` handles at a time: its float64 block (1 MB) stays
in cache, and each torch call covers enough elements to amortize its several us of
dispatch (measured best among 2^15 .. 2^18: 25-40% faster than numpy's five passes)."""


@dataclass(frozen=True)
class SmallSumRequantization:
    """`SumRequantization`'s arithmetic as numpy passes over the whole map: the same float64
    operations (a multiply, then the add), so the same integers."""

    factor: np.ndarray
    offset: np.ndarray
    clamp_min: int
    clamp_max: int
    dtype: np.dtype[Any]

    def apply(self, sums: np.ndarray) -> np.ndarray:
        v = np.multiply(sums, self.factor, dtype=np.float64)
        v += self.offset
        np.floor(v, out=v)
        np.maximum(v, self.clamp_min, out=v)
        np.minimum(v, self.clamp_max, out=v)
        return v.astype(self.dtype)  # integers in the clamp


@dataclass(frozen=True)
class SumRequantization:
    """`dghw.rescale` of bias + g, for integer sums g [..., C] with |g| <= a static
    `sum_bound` (float32 of a one-chunk GEMM or float depthwise taps: 2^24; int32 of an
    int8 GEMM: K * 2^14), per channel:

        clamp(floor(g * m 2^-s + (offset + bias * m) 2^-s), clamp_min, clamp_max)

    in float64, with `offset` the rescale's folded offset (`folded_offset`): one
    multiply-add pass (torch's `addcmul`, fused or not), a floor, a clamp and the
    conversion. `prepare` takes the clip window [low, high] of each channel
    (`clip_window`, as `ClippedFloatRescale`) shifted by the bias, [low - bias,
    high - bias], with a bound beyond -+sum_bound replaced by it (no g lies there).
    float32 and int32 sums convert to float64 exactly. Inside the window each step
    is exact: |g| * m and |offset + bias * m| are at most 2^53 (checked, else None),
    and the sum is (x * m + offset) * 2^-s for the accumulator x = g + bias, which
    the window bounds by 2^53 * 2^-s.
    Outside it every operation is still a correctly rounded, non-decreasing
    function of g (m > 0), so a g below the window gets at most the exact value
    at its lower end, whose floor is clamp_min: the clamp gives clamp_min, as the
    rescale does (likewise above). The window is never empty (checked).
    """

    factor: torch.Tensor
    """m * 2^-s per channel, float64 [C], exact."""
    offset: torch.Tensor
    """(offset + bias * m) * 2^-s per channel, float64 [C], exact."""
    clamp_min: int
    clamp_max: int
    dtype: torch.dtype
    channels: int
    small: SmallSumRequantization
    """The same form in numpy, for maps of fewer than `TORCH_MIN_ELEMENTS` sums."""
    integers: tuple[tuple[int, int, int], ...]
    """Per channel (m, s, offset + bias * m): `factor` is m 2^-s, `offset` the last 2^-s."""

    @staticmethod
    def prepare(op: dghw.RescaleOp, bias: np.ndarray, sum_bound: int) -> SumRequantization | None:
        """The form for `op` of integer sums g, |g| <= `sum_bound`, whose channels have the
        integer `bias` [C]."""
        multipliers, shifts = op.multiplier.get_values(), op.shift.get_values()
        if numpy_dtype(op.input.type) != np.int32 or len(multipliers) not in (1, len(bias)):
            return None
        factors, offsets, integers = [], [], []
        for channel, b in enumerate(bias.tolist()):
            m, s = multipliers[channel % len(multipliers)], shifts[channel % len(shifts)]
            window = clip_window(op, m, s)
            if window is None:
                return None
            low = max(window[0] - b, -sum_bound)
            high = min(window[1] - b, sum_bound)
            offset = folded_offset(op, m, s) + b * m
            if low > high or max(abs(low), abs(high)) * m > F64_EXACT_LIMIT:
                return None
            if abs(offset) > F64_EXACT_LIMIT:
                return None
            factors.append(math.ldexp(m, -s))
            offsets.append(math.ldexp(offset, -s))
            integers.append((m, s, offset))
        clamp_min, clamp_max = op.clamp_min.value.data, op.clamp_max.value.data
        result_dtype = numpy_dtype(op.result.type)
        small = SmallSumRequantization(
            np.array(factors), np.array(offsets), clamp_min, clamp_max, result_dtype
        )
        return SumRequantization(
            torch.from_numpy(small.factor),  # the same float64 memory in both forms
            torch.from_numpy(small.offset),
            clamp_min,
            clamp_max,
            TORCH_DTYPES[result_dtype],
            len(bias),
            small,
            tuple(integers),
        )

    def apply(self, sums: np.ndarray) -> np.ndarray:
        """The rescaled sums, a block of rows [R, C] at a time (`SUM_BLOCK`), the [C]
        factor and offset broadcast over a block's rows (torch vectorizes that, and
        reads no map-sized parameters). A map of one block takes four torch calls:
        at batch 1 most maps are small, and torch's indexing costs microseconds. The
        blocks of a map of `PARALLEL_WORK` elements are split over the caller's threads
        (`run_in_parts`)."""
        if not runs_in_torch(sums.size):
            return self.small.apply(sums)
        return self.apply_in_torch(sums)

    def apply_in_torch(self, sums: np.ndarray) -> np.ndarray:
        """`apply` in torch's passes, each on one torch thread: runs of blocks on the
        caller's threads, each block's float64 temporary in cache. (One torch call per pass
        over the whole map on several threads, blocks of 16 MB, was slower on 2 threads
        than on 1: ViT-Ti at batch 32 spent 160 ms against 130 ms in these passes.)"""
        rows = torch.from_numpy(np.ascontiguousarray(sums)).view(-1, self.channels)
        count = rows.shape[0]
        block_rows = max(1, SUM_BLOCK // max(1, self.channels))
        if count <= block_rows:
            v = torch.addcmul(self.offset, rows, self.factor)
            v.floor_().clamp_(self.clamp_min, self.clamp_max)
            return v.to(self.dtype).numpy().reshape(sums.shape)  # integers in the clamp
        out = torch.empty(rows.shape, dtype=self.dtype)

        def requantize(start: int, end: int, scaled: torch.Tensor) -> None:
            self.requantize_into(rows[start:end], out[start:end], scaled)

        def scratch() -> torch.Tensor:
            return torch.empty((block_rows, self.channels), dtype=torch.float64)

        run_blocks_in_parts(count, block_rows, requantize, scratch, sums.size)
        return out.numpy().reshape(sums.shape)

    def requantize_into(self, rows: torch.Tensor, out: torch.Tensor, scaled: torch.Tensor) -> None:
        """The rescaled sums of `rows` [R, C] written to `out` [R, C], through the float64
        `scaled` [>= R, C] (a block's scratch, reused from block to block)."""
        v = scaled[: rows.shape[0]]
        torch.addcmul(self.offset, rows, self.factor, out=v)
        v.floor_().clamp_(self.clamp_min, self.clamp_max)
        out.copy_(v)  # integers within the clamp: exact


@dataclass(frozen=True)
class ScaledGemm:
    """A `SumRequantization` folded into a small GEMM's weights: one float64 GEMM gives each
    sum's rescaled value, three passes its int8 result (docs/dghw.md, "Requantizing float32
    sums"). For rows r and the exact integer weights w [K, N] of the op's GEMM (its sums
    g = r @ w), per channel (m, s, offset) of `integers`:

        v = [r, 1] @ [w m 2^-s; offset 2^-s - clamp_min] = (g m + offset) 2^-s - clamp_min

    exactly: every product r w m 2^-s and the offset term (the product of the rows' ones
    column with the matrix's last row) are integer multiples of 2^-s, and `prepare`
    checks that their magnitudes add up to at most 2^53 2^-s, so every partial sum of
    them is exact, in any order, fused or not. Then clamp(floor(v + clamp_min)) =
    clamp_min + floor(min(max(v, 0), top)), top = clamp_max - clamp_min (an integer clip
    commutes with the floor), the floor of a value in [0, top] is its truncation to
    uint8, and adding clamp_min modulo 256 makes it the int8 pattern. Against
    `SmallSumRequantization` (a float32 GEMM, then six passes): 31 against 23 us for the
    digits transformer's [256, 32] x [32, 32] FCs. The offset as the GEMM's last term
    saves a pass over the results: the digits transformer's q/k/v [256, 32] x [32, 96]
    took 48 against 54 us.
    """

    matrix: np.ndarray
    """float64 [K + 1, N], C-ordered: w m 2^-s per column, then the row of offset 2^-s -
    clamp_min."""
    top: float
    low: np.uint8
    """clamp_min modulo 256."""

    @staticmethod
    def prepare(
        requantize: SumRequantization, matrix: np.ndarray, rows_bound: int
    ) -> ScaledGemm | None:
        """For the exact integer weights `matrix` [K, N] and rows of magnitude at most
        `rows_bound`, where every channel's terms stay within 2^53 of its grid and the
        result is int8; else None."""
        if requantize.dtype != torch.int8:
            return None
        clamp_min = requantize.clamp_min
        columns = np.abs(matrix.astype(np.int64)).sum(axis=0).tolist()
        for reach, (m, s, offset) in zip(columns, requantize.integers, strict=True):
            if rows_bound * reach * abs(m) + abs(offset) + (abs(clamp_min) << s) > F64_EXACT_LIMIT:
                return None
        small = requantize.small
        scaled = matrix.astype(np.float64) * small.factor  # w m: at most 2^53, exact
        offsets = small.offset - clamp_min
        return ScaledGemm(
            # C-ordered: OpenBLAS's GEMM is faster by it than by the transposed weights
            np.ascontiguousarray(np.vstack([scaled, offsets])),
            float(requantize.clamp_max - clamp_min),
            np.uint8(clamp_min % 256),
        )

    @staticmethod
    def side_by_side(forms: Sequence[ScaledGemm]) -> ScaledGemm | None:
        """The forms of GEMMs on the same rows as one, their columns side by side, where they
        share their clamp (`top`, `low`): each column's terms, and so its exactness, are
        its own form's."""
        first = forms[0]
        if any((form.top, form.low) != (first.top, first.low) for form in forms):
            return None
        matrix = np.ascontiguousarray(np.hstack([form.matrix for form in forms]))
        return ScaledGemm(matrix, first.top, first.low)

    def apply(self, rows: np.ndarray) -> np.ndarray:
        """The int8 results [M, N] for the rows [M, K]."""
        m, k = rows.shape
        terms = np.empty((m, k + 1))
        terms[:, :k] = rows
        terms[:, k] = 1.0  # takes the offset row
        v = one_thread_matmul(terms, self.matrix)
        clip_in_place(v, 0.0, self.top)
        q = v.astype(np.uint8)  # the floor of a value in [0, top]
        if self.low:
            q += self.low  # modulo 256: clamp_min + floor as an int8 pattern
        return q.view(np.int8)
