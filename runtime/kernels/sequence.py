"""matmul and softmax (the attention ops), with their per-op plans."""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TypeAlias, cast

import numpy as np
import torch
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    TensorType,
)
from xdsl.interpreter import (
    Interpreter,
    impl,
    impl_external,
    register_impls,
)
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import InterpretationError

from dg.dialects import dghw
from dg.runtime.exact import (
    centered_magnitude_bound,
    exact_batched_matmul,
    exact_chunk_length,
    float_gemm,
    one_blas_thread,
)
from dg.runtime.int8_gemm import (
    INT8_PRODUCT_BOUND,
    int8_batched_gemm,
    int8_gemm_into,
    int8_gemms_enabled,
    int8_tensor,
)
from dg.runtime.kernels.common import (
    INT32_MAX,
    KernelFunctions,
    centered_into,
    check_int32,
    dense_array_values,
    in_memory_order,
    inverse_order,
    memory_order,
    numpy_dtype,
    runs_in_torch,
    sole_per_tensor_int8_rescale,
)
from dg.runtime.kernels.quantization import rescale_plan
from dg.runtime.threads import run_blocks_in_parts


def exact_sums_as_int32(sums: np.ndarray) -> np.ndarray:
    """float32 sums of exact integers below 2^24 as int32, by torch's cast from
    `TORCH_MIN_ELEMENTS` (vectorized; numpy's float-to-int casts are not), by numpy's below
    it: the conversion of such an integer is exact either way."""
    if not runs_in_torch(sums.size):
        return sums.astype(np.int32)
    return torch.from_numpy(sums).to(torch.int32).numpy()


def centered_float32(x: np.ndarray, zero_point: int) -> np.ndarray:
    """x - zero_point as C-contiguous float32 (exact: int8 x, |x - zp| <= 255), of a strided
    view too (`centered_into`)."""
    return centered_into(np.empty(x.shape, np.float32), x, zero_point)


INT8_MATMUL_MAX_K = INT32_MAX // (4 * INT8_PRODUCT_BOUND)
"""The longest reduction `MatmulPlan.in_int8` takes: K * 2^16 <= 2^31 - 1 (32,767 terms)."""


INT8_MATMUL_MIN_MACS = 1 << 15
"""Multiply-adds per matrix from which `MatmulPlan` takes the int8 GEMMs, one call per
matrix: below it the calls cost more than they save (the digits transformer at batch 32:
68 GEMMs of 8 x 16 x 8 per matmul, 2.5x slower than one batched float32 matmul)."""


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
    int8: bool
    """Whether int8 GEMMs were enabled when the plan was made (`int8_gemms_enabled`)."""

    @staticmethod
    def prepare(op: dghw.MatmulOp) -> MatmulPlan:
        lhs_zp, rhs_zp = op.lhs_zp.value.data, op.rhs_zp.value.data
        dtypes = numpy_dtype(op.lhs.type), numpy_dtype(op.rhs.type)
        lhs_bound = centered_magnitude_bound(dtypes[0], lhs_zp)
        rhs_bound = centered_magnitude_bound(dtypes[1], rhs_zp)
        chunk = exact_chunk_length(lhs_bound, rhs_bound)
        int8 = int8_gemms_enabled() and dtypes == (np.dtype(np.int8), np.dtype(np.int8))
        return MatmulPlan(lhs_zp, rhs_zp, lhs_bound * rhs_bound, chunk, int8)

    def takes_int8(self, lhs: np.ndarray, rhs: np.ndarray) -> bool:
        """Whether the matmul of these operands runs as int8 GEMMs, one per matrix."""
        m, k, n = lhs.shape[-2], lhs.shape[-1], rhs.shape[-1]
        return self.int8 and k <= INT8_MATMUL_MAX_K and m * k * n >= INT8_MATMUL_MIN_MACS

    def apply(self, lhs: np.ndarray, rhs: np.ndarray, op: Operation) -> np.ndarray:
        k = lhs.shape[-1]
        if self.takes_int8(lhs, rhs):
            return self.in_int8(lhs, rhs)
        # Centered into C-contiguous float32 (exact: |x - zp| <= 255): the operands
        # are often transposed views, and numpy's batched matmul of strided
        # operands is several times slower than of contiguous ones.
        lhs_c, rhs_c = centered_float32(lhs, self.lhs_zp), centered_float32(rhs, self.rhs_zp)
        if k <= self.chunk:
            return exact_sums_as_int32(float_gemm(lhs_c, rhs_c))
        if k * self.product_bound <= INT32_MAX:
            return exact_batched_matmul(lhs_c, rhs_c, self.chunk, np.int32)
        acc = exact_batched_matmul(lhs_c, rhs_c, self.chunk)
        check_int32(acc, op)
        return acc.astype(np.int32)

    def in_int8(self, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        """The matmul from int8 GEMMs of the operands as they are (`int8_batched_gemm`), the
        zero points applied after: with K terms,

            sum (l - lhs_zp)(r - rhs_zp) = sum l r - lhs_zp sum_k r[k, n]
                                           - rhs_zp sum_k l[m, k] + K lhs_zp rhs_zp.

        Each of the four terms has magnitude <= K * 2^14 (int8 values, zero points in
        [-128, 127]), so every partial sum of them is <= K * 2^16, which int32 holds for
        K <= `INT8_MATMUL_MAX_K`; the result is the exact int32 matmul."""
        acc = int8_batched_gemm(lhs, rhs)
        for term in self.zero_point_terms(lhs, rhs):
            acc -= term
        return acc

    def zero_point_terms(self, lhs: np.ndarray, rhs: np.ndarray) -> list[np.ndarray]:
        """What `in_int8` subtracts from the int32 sums of l r, for matrices [..., M, K] and
        [..., K, N]: rhs_zp sum_k l[m, k] as [..., M, 1] and lhs_zp sum_k r[k, n] - K lhs_zp
        rhs_zp as [..., 1, N], where the zero point is not 0. Whole-map reductions (torch's
        over the last axis of int8 into int32 took five times as long as numpy's, and per
        matrix they ran slower on two threads than on one)."""
        k, terms = lhs.shape[-1], []
        if self.rhs_zp:
            row_sums = lhs.sum(axis=-1, dtype=np.int32)[..., None]
            terms.append(np.multiply(row_sums, self.rhs_zp, dtype=np.int32))
        if self.lhs_zp:
            column_terms = rhs.sum(axis=-2, dtype=np.int32)[..., None, :]
            column_terms *= self.lhs_zp
            column_terms -= k * self.lhs_zp * self.rhs_zp
            terms.append(column_terms)
        return terms


MATMUL_GROUP = 1 << 17
"""Sums per group of matrices `RequantizedMatmul` finishes at once (512 KB of int32, in cache):
one zero-point pass and one rescale per group, not per matrix. Per 128 x 128 matrix, the
few-microsecond numpy calls of two threads queued for the GIL, and Llama s128's matmuls at
batch 32 ran slower on two threads than on one (188 against 122 ms)."""


MATMUL_THEN_RESCALE = "dghw.matmul_then_rescale"
"""The external impl (`impl_external`) the device model's plan runs a `requantized_matmul`
with: the matmul's operands in, the rescale's int8 result out."""


def requantized_matmul(op: Operation) -> dghw.RescaleOp | None:
    """The per-tensor rescale to int8 that is the only use of `op`'s result, when `op` is a
    `dghw.matmul` (attention's scores and its weighted values)."""
    return sole_per_tensor_int8_rescale(op) if isinstance(op, dghw.MatmulOp) else None


@dataclass(frozen=True)
class RequantizedMatmul:
    """A `requantized_matmul` group prepared once: the matmul's plan and the rescale's
    (`rescale_plan`: elementwise, as the rescale is per tensor, so it serves a group of
    matrices and, walked in memory order, the whole map)."""

    matmul: MatmulPlan
    rescale: Callable[[np.ndarray], np.ndarray]

    @staticmethod
    def prepare(rescale: dghw.RescaleOp) -> RequantizedMatmul:
        matmul = MatmulPlan.prepare(cast(dghw.MatmulOp, rescale.input.owner))
        return RequantizedMatmul(matmul, rescale_plan(rescale))

    def apply(self, lhs: np.ndarray, rhs: np.ndarray, op: Operation) -> np.ndarray:
        """The rescaled matmul. Of more than one group of matrices (`MATMUL_GROUP` sums) or
        of int8 GEMMs (`MatmulPlan.takes_int8`), a group at a time (`group_sums`): a
        group's exact sums (in cache) get the rescale before the next group's GEMMs, and
        the groups are split over the caller's threads (`run_in_parts`). The map-sized sums
        were written to memory and read back, and their rescale ran on one thread (Llama
        s256 at batch 32: 8.4 M sums per attention layer). Else the matmul, then the rescale
        over the map in its memory order (`in_memory_order`, as `per_element_rescale_plan`
        runs a per-tensor rescale)."""
        groups = self.group_sums(lhs, rhs)
        if groups is None:
            return in_memory_order(self.rescale, self.matmul.apply(lhs, rhs, op))
        sums_of, sums_dtype = groups
        (m, n), lead = (lhs.shape[-2], rhs.shape[-1]), lhs.shape[:-2]
        count = math.prod(lead)
        out = np.empty((count, m, n), np.int8)
        group = max(1, MATMUL_GROUP // (m * n))

        def multiply(start: int, end: int, sums: torch.Tensor) -> None:
            out[start:end] = self.rescale(sums_of(start, end, sums[: end - start]))

        def scratch() -> torch.Tensor:
            return torch.empty((group, m, n), dtype=sums_dtype)

        # numpy's float32 GEMMs on one BLAS thread: the groups are split over the caller's
        # threads already (the int8 GEMMs are torch's, on one torch thread per part).
        blas = one_blas_thread() if sums_dtype == torch.float32 else nullcontext()
        with blas:
            run_blocks_in_parts(count, group, multiply, scratch, math.prod(lhs.shape) * n)
        return out.reshape(*lead, m, n)

    def group_sums(self, lhs: np.ndarray, rhs: np.ndarray) -> GroupSums | None:
        """(the int32 sums of matrices [start, end) through a scratch tensor, its dtype) for
        `apply`'s groups, or None for the map at once. Of int8 GEMMs, one per matrix of the
        operands as they are, less the zero-point terms (`MatmulPlan.in_int8`; whole-map
        row and column sums, computed first). Of float32, for more than one group of
        matrices of one exact chunk (K <= `MatmulPlan.chunk`): the centred operands
        (`centered_float32`, once), numpy's batched float32 GEMM per group, its sums exact
        integers below 2^24 in any order, converted to int32 exactly."""
        plan = self.matmul
        (m, k), n, lead = lhs.shape[-2:], rhs.shape[-1], lhs.shape[:-2]
        count = math.prod(lead)
        if plan.takes_int8(lhs, rhs):
            return self.int8_group_sums(lhs, rhs), torch.int32
        if count * m * n <= MATMUL_GROUP or k > plan.chunk:
            return None
        lhs_c = centered_float32(lhs, plan.lhs_zp).reshape(count, m, k)
        rhs_c = centered_float32(rhs, plan.rhs_zp).reshape(count, k, n)

        def float_sums(start: int, end: int, sums: torch.Tensor) -> np.ndarray:
            # numpy's batched matmul (OpenBLAS's sgemm, IEEE float32 whatever torch's
            # precision setting): as fast as torch's bmm here (Llama s256's matmul steps at
            # batch 32: 412 against 393 ms, within the noise of this machine).
            return exact_sums_as_int32(
                np.matmul(lhs_c[start:end], rhs_c[start:end], out=sums.numpy())
            )

        return float_sums, torch.float32

    def int8_group_sums(
        self, lhs: np.ndarray, rhs: np.ndarray
    ) -> Callable[[int, int, torch.Tensor], np.ndarray]:
        """`group_sums` of int8 GEMMs, one per matrix, less the zero-point terms."""
        lhs_t, rhs_t = int8_tensor(lhs), int8_tensor(rhs)
        indices = list(np.ndindex(lhs.shape[:-2]))
        count = len(indices)
        # [count, M, 1] and [count, 1, N] views of the fresh terms: one row per matrix.
        terms = [t.reshape(count, *t.shape[-2:]) for t in self.matmul.zero_point_terms(lhs, rhs)]

        def int8_sums(start: int, end: int, sums: torch.Tensor) -> np.ndarray:
            for j in range(start, end):
                int8_gemm_into(lhs_t[indices[j]], rhs_t[indices[j]], sums[j - start])
            acc = sums.numpy()
            for term in terms:
                acc -= term[start:end]
            return acc

        return int8_sums


GroupSums: TypeAlias = tuple[Callable[[int, int, torch.Tensor], np.ndarray], torch.dtype]
"""`RequantizedMatmul.group_sums`: the int32 sums of a group of matrices, and its scratch's
dtype."""


SOFTMAX_BLOCK = 1 << 17
"""Elements `SoftmaxPlan.quotients_in_float64` handles at a time (whole rows): its float64
entries (1 MB) stay in cache."""

SOFTMAX_SHORT_ROW = 32
"""Rows of at most this many elements take `SoftmaxPlan.quotients_across_rows`: numpy's
reductions over a short last axis, and its broadcasts along it, loop once per row (the
digits transformer's 512 rows of 8 at batch 32: 38 us along them, 22 us across; rows of 32:
254 against 182 us; of 64: even)."""

SOFTMAX_NUDGE = 2.0**-34
"""Added to the float64 quotients before their floor (`SoftmaxPlan.quotients_in_float64`):
above their rounding error (< 2^-43), below the gap of a non-integer quotient to the next
integer (>= 1 / (2 sum) > 2^-32)."""


@dataclass(frozen=True)
class SoftmaxPlan:
    """A `dghw.softmax` prepared once: its table, and whether its rows need the sum check.

    With entries >= 0, entry 0 >= 1 (the row maximum reads it) and `extent(axis) *
    max(table) <= 2^31 - 1`, every row's sum lies in [1, 2^31 - 1] statically: the
    verifier's bound, checked again here so that an unverified module keeps its report.
    Such rows take `quotients_in_float64`; any other table the int64 definition.
    """

    axis: int
    table: np.ndarray
    """The exp table as int64 [256]."""
    table_f64: np.ndarray | None
    """The table as float64 [256] when every sum is in range statically, else None."""
    _walks: dict[tuple[int, ...], tuple[tuple[int, ...], tuple[int, ...]]] = field(
        default_factory=dict, compare=False, repr=False
    )
    """`row_walk` by the input's strides."""

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
        return SoftmaxPlan(axis, table, table.astype(np.float64) if in_range else None)

    def apply(self, x: np.ndarray, op: Operation) -> np.ndarray:
        if self.table_f64 is not None:
            order, inverse = self.row_walk(x)
            walked = np.ascontiguousarray(x.transpose(order))
            return self.quotients_in_float64(walked).transpose(inverse)
        rows = np.moveaxis(x, self.axis, -1)
        # max(x) - x lies in [0, 255]: an index into the table.
        index = np.subtract(rows.max(axis=-1, keepdims=True), rows, dtype=np.intp)
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

    def row_walk(self, x: np.ndarray) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The transpose that makes x's rows (`axis`) the last axis and walks the others in
        x's memory order (`memory_order`), and its inverse; kept by x's strides, which a
        network's producer gives every run. Each row's result depends on that row alone,
        so the order of the rows changes no result: over the transposed views around an
        attention softmax the rows are then contiguous in memory, and no copy is made."""
        walk = self._walks.get(x.strides)
        if walk is None:
            leading = tuple(a for a in memory_order(x) if a != self.axis)
            order = (*leading, self.axis)
            walk = self._walks[x.strides] = (order, inverse_order(order))
        return walk

    def quotients_in_float64(self, rows: np.ndarray) -> np.ndarray:
        """The result for C-contiguous int8 `rows` (the last axis), computed in float64.

        The result is q - 128 for q = min(floor((512 e + sum) / (2 sum)), 255), i.e.
        q = min(floor(256 e / sum + 1/2), 255) (e >= 0 keeps it >= 0). The float64
        value c = fl(fl(e * fl(256 / sum)) + (1/2 + 2^-34)) lies within 2^-43 of
        256 e / sum + 1/2 + 2^-34 (docs/dghw.md), so floor(c) = floor(256 e / sum +
        1/2) exactly; truncating min(c, 255) >= 0 to uint8 is its floor, and the
        flip of the top bit is the subtraction of 128 as an int8 bit pattern.
        Longer than two blocks, the rows go `SOFTMAX_BLOCK` elements at a time (whole
        rows: each row's result depends on that row alone), their float64 entries in
        cache: the same operations on each row; the blocks of a long map are split over the
        caller's threads (`PARALLEL_NUMPY_WORK`).
        """
        if rows.size <= 2 * SOFTMAX_BLOCK:
            return self.row_quotients(rows, np.empty(rows.shape, np.float64))
        n = rows.shape[-1]
        flat = rows.reshape(-1, n)
        out = np.empty(flat.shape, np.int8)
        step = max(1, SOFTMAX_BLOCK // n)

        def quotients(start: int, end: int, entries: np.ndarray) -> None:
            out[start:end] = self.row_quotients(flat[start:end], entries[: end - start])

        def scratch() -> np.ndarray:
            return np.empty((step, n), np.float64)

        run_blocks_in_parts(len(flat), step, quotients, scratch, rows.size, numpy=True)
        return out.reshape(rows.shape)

    def row_quotients(self, rows: np.ndarray, e: np.ndarray) -> np.ndarray:
        """`quotients_in_float64` of int8 rows [..., N], with `e` float64 of their shape to
        work in: along the rows, or across them when they are short (`SOFTMAX_SHORT_ROW`)."""
        if rows.shape[-1] <= SOFTMAX_SHORT_ROW:
            return self.quotients_across_rows(rows, e)
        index = self.table_indices(rows, -1, e)
        # einsum: faster than np.add.reduce over rows (ViT-Ti's 197 x 197: 6 against 11 us);
        # integers below 2^31: exact in any order
        return rounded_quotients(index, e, np.einsum("...i->...", e)[..., None])

    def quotients_across_rows(self, rows: np.ndarray, e: np.ndarray) -> np.ndarray:
        """`row_quotients` with the rows [R, N] as the columns of an [N, R] copy: each pass
        runs over R elements at once, a row's max and sum combine N vectors. Each element
        takes the same operations as along the rows, so the same integers (the sums of
        integers below 2^31 are exact in any order). The result is copied back to rows
        contiguous in memory, as along them: an attention's next matmul reads them (its
        centring of a transposed view took 20 against 13 us at batch 32)."""
        columns = np.ascontiguousarray(rows.reshape(-1, rows.shape[-1]).T)
        entries = e.reshape(-1).reshape(columns.shape)
        index = self.table_indices(columns, 0, entries)
        quotients = rounded_quotients(index, entries, np.add.reduce(entries, axis=0))
        return np.ascontiguousarray(quotients.T).reshape(rows.shape)

    def table_indices(self, rows: np.ndarray, axis: int, e: np.ndarray) -> np.ndarray:
        """max - x over `axis` of int8 `rows`, as uint8, with their float64 table entries
        written to `e` (of rows' shape)."""
        table = self.table_f64
        assert table is not None
        peak = np.maximum.reduce(rows, axis=axis, keepdims=True)
        # peak - x in [0, 255], as the difference of the bit patterns modulo 256.
        index = np.subtract(peak.view(np.uint8), rows.view(np.uint8))
        # Every uint8 index is one of the 256 entries: "clip" never clips, and it avoids
        # the slower bounds-checked loop of the default "raise".
        table.take(index, mode="clip", out=e)
        return index


def rounded_quotients(index: np.ndarray, e: np.ndarray, total: np.ndarray) -> np.ndarray:
    """q - 128 as int8, q = min(floor(256 e / total + 1/2), 255), computed in float64 in `e`
    (`SoftmaxPlan.quotients_in_float64` has the proof) and written over the uint8 `index`,
    whose every entry has been read; `total` broadcasts against `e`."""
    e *= 256 / total
    e += 0.5 + SOFTMAX_NUDGE
    np.minimum(e, 255, out=e)
    np.copyto(index, e, casting="unsafe")  # truncation of values in [0, 255]: their floor
    index ^= 0x80
    return index.view(np.int8)


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

    @impl_external(MATMUL_THEN_RESCALE)
    def run_matmul_then_rescale(
        self, interpreter: Interpreter, op: Operation, args: tuple[np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray]:
        """`op`, the rescale of a `requantized_matmul` group, of its matmul's operands."""
        lhs, rhs = args
        rescale = cast(dghw.RescaleOp, op)
        # Keyed by the rescale, which this family's own impls never run.
        return (self.planned(rescale, RequantizedMatmul.prepare).apply(lhs, rhs, op),)
