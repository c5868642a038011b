"""matmul and softmax (the attention ops), with their per-op plans."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    TensorType,
)
from xdsl.interpreter import (
    Interpreter,
    impl,
    register_impls,
)
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import InterpretationError

from dg.dialects import dghw
from dg.runtime.exact import centered_magnitude_bound, exact_batched_matmul, exact_chunk_length
from dg.runtime.kernels.common import (
    INT32_MAX,
    KernelFunctions,
    check_int32,
    dense_array_values,
    numpy_dtype,
)


@dataclass(frozen=True)
class MatmulPlan:
    """A `dghw.matmul`'s zero points and the static bounds that pick its accumulation.

    Every product (l - lhs_zp)(r - rhs_zp) has magnitude <= `product_bound` (int8
    operands), so every partial sum of K of them, in any order, has magnitude
    <= K * product_bound. K <= `chunk` (`exact_chunk_length`): one float32 GEMM
    is exact and its result (< 2^24) is the int32 result, with nothing to check.
    K * product_bound <= 2^31 - 1: the chunks add up in int32 without a wrap and
    the result fits int32. Otherwise they add up in int64 and the result's range
    is checked.
    """

    lhs_zp: int
    rhs_zp: int
    product_bound: int
    chunk: int

    @staticmethod
    def prepare(op: dghw.MatmulOp) -> MatmulPlan:
        lhs_zp, rhs_zp = op.lhs_zp.value.data, op.rhs_zp.value.data
        lhs_bound = centered_magnitude_bound(numpy_dtype(op.lhs.type), lhs_zp)
        rhs_bound = centered_magnitude_bound(numpy_dtype(op.rhs.type), rhs_zp)
        return MatmulPlan(
            lhs_zp, rhs_zp, lhs_bound * rhs_bound, exact_chunk_length(lhs_bound, rhs_bound)
        )

    def apply(self, lhs: np.ndarray, rhs: np.ndarray, op: Operation) -> np.ndarray:
        # Centered into C-contiguous float32 (exact: |x - zp| <= 255): the operands
        # are often transposed views, and numpy's batched matmul of strided
        # operands is several times slower than of contiguous ones.
        lhs_c = np.subtract(lhs, self.lhs_zp, dtype=np.float32, order="C")
        rhs_c = np.subtract(rhs, self.rhs_zp, dtype=np.float32, order="C")
        k = lhs.shape[-1]
        if k <= self.chunk:
            return np.matmul(lhs_c, rhs_c).astype(np.int32)
        if k * self.product_bound <= INT32_MAX:
            return exact_batched_matmul(lhs_c, rhs_c, self.chunk, np.int32)
        acc = exact_batched_matmul(lhs_c, rhs_c, self.chunk)
        check_int32(acc, op)
        return acc.astype(np.int32)


@dataclass(frozen=True)
class SoftmaxPlan:
    """A `dghw.softmax` prepared once: its table, and whether its rows need the sum check.

    With entries >= 0, entry 0 >= 1 (the row maximum reads it) and `extent(axis) *
    max(table) <= 2^31 - 1`, every row's sum lies in [1, 2^31 - 1] statically: the
    verifier's bound, checked again here so that an unverified module keeps its report.
    Such rows take `divided_in_float64`; any other table the int64 definition.
    """

    axis: int
    table: np.ndarray
    """The exp table as int64 [256]."""
    table512: np.ndarray | None
    """512 * the table as float64 [256] when every sum is in range statically, else None."""

    @staticmethod
    def prepare(op: dghw.SoftmaxOp) -> SoftmaxPlan:
        axis = op.axis.value.data
        table = dense_array_values(op.exp_table, "<i4", np.int64)
        extent = cast(TensorType[Attribute], op.input.type).get_shape()[axis]
        in_range = (
            extent != DYNAMIC_INDEX
            and int(table.min()) >= 0
            and int(table[0]) >= 1
            and extent * int(table.max()) <= INT32_MAX
        )
        return SoftmaxPlan(axis, table, (512 * table).astype(np.float64) if in_range else None)

    def apply(self, x: np.ndarray, op: Operation) -> np.ndarray:
        # The rows as the last axis (a view): the reductions and the per-row operands
        # then run over contiguous rows when x's memory has them so, as after the
        # transposes around an attention softmax, instead of over 2-element inner loops.
        rows = np.moveaxis(x, self.axis, -1)
        # max(x) - x lies in [0, 255]: an index into the table.
        index = np.subtract(rows.max(axis=-1, keepdims=True), rows, dtype=np.intp)
        if self.table512 is not None:
            return np.moveaxis(self.divided_in_float64(index), -1, self.axis)
        e = self.table[index]
        total = e.sum(axis=-1, keepdims=True)
        if total.size and (total.min() < 1 or total.max() > INT32_MAX):
            raise InterpretationError(
                f"{op.name}: exp sums {total.min()}..{total.max()} leave [1, 2^31 - 1]"
            )
        # floor((2 * 256 * e + sum) / (2 * sum)): 256 * e / sum rounded half up; int64
        # cannot overflow (512 * e < 2^40).
        out = (512 * e + total) // (2 * total)
        out -= 128
        np.clip(out, -128, 127, out=out)
        return np.moveaxis(out.astype(np.int8), -1, self.axis)

    def divided_in_float64(self, index: np.ndarray) -> np.ndarray:
        """The result for `index` = max - x, rows on the last axis, computed in float64.

        It is min(floor((512 e - 255 sum) / (2 sum)), 127): floor((512 e + sum) /
        (2 sum)) - 128 is that floor, and e >= 0 keeps it >= -128, so only the upper
        clamp acts. Exact: 512 e, 512 sum (any order), 255 sum and 2 sum are
        integers below 2^41, which float64 holds, so no step before the division
        rounds (a product or sum whose exact value is representable is returned
        exactly); the division is correctly rounded (IEEE), its quotient lies in
        [-127.5, 128.5], where that rounding moves it by <= 2^-45, while a quotient
        that is not an integer lies >= 1 / (2 sum) > 2^-32 below the next integer:
        the rounded quotient has the exact one's floor.
        """
        table512 = self.table512
        assert table512 is not None
        scaled = table512[index]  # 512 e
        total512 = scaled.sum(axis=-1, keepdims=True)  # 512 sum
        scaled -= total512 * (255 / 512)  # 255 sum
        scaled /= total512 * (1 / 256)  # 2 sum
        np.floor(scaled, out=scaled)
        np.minimum(scaled, 127, out=scaled)
        return scaled.astype(np.int8)


@register_impls
@dataclass
class SequenceFunctions(KernelFunctions):
    """The sequence family's dghw ops."""

    @impl(dghw.SoftmaxOp)
    def run_softmax(
        self, interpreter: Interpreter, op: dghw.SoftmaxOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        return (self.planned(op, SoftmaxPlan.prepare).apply(x, op),)

    @impl(dghw.MatmulOp)
    def run_matmul(
        self, interpreter: Interpreter, op: dghw.MatmulOp, args: tuple[np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray]:
        lhs, rhs = args
        return (self.planned(op, MatmulPlan.prepare).apply(lhs, rhs, op),)
