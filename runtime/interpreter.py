"""The dghw interpreter: the bit-accurate device model of the dg accelerator.

Every dghw op has one implementation on xDSL's interpreter framework; values
are numpy arrays (int8 / int32). `docs/dghw.md` is the specification each
implementation follows; `test/reference/dghw_reference.py` is an independent
scalar transcription of it that the tests compare against.

The accumulating ops run their integer dot products as float32 GEMMs, because
BLAS is the fastest dot product numpy has. This is exact, not approximate:
every partial sum a float32 GEMM can form is kept below 2^24 by splitting the
reduction axis into chunks (`exact_weight_splits`), and the chunks are added
in int32 when no partial sum can leave it, else in int64 (`GemmWeights`).
Rescales of int8 inputs are 256-entry tables; requantizations of int32 clip
their input and run in exact float64 (`ClippedFloatRescale`); other rescales
fold their zero points (`FoldedRescale`); docs/dghw.md ("Exactness of ...")
has the proofs.
Everything derivable from an op and its constant operands is prepared once
per op (`DghwFunctions._cache`, `_plans`). The windowed ops (depthwise conv,
pooling) loop over the kernel taps, never over elements: each tap is one numpy
operation on a strided view of the whole batch, in integers wide enough never
to wrap.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
)
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    ReturnedValues,
    impl,
    register_impls,
)
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.traits import CallableOpInterface
from xdsl.utils.exceptions import InterpretationError

from dg.dialects import dghw
from dg.dialects.fixed_point import MAX_DIVISOR, reciprocal_scale

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1

F32_EXACT_LIMIT = 1 << 24
"""Every integer of magnitude <= 2^24 is a float32; 2^24 + 1 is the first one that is not."""

NUMPY_DTYPES: dict[int, type[np.signedinteger[Any]]] = {8: np.int8, 32: np.int32}
"""numpy dtype of each dghw element width (dghw integers are signed)."""

_T = TypeVar("_T")
_OpT = TypeVar("_OpT", bound=Operation)


def numpy_dtype(t: Attribute) -> np.dtype[Any]:
    """The numpy dtype holding the elements of the dghw tensor type `t`."""
    assert isinstance(t, TensorType) and isinstance(t.element_type, IntegerType)
    return np.dtype(NUMPY_DTYPES[t.element_type.width.data])


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


@dataclass(frozen=True)
class GemmWeights:
    """An accumulating op's weights and bias, prepared once for exact float32 GEMMs."""

    matrix: np.ndarray
    """(w - weight_zp) as a float32 [K, N] matrix, rows in the op's patch order."""
    bias: np.ndarray
    """int64 [N]."""
    bias32: np.ndarray
    """The bias as int32 [N], for `accumulate_in_int32`."""
    splits: tuple[int, ...]
    """Where K is split into chunks one float32 GEMM computes exactly (`exact_weight_splits`)."""
    may_overflow: bool
    """Whether some accumulator can leave int32; when False the range check is skipped."""
    _tiled_bias: dict[int, np.ndarray] = field(default_factory=dict, compare=False, repr=False)
    """bias32 tiled over M / items rows, by that row length (`accumulate_in_int32`)."""

    @staticmethod
    def prepare(
        centered_weight: np.ndarray, bias: np.ndarray, x_range: tuple[int, int]
    ) -> GemmWeights:
        """`centered_weight`: the int64 [K, N] matrix of w - weight_zp; `x_range`: x - x_zp's."""
        return GemmWeights(
            matrix=np.ascontiguousarray(centered_weight, dtype=np.float32),
            bias=bias.astype(np.int64),
            bias32=bias.astype(np.int32),
            splits=exact_weight_splits(centered_weight, x_range),
            may_overflow=may_leave_int32(centered_weight, bias, max(-x_range[0], x_range[1])),
        )

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
        size = m // items * n if items else 0
        bias = self._tiled_bias.get(size)
        if bias is None:
            bias = self._tiled_bias[size] = np.tile(self.bias32, size // n if n else 0)
        bounds = (0, *self.splits, patches.shape[1])
        acc = np.add(
            (patches[:, : bounds[1]] @ self.matrix[: bounds[1]]).reshape(items, size),
            bias,
            dtype=np.int32,
            casting="unsafe",  # float32 -> int32 of exact integers: exact
        )
        for start, end in zip(bounds[1:-1], bounds[2:], strict=True):
            chunk = (patches[:, start:end] @ self.matrix[start:end]).reshape(items, size)
            np.add(acc, chunk, out=acc, dtype=np.int32, casting="unsafe")
        return acc.reshape(m, n)


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


def check_int32(acc: np.ndarray, op: Operation) -> None:
    """TOSA leaves an int32 overflow unpredictable; the device model reports it."""
    if acc.size and (acc.min() < INT32_MIN or acc.max() > INT32_MAX):
        raise InterpretationError(
            f"{op.name}: result {acc.min()}..{acc.max()} overflows int32 "
            f"(result %{op.results[0].name_hint or '?'})"
        )


def defined_by_constant(value: SSAValue) -> bool:
    return isinstance(value.owner, dghw.ConstantOp)


def conv_patches(
    x: np.ndarray, input_zp: int, kernel: tuple[int, int], stride: Sequence[int], pad: Sequence[int]
) -> tuple[np.ndarray, tuple[int, int, int]]:
    """im2col of an NHWC int8 map: float32 [N*OH*OW, C*KH*KW] of (x - input_zp), and (N, OH, OW).

    Centering before padding makes the padded positions 0, i.e. reading input_zp.
    Columns are ordered (ky, kx, c), the OHWI weight order: with the window axes
    in front of C, the copy reads runs of C contiguous elements, which is most
    of the im2col cost.
    """
    padded = centered_padded(x, input_zp, pad, np.dtype(np.float32))
    n, h, w, c = padded.shape
    (kh, kw), (sy, sx) = kernel, stride
    oh, ow = (h - kh) // sy + 1, (w - kw) // sx + 1
    sn, sh, sw, sc = padded.strides
    # The [N, OH, OW, KH, KW, C] window view, made from strides directly:
    # `sliding_window_view` + a strided slice + a transpose give the same view
    # at ~30 us of Python per call, which is a third of a small conv.
    windows: np.ndarray = np.ndarray(
        (n, oh, ow, kh, kw, c), padded.dtype, padded, 0, (sn, sh * sy, sw * sx, sh, sw, sc)
    )
    return windows.reshape(n * oh * ow, kh * kw * c), (n, oh, ow)


def centered_padded(
    x: np.ndarray, zero_point: int, pad: Sequence[int], dtype: np.dtype[Any]
) -> np.ndarray:
    """x - zero_point in `dtype` (exact: wide enough for it), NHWC, padded with 0.

    `pad` = (top, bottom, left, right). One pass: the subtraction writes straight
    into the interior of the zero-filled result, where `np.pad` of a centered
    copy would make three (convert, subtract, pad).
    """
    top, bottom, left, right = pad
    n, h, w, c = x.shape
    out = np.zeros((n, top + h + bottom, left + w + right, c), dtype=dtype)
    # dtype= makes numpy subtract in `dtype`, not in int8 (which would wrap).
    np.subtract(x, zero_point, out=out[:, top : top + h, left : left + w], dtype=dtype)
    return out


def spatial_extents(op: Operation) -> tuple[int, int]:
    """(OH, OW) of an NHWC result; for pooling the type alone says floor or ceil mode."""
    shape = cast(TensorType[Attribute], op.results[0].type).get_shape()
    if DYNAMIC_INDEX in shape[1:3]:
        raise InterpretationError(f"{op.name}: the result's spatial extents must be static")
    return shape[1], shape[2]


def pad_for_windows(
    x: np.ndarray,
    pad_before: tuple[int, int],
    kernel: Sequence[int],
    stride: Sequence[int],
    out_hw: tuple[int, int],
    fill: int,
) -> np.ndarray:
    """An NHWC map padded with `fill` so that every window of the output grid lies inside.

    `pad_before` = (top, left). After the input, exactly as many rows (columns)
    are added as the last window needs: the op's own bottom/right padding, a
    ceil-mode overhang past it, or nothing when floor mode leaves input unread.
    Every window reads the same elements in the op's padded input.
    """
    (top, left), (oh, ow), (kh, kw), (sy, sx) = pad_before, out_hw, kernel, stride
    bottom = max(0, (oh - 1) * sy + kh - top - x.shape[1])
    right = max(0, (ow - 1) * sx + kw - left - x.shape[2])
    # np.full + one slice assignment: np.pad costs ~0.5 ms of Python per call.
    n, h, w, c = x.shape
    out = np.full((n, top + h + bottom, left + w + right, c), fill, dtype=x.dtype)
    out[:, top : top + h, left : left + w] = x
    return out


def window_taps(
    padded: np.ndarray, kernel: Sequence[int], stride: Sequence[int], out_hw: tuple[int, int]
) -> Iterator[tuple[int, int, np.ndarray]]:
    """For each kernel tap (ky, kx): the [N, OH, OW, C] view of the element each window reads.

    Tap (ky, kx) of window (oy, ox) is padded[:, oy*sy + ky, ox*sx + kx]; the view
    is a strided slice, so a windowed op costs one numpy operation per tap.
    """
    (kh, kw), (sy, sx), (oh, ow) = kernel, stride, out_hw
    for ky in range(kh):
        for kx in range(kw):
            yield (
                ky,
                kx,
                padded[:, ky : ky + sy * (oh - 1) + 1 : sy, kx : kx + sx * (ow - 1) + 1 : sx],
            )


@dataclass(frozen=True)
class DepthwiseWeights:
    """A depthwise conv's weights and bias, prepared once for exact integer tap sums."""

    taps: np.ndarray
    """(w - weight_zp) [KH, KW, C] in the accumulator dtype."""
    bias: np.ndarray
    """[C] in the accumulator dtype."""
    may_overflow: bool
    """Whether some accumulator can leave int32; if not, int32 accumulators are exact."""

    @staticmethod
    def prepare(
        weight: np.ndarray, bias: np.ndarray, weight_zp: int, x_bound: int
    ) -> DepthwiseWeights:
        centered = weight.astype(np.int64) - weight_zp
        may_overflow = may_leave_int32(centered.reshape(-1, centered.shape[-1]), bias, x_bound)
        # int32 is exact when no partial sum can leave it; otherwise int64 is, since
        # |acc| <= 2^31 + KH*KW*255*255 is far below 2^63.
        dtype = np.int64 if may_overflow else np.int32
        return DepthwiseWeights(centered.astype(dtype), bias.astype(dtype), may_overflow)

    def accumulate(
        self,
        centered_padded: np.ndarray,
        stride: Sequence[int],
        out_hw: tuple[int, int],
        op: Operation,
    ) -> np.ndarray:
        """bias + sum over taps of (x - input_zp)(w - weight_zp), as int32 [N, OH, OW, C].

        `centered_padded` is x - input_zp, padded with 0, in the accumulator dtype.
        """
        n, channels = centered_padded.shape[0], centered_padded.shape[3]
        acc = np.empty((n, *out_hw, channels), dtype=self.taps.dtype)
        acc[...] = self.bias
        product = np.empty_like(acc)
        for ky, kx, view in window_taps(centered_padded, self.taps.shape[:2], stride, out_hw):
            np.multiply(view, self.taps[ky, kx], out=product)
            acc += product
        if self.may_overflow:
            check_int32(acc, op)
        return acc.astype(np.int32)


MAX_AVG_POOL_WINDOW = 1 << 23
"""Largest avg-pool window the device model computes in int64: 255 * 2^23 * (2^31 + 1)
+ 2^60 < 2^63 bounds every intermediate of the window rescale."""


def window_lengths(
    out: int, kernel: int, stride: int, pad_before: int, clip_lo: int, clip_hi: int
) -> np.ndarray:
    """Per output index along one axis: how many of its window's taps lie in [clip_lo, clip_hi)."""
    starts = np.arange(out, dtype=np.int64) * stride - pad_before
    ends = starts + kernel
    return np.maximum(np.minimum(ends, clip_hi) - np.maximum(starts, clip_lo), 0)


@dataclass(frozen=True)
class AvgPoolScale:
    """The divisor of every output position of an avg pool, as TOSA reciprocal scales."""

    multiplier: np.ndarray
    """int64 [OH, OW, 1] (or [1, 1, 1] for a divisor_override)."""
    shift: np.ndarray
    rounding: np.ndarray

    @staticmethod
    def prepare(
        op: dghw.AvgPool2dOp, in_hw: tuple[int, int], out_hw: tuple[int, int]
    ) -> AvgPoolScale:
        return AvgPoolScale.of_divisors(avg_pool_divisors(op, in_hw, out_hw), op)

    @staticmethod
    def of_divisors(divisors: np.ndarray, op: Operation) -> AvgPoolScale:
        if divisors.size and (divisors.min() < 1 or divisors.max() > MAX_DIVISOR):
            raise InterpretationError(
                f"{op.name}: divisors {divisors.min()}..{divisors.max()} leave [1, 2^31 - 1]"
            )
        multiplier, shift = reciprocal_scale(divisors)
        rounding = np.left_shift(np.int64(1), shift - 1)
        return AvgPoolScale(multiplier[..., None], shift[..., None], rounding[..., None])


def avg_pool_divisors(
    op: dghw.AvgPool2dOp, in_hw: tuple[int, int], out_hw: tuple[int, int]
) -> np.ndarray:
    """The divisor of each output position (docs/dghw.md, `dghw.avg_pool2d`), int64 [OH, OW].

    Window areas are separable: rows(oy) * columns(ox), with each factor counted
    over the padded input (count_include_pad) or over the input alone.
    """
    if op.divisor_override is not None:
        return np.full((1, 1), op.divisor_override.value.data, dtype=np.int64)
    top, bottom, left, right = op.pad.get_values()
    (in_h, in_w), (out_h, out_w) = in_hw, out_hw
    (kh, kw), (sy, sx) = op.kernel.get_values(), op.stride.get_values()
    if op.count_include_pad.value.data:
        rows = window_lengths(out_h, kh, sy, top, -top, in_h + bottom)
        columns = window_lengths(out_w, kw, sx, left, -left, in_w + right)
    else:
        rows = window_lengths(out_h, kh, sy, top, 0, in_h)
        columns = window_lengths(out_w, kw, sx, left, 0, in_w)
    return np.outer(rows, columns)


def nearest_source_indices(in_size: int, out_size: int, mode: str) -> np.ndarray:
    """Source index of every output index of a nearest resize along one axis (exact rationals).

    nearest: floor(o * in / out); nearest-exact: min(floor((o + 1/2) * in / out), in - 1),
    i.e. floor((2o + 1) * in / (2 out)) in integers.
    """
    o = np.arange(out_size, dtype=np.int64)
    if mode == "nearest":
        return (o * in_size) // out_size
    return np.minimum(((2 * o + 1) * in_size) // (2 * out_size), in_size - 1)


INT64_MAX = (1 << 63) - 1


def per_channel_rows(x: np.ndarray, item_size: int) -> np.ndarray:
    """`x` as [N, item_size] rows (a view when it can be): one row per batch item.

    A per-channel vector tiled to `item_size` (`tile_channels`) then lines up with
    every row. numpy broadcasts a [C] vector over [..., C] in inner loops of C
    elements, which costs as much as the arithmetic for C = 16; over whole rows the
    inner loop is the item, two to three times faster. The values are the same.
    """
    return x.reshape(x.shape[0], item_size)


def tile_channels(values: np.ndarray | float, item_size: int) -> Any:
    """A per-channel vector repeated over an item of `item_size` elements; a scalar as is."""
    if isinstance(values, int | float):
        return values
    return np.tile(values, item_size // len(values))


def per_item_parameters(
    cache: dict[tuple[int, ...], tuple[Any, ...]], x: np.ndarray, parameters: tuple[Any, ...]
) -> tuple[np.ndarray, tuple[Any, ...]]:
    """`x` as one row per batch item and its per-channel `parameters` tiled over an item.

    The tiles are made once per item shape (kept in `cache`). Scalar parameters,
    or an `x` with no axis besides the channels, stay as they are: the [C]
    vectors then broadcast directly.
    """
    if x.ndim < 2 or not any(isinstance(v, np.ndarray) for v in parameters):
        return x, parameters
    item = x.shape[1:]
    tiled = cache.get(item)
    if tiled is None:
        size = math.prod(item)
        tiled = cache[item] = tuple(tile_channels(v, size) for v in parameters)
    return per_channel_rows(x, math.prod(item)), tiled


def uniform(values: Sequence[Any], dtype: type[np.generic] = np.int64) -> Any:
    """One Python number when every channel has the same value (a scalar operand is
    cheapest), else the values as a `dtype` array."""
    if all(v == values[0] for v in values):
        return dtype(values[0]).item()
    return np.array(values, dtype=dtype)


def as_int32(values: np.ndarray | int) -> np.ndarray | int:
    """Per-channel int32 bounds stay int32 in numpy's arithmetic with an int32 array."""
    return values if isinstance(values, int) else values.astype(np.int32)


def folded_offset(op: dghw.RescaleOp, multiplier: int, shift: int) -> int:
    """2^(s-1) + (output_zp << s) - input_zp * m: a channel's rounding term and zero
    points as one offset, so that the rescale is (x * m + offset) >> s (`FoldedRescale`)."""
    input_zp, output_zp = op.input_zp.value.data, op.output_zp.value.data
    return (1 << (shift - 1)) + (output_zp << shift) - input_zp * multiplier


@dataclass(frozen=True)
class FoldedRescale:
    """A `dghw.rescale` with its zero points folded into one offset: four int64 passes per call.

        ((x - input_zp) * m + 2^(s-1)) >> s) + output_zp
      = (x * m + offset) >> s,   offset = 2^(s-1) + (output_zp << s) - input_zp * m

    because adding k * 2^s before a floor division by 2^s adds exactly k after
    it. `prepare` folds only when no intermediate can leave int64 for any input
    of the op's type (|x * m| + |offset| < 2^63), so the result is the same
    integer as the step-by-step definition in docs/dghw.md.

    Parameters equal in every channel are Python ints (numpy's scalar operand);
    per-channel ones are tiled over the whole item once per item shape, so that
    each pass runs over rows, not over C-element inner loops (`per_channel_rows`).
    """

    multiplier: np.ndarray | int
    """int64 [C] (one per channel of the last axis), or an int when all are equal."""
    offset: np.ndarray | int
    shift: np.ndarray | int
    clamp_min: int
    clamp_max: int
    dtype: np.dtype[Any]
    _tiled: dict[tuple[int, ...], tuple[Any, ...]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @staticmethod
    def prepare(op: dghw.RescaleOp) -> FoldedRescale | None:
        multipliers, shifts = op.multiplier.get_values(), op.shift.get_values()
        offsets = [folded_offset(op, m, s) for m, s in zip(multipliers, shifts, strict=True)]
        info = np.iinfo(numpy_dtype(op.input.type))
        x_bound = max(-int(info.min), int(info.max))
        if x_bound * max(multipliers) + max(abs(o) for o in offsets) > INT64_MAX:
            return None
        return FoldedRescale(
            uniform(multipliers),
            uniform(offsets),
            uniform(shifts),
            op.clamp_min.value.data,
            op.clamp_max.value.data,
            numpy_dtype(op.result.type),
        )

    def apply(self, x: np.ndarray) -> np.ndarray:
        rows, (m, offset, shift) = per_item_parameters(
            self._tiled, x, (self.multiplier, self.offset, self.shift)
        )
        v = np.multiply(rows, m, dtype=np.int64)
        v += offset
        v >>= shift  # arithmetic shift: floor division by 2^shift
        # maximum/minimum in place: np.clip's Python wrapper costs more than the pass.
        np.maximum(v, self.clamp_min, out=v)
        np.minimum(v, self.clamp_max, out=v)
        return v.astype(self.dtype).reshape(x.shape)


F64_EXACT_LIMIT = 1 << 53
"""Every integer of magnitude <= 2^53 is a float64."""


def rescale_of(op: dghw.RescaleOp, channel: int, x: int) -> int:
    """`dghw.rescale` of one value in one channel, before the clamp: the docs' definition."""
    m, s = op.multiplier.get_values()[channel], op.shift.get_values()[channel]
    input_zp, output_zp = op.input_zp.value.data, op.output_zp.value.data
    return (((x - input_zp) * m + (1 << (s - 1))) >> s) + output_zp


@dataclass(frozen=True)
class ClippedFloatRescale:
    """A `dghw.rescale` of an int32 input as a clip of x, then float64: five cheap passes.

    With `offset = 2^(s-1) + (output_zp << s) - input_zp * m` (`FoldedRescale`),
    the rescale is clamp(floor((x * m + offset) / 2^s), clamp_min, clamp_max),
    non-decreasing in x for m > 0. `prepare` finds, per channel, the smallest x
    whose result reaches clamp_min (`low`) and the largest whose result stays
    within clamp_max (`high`), and uses this form only when the rescale of `low`
    is clamp_min itself and that of `high` clamp_max itself (always when m < 2^s:
    results then step by at most one). Then clipping x to [low, high] before
    the rescale gives every x its clamped result, and the clamp is a no-op.
    On the clipped x, |x * m|, |offset| and |x * m + offset| are integers
    <= 2^53 (checked per channel), so in float64 x * (m * 2^-s) + offset * 2^-s
    is the exact value (x * m + offset) * 2^-s: the factors are exact (powers of
    two times integers below 2^53) and every product and sum is representable,
    so no operation rounds; `floor` of it is the rescale. numpy's float64 passes
    run about twice as fast as its int64 ones (the int64 shift is not vectorized).
    """

    low: np.ndarray | int
    """Per channel (or one int): x below it all give clamp_min."""
    high: np.ndarray | int
    factor: np.ndarray | float
    """m * 2^-s per channel, exact in float64."""
    offset: np.ndarray | float
    """offset * 2^-s per channel, exact in float64."""
    dtype: np.dtype[Any]
    _tiled: dict[tuple[int, ...], tuple[Any, ...]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @staticmethod
    def prepare(op: dghw.RescaleOp) -> ClippedFloatRescale | None:
        if numpy_dtype(op.input.type) != np.int32:
            return None
        info = np.iinfo(np.int32)
        clamp_min, clamp_max = op.clamp_min.value.data, op.clamp_max.value.data
        lows, highs, factors, offsets = [], [], [], []
        parameters = zip(op.multiplier.get_values(), op.shift.get_values(), strict=True)
        for c, (m, s) in enumerate(parameters):
            if m <= 0 or max(abs(clamp_min), abs(clamp_max) + 1) << s > F64_EXACT_LIMIT:
                return None
            offset = folded_offset(op, m, s)
            # The smallest x with x * m + offset >= clamp_min * 2^s, and the
            # largest with x * m + offset < (clamp_max + 1) * 2^s.
            low = max(-((offset - (clamp_min << s)) // m), int(info.min))
            high = min((((clamp_max + 1) << s) - offset - 1) // m, int(info.max))
            if low > high:
                return None
            if low > info.min and rescale_of(op, c, low) != clamp_min:
                return None
            if high < info.max and rescale_of(op, c, high) != clamp_max:
                return None
            if max(abs(low), abs(high)) * m > F64_EXACT_LIMIT or abs(offset) > F64_EXACT_LIMIT:
                return None
            lows.append(low)
            highs.append(high)
            factors.append(math.ldexp(m, -s))
            offsets.append(math.ldexp(offset, -s))
        low_bounds, high_bounds = uniform(lows), uniform(highs)
        return ClippedFloatRescale(
            as_int32(low_bounds),
            as_int32(high_bounds),
            uniform(factors, np.float64),
            uniform(offsets, np.float64),
            numpy_dtype(op.result.type),
        )

    def apply(self, x: np.ndarray) -> np.ndarray:
        rows, (low, high, factor, offset) = per_item_parameters(
            self._tiled, x, (self.low, self.high, self.factor, self.offset)
        )
        clipped = np.maximum(rows, low)  # int32 bounds: the clip cannot wrap
        np.minimum(clipped, high, out=clipped)
        v = np.multiply(clipped, factor, dtype=np.float64)
        v += offset
        np.floor(v, out=v)
        return v.astype(self.dtype).reshape(x.shape)


@dataclass(frozen=True)
class RescaleTable:
    """A `dghw.rescale` of an int8 input as a table of its 256 results (per channel).

    An int8 input takes only 256 values, so the rescale of every one of them,
    computed once by the step-by-step definition (`unclamped_rescale` and the
    clamp, docs/dghw.md), is the rescale: a lookup returns the very integers
    the arithmetic would, in one pass instead of six. The table is indexed by the
    input's bit pattern (`x.view(uint8)`, no arithmetic on x); per channel, the
    row of channel c starts at 256 * c.
    """

    table: np.ndarray
    """[256] (one multiplier) or [C * 256] (per channel), in the result dtype."""
    channels: int
    bounds: tuple[int, int]
    """Smallest and largest entry: a static range of every result."""
    _bases: dict[tuple[int, ...], np.ndarray] = field(
        default_factory=dict, compare=False, repr=False
    )

    @staticmethod
    def prepare(op: dghw.RescaleOp, parameters: RescaleParameters) -> RescaleTable:
        channels = len(op.multiplier.get_values())
        patterns = np.arange(256, dtype=np.uint8).view(np.int8)  # bit pattern u -> value
        inputs = np.repeat(patterns[:, None], channels, axis=1)  # [256, C]
        v = unclamped_rescale(op, inputs, parameters)
        np.clip(v, op.clamp_min.value.data, op.clamp_max.value.data, out=v)
        table = v.astype(numpy_dtype(op.result.type))
        flat = np.ascontiguousarray(table.T).reshape(-1)  # channel c: entries 256c .. 256c+255
        return RescaleTable(flat, channels, (int(table.min()), int(table.max())))

    def apply(self, x: np.ndarray) -> np.ndarray:
        patterns = x.view(np.uint8)
        if self.channels == 1:
            return np.take(self.table, patterns)
        if x.ndim < 2:  # the channel axis is the only one
            return np.take(self.table, np.arange(self.channels) * 256 + patterns)
        item = x.shape[1:]
        base = self._bases.get(item)
        if base is None:
            base = self._bases[item] = np.tile(
                np.arange(self.channels, dtype=np.intp) * 256, math.prod(item) // self.channels
            )
        index = np.add(per_channel_rows(patterns, len(base)), base, dtype=np.intp)
        return np.take(self.table, index).reshape(x.shape)


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
class DghwFunctions(InterpreterFunctions):
    """Implementations of the dghw ops on numpy arrays.

    Per-op constants (constant tensors, GEMM weights, rescale parameters) are
    derived once and cached by op, so an instance must only be used with a module
    that is not mutated afterwards.
    """

    _cache: dict[Operation, Any] = field(default_factory=dict[Operation, Any])
    _plans: dict[Operation, Any] = field(default_factory=dict[Operation, Any])
    """Per-op prepared forms the hot impls look up with one `dict.get` (see `rescale_plan`)."""

    def planned(self, op: _OpT, prepare: Callable[[_OpT], _T]) -> _T:
        """`prepare(op)`, computed on the first call for `op` and kept in `_plans`."""
        plan = self._plans.get(op)
        if plan is None:
            plan = self._plans[op] = prepare(op)
        return cast(_T, plan)

    def cached(self, op: Operation, factory: Callable[[], _T]) -> _T:
        if op not in self._cache:
            self._cache[op] = factory()
        return cast(_T, self._cache[op])

    @impl(dghw.ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: dghw.ConstantOp, args: tuple[()]
    ) -> tuple[np.ndarray]:
        def read() -> np.ndarray:
            t = op.result.type
            dtype = numpy_dtype(t).newbyteorder("<")  # builtin dense bytes are little-endian
            data = np.frombuffer(op.value.data.data, dtype=dtype)
            return data.reshape(cast(TensorType[Attribute], t).get_shape()).astype(
                dtype.newbyteorder("="), copy=False
            )

        value = self._cache.get(op)
        return (value if value is not None else self.cached(op, read),)

    def gemm_weights(
        self,
        op: dghw.AccumulateOp,
        weight: np.ndarray,
        bias: np.ndarray,
        to_matrix: Callable[[np.ndarray], np.ndarray],
    ) -> GemmWeights:
        """Prepared weights of `op`; cached when they are constants (always, after lowering)."""
        weights = self._cache.get(op)
        if weights is not None:
            return cast(GemmWeights, weights)

        def prepare() -> GemmWeights:
            centered = weight.astype(np.int64) - op.weight_zp.value.data
            input_zp = op.input_zp.value.data
            return GemmWeights.prepare(to_matrix(centered), bias, (-128 - input_zp, 127 - input_zp))

        if defined_by_constant(op.weight) and defined_by_constant(op.bias):
            return self.cached(op, prepare)
        return prepare()

    @impl(dghw.Conv2dOp)
    def run_conv2d(
        self, interpreter: Interpreter, op: dghw.Conv2dOp, args: tuple[np.ndarray, ...]
    ) -> tuple[np.ndarray]:
        x, weight, bias = args
        input_zp, stride, pad = self.planned(
            op,
            lambda op: (
                op.input_zp.value.data,
                tuple(op.stride.get_values()),
                tuple(op.pad.get_values()),
            ),
        )
        out_channels, kh, kw, _ = weight.shape
        # OHWI -> [(ky, kx, c), o], the column order of `conv_patches`.
        weights = self.gemm_weights(op, weight, bias, lambda w: w.reshape(out_channels, -1).T)
        patches, (n, oh, ow) = conv_patches(x, input_zp, (kh, kw), stride, pad)
        return (weights.accumulate(patches, op, n).reshape(n, oh, ow, out_channels),)

    @impl(dghw.DepthwiseConv2dOp)
    def run_depthwise_conv2d(
        self, interpreter: Interpreter, op: dghw.DepthwiseConv2dOp, args: tuple[np.ndarray, ...]
    ) -> tuple[np.ndarray]:
        x, weight, bias = args
        input_zp = op.input_zp.value.data
        x_bound = centered_magnitude_bound(np.dtype(np.int8), input_zp)

        def prepare() -> DepthwiseWeights:
            return DepthwiseWeights.prepare(weight, bias, op.weight_zp.value.data, x_bound)

        if defined_by_constant(op.weight) and defined_by_constant(op.bias):
            weights = self.cached(op, prepare)
        else:
            weights = prepare()
        stride, (top, _, left, _) = op.stride.get_values(), op.pad.get_values()
        out_hw = spatial_extents(op)
        # Centering before padding makes the padded positions 0, i.e. reading input_zp.
        centered = x.astype(weights.taps.dtype)
        centered -= input_zp
        padded = pad_for_windows(centered, (top, left), weight.shape[:2], stride, out_hw, 0)
        return (weights.accumulate(padded, stride, out_hw, op),)

    @impl(dghw.FullyConnectedOp)
    def run_fully_connected(
        self, interpreter: Interpreter, op: dghw.FullyConnectedOp, args: tuple[np.ndarray, ...]
    ) -> tuple[np.ndarray]:
        x, weight, bias = args
        input_zp = self.planned(op, lambda op: op.input_zp.value.data)
        weights = self.gemm_weights(op, weight, bias, lambda w: w.T)
        # dtype= makes numpy subtract in float32 (exact), not in int8 (which would wrap).
        rows = np.subtract(x.reshape(-1, x.shape[-1]), input_zp, dtype=np.float32)
        out = weights.accumulate(rows, op, x.shape[0] if x.ndim > 1 else 1)
        return (out.reshape(*x.shape[:-1], weight.shape[0]),)

    @impl(dghw.RescaleOp)
    def run_rescale(
        self, interpreter: Interpreter, op: dghw.RescaleOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        return (self.planned(op, rescale_plan)(x),)

    @impl(dghw.MaxPool2dOp)
    def run_max_pool2d(
        self, interpreter: Interpreter, op: dghw.MaxPool2dOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        kernel, stride, out_hw = op.kernel.get_values(), op.stride.get_values(), spatial_extents(op)
        # A ceil-mode window may overhang the input; -128 there never beats the
        # window's input elements, of which it has at least one (the verifier's window count).
        padded = pad_for_windows(x, (0, 0), kernel, stride, out_hw, fill=-128)
        taps = window_taps(padded, kernel, stride, out_hw)
        out = next(taps)[2].copy()
        for _, _, view in taps:
            np.maximum(out, view, out=out)
        return (out,)

    @impl(dghw.AvgPool2dOp)
    def run_avg_pool2d(
        self, interpreter: Interpreter, op: dghw.AvgPool2dOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        kernel, stride, out_hw = op.kernel.get_values(), op.stride.get_values(), spatial_extents(op)
        if kernel[0] * kernel[1] > MAX_AVG_POOL_WINDOW:
            raise InterpretationError(f"{op.name}: window {list(kernel)} exceeds 2^23 elements")
        in_hw = (x.shape[1], x.shape[2])
        scale = self.cached(op, lambda: AvgPoolScale.prepare(op, in_hw, out_hw))
        top, _, left, _ = op.pad.get_values()
        # int32 sums are exact: |acc| <= 255 * KH * KW < 2^31 (MAX_AVG_POOL_WINDOW).
        centered = x.astype(np.int32)
        centered -= op.input_zp.value.data
        padded = pad_for_windows(centered, (top, left), kernel, stride, out_hw, 0)
        taps = window_taps(padded, kernel, stride, out_hw)
        acc = next(taps)[2].copy()
        for _, _, view in taps:
            acc += view
        # TOSA apply_scale_32 (SINGLE_ROUND) in int64, as `dghw.rescale` does.
        v = acc.astype(np.int64)
        v *= scale.multiplier
        v += scale.rounding
        v >>= scale.shift
        v += op.output_zp.value.data
        np.clip(v, -128, 127, out=v)
        return (v.astype(np.int8),)

    @impl(dghw.TableOp)
    def run_table(
        self, interpreter: Interpreter, op: dghw.TableOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        table = self.cached(op, lambda: dense_array_values(op.table, "<i1"))
        return (table[x.astype(np.intp) + 128],)

    @impl(dghw.SoftmaxOp)
    def run_softmax(
        self, interpreter: Interpreter, op: dghw.SoftmaxOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        return (self.planned(op, SoftmaxPlan.prepare).apply(x, op),)

    @impl(dghw.ConcatOp)
    def run_concat(
        self, interpreter: Interpreter, op: dghw.ConcatOp, args: tuple[np.ndarray, ...]
    ) -> tuple[np.ndarray]:
        return (np.concatenate(args, axis=op.axis.value.data),)

    @impl(dghw.ResizeNearestOp)
    def run_resize_nearest(
        self, interpreter: Interpreter, op: dghw.ResizeNearestOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args

        def indices() -> tuple[np.ndarray, np.ndarray]:
            out_h, out_w = spatial_extents(op)
            mode = op.mode.data
            return (
                nearest_source_indices(x.shape[1], out_h, mode),
                nearest_source_indices(x.shape[2], out_w, mode),
            )

        rows, columns = self.cached(op, indices)
        return (np.take(np.take(x, rows, axis=1), columns, axis=2),)

    @impl(dghw.AddOp)
    def run_add(
        self, interpreter: Interpreter, op: dghw.AddOp, args: tuple[np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray]:
        lhs, rhs = args
        if self.planned(op, lambda op: sum_fits_int32(op.lhs, op.rhs)):
            return (np.add(lhs, rhs, dtype=np.int32),)
        total = lhs.astype(np.int64) + rhs
        check_int32(total, op)
        return (total.astype(np.int32),)

    @impl(dghw.MatmulOp)
    def run_matmul(
        self, interpreter: Interpreter, op: dghw.MatmulOp, args: tuple[np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray]:
        lhs, rhs = args
        return (self.planned(op, MatmulPlan.prepare).apply(lhs, rhs, op),)

    @impl(dghw.MulOp)
    def run_mul(
        self, interpreter: Interpreter, op: dghw.MulOp, args: tuple[np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray]:
        x, constant = args
        input_zp = self.planned(op, lambda op: op.input_zp.value.data)

        def centre_constant() -> np.ndarray:
            return np.subtract(constant, op.constant_zp.value.data, dtype=np.int32)

        if defined_by_constant(op.constant):
            centred_c = self.cached(op, centre_constant)
        else:
            centred_c = centre_constant()
        # |x - zp| and |c - zp| are at most 255: the product always fits int32.
        # The constant's extents are 1 or x's, so the product has x's shape: in place.
        product = np.subtract(x, input_zp, dtype=np.int32)
        product *= centred_c
        return (product,)

    @impl(dghw.ReshapeOp)
    def run_reshape(
        self, interpreter: Interpreter, op: dghw.ReshapeOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        # The result type's batch extent is `?`: keep the runtime one.
        item_shape = self.planned(
            op, lambda op: cast(TensorType[Attribute], op.result.type).get_shape()[1:]
        )
        return (x.reshape(x.shape[0], *item_shape),)

    @impl(dghw.TransposeOp)
    def run_transpose(
        self, interpreter: Interpreter, op: dghw.TransposeOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        return (np.transpose(x, self.planned(op, lambda op: op.perm.get_values())),)

    @impl(dghw.SliceOp)
    def run_slice(
        self, interpreter: Interpreter, op: dghw.SliceOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        return (x[self.planned(op, slice_index)],)

    # -- integer logic layers -------------------------------------------------

    @impl(dghw.ShiftOp)
    def run_shift(
        self, interpreter: Interpreter, op: dghw.ShiftOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        shift = op.shift.value.data
        if op.direction.data == "right":
            return (np.right_shift(x, shift),)  # arithmetic on a signed numpy type
        # LOGICAL_LEFT_SHIFT works on the bit pattern: shift it unsigned, so it wraps
        # to the element width (int8 as torch wraps int8, int32 likewise).
        unsigned = np.dtype(f"u{x.dtype.itemsize}")
        return (np.left_shift(x.view(unsigned), unsigned.type(shift)).view(x.dtype),)

    @impl(dghw.BitwiseOp)
    def run_bitwise(
        self, interpreter: Interpreter, op: dghw.BitwiseOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        return (BITWISE[op.kind.data](x, x.dtype.type(op.value.value.data)),)

    @impl(dghw.CompareOp)
    def run_compare(
        self, interpreter: Interpreter, op: dghw.CompareOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        holds = COMPARISONS[op.kind.data](x, x.dtype.type(op.value.value.data))
        return (holds.astype(np.int32),)

    @impl(dghw.BitwiseTensorOp)
    def run_bitwise_tensor(
        self,
        interpreter: Interpreter,
        op: dghw.BitwiseTensorOp,
        args: tuple[np.ndarray, np.ndarray],
    ) -> tuple[np.ndarray]:
        lhs, rhs = args
        # One element type (the verifier's rule): numpy keeps it, and and/or/xor of two
        # values of a width stay in that width, as torch's do.
        return (BITWISE[op.kind.data](lhs, rhs),)

    @impl(dghw.CompareTensorOp)
    def run_compare_tensor(
        self,
        interpreter: Interpreter,
        op: dghw.CompareTensorOp,
        args: tuple[np.ndarray, np.ndarray],
    ) -> tuple[np.ndarray]:
        lhs, rhs = args
        return (COMPARISONS[op.kind.data](lhs, rhs).astype(np.int32),)

    @impl(dghw.TileOp)
    def run_tile(
        self, interpreter: Interpreter, op: dghw.TileOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        return (np.tile(x, op.multiples.get_values()),)

    @impl(dghw.NormOp)
    def run_norm(
        self, interpreter: Interpreter, op: dghw.NormOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        return (self.planned(op, NormPlan.prepare).apply(x),)


def slice_index(op: dghw.SliceOp) -> tuple[slice, ...]:
    """The numpy index that takes `op`'s range along its axis."""
    picked = slice(op.start.value.data, op.end.value.data)
    return (slice(None),) * op.axis.value.data + (picked,)


BITWISE = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}

COMPARISONS = {
    "gt": np.greater,
    "ge": np.greater_equal,
    "lt": np.less,
    "le": np.less_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}
"""`dghw.compare` kinds as numpy ufuncs."""


def dense_array_values(
    attr: DenseArrayBase, stored: str, dtype: type[np.signedinteger[Any]] | None = None
) -> np.ndarray:
    """The elements of an integer dense-array property; `stored` is its little-endian dtype."""
    values = np.frombuffer(attr.data.data, dtype=np.dtype(stored))
    return values.astype(dtype or values.dtype.newbyteorder("="))


_POWERS_OF_TWO = np.left_shift(np.int64(1), np.arange(63, dtype=np.int64))


def bit_length(values: np.ndarray) -> np.ndarray:
    """`int.bit_length` of non-negative int64 values, exactly (no float rounding)."""
    return np.searchsorted(_POWERS_OF_TWO, values, side="right").astype(np.int64)


def isqrt(values: np.ndarray) -> np.ndarray:
    """`math.isqrt` of int64 values in [0, 2^62]: float64 estimate, then corrected.

    The float64 square root is within one of the true floor (its relative
    error is about 2^-53 on a root below 2^31), and (r + 1)^2 <= 2^62 + 2^32
    + 1 fits int64, so one step each way makes it exact. The estimate is
    non-negative, so the truncating conversion is its floor.
    """
    root = np.sqrt(values.astype(np.float64)).astype(np.int64)
    root -= root * root > values
    root += (root + 1) * (root + 1) <= values
    return root


def normalized_fixed_point(x: np.ndarray, kind: str, input_zp: int, eps: int) -> np.ndarray:
    """`dghw.norm`'s Z = round(z * 2^21) per element, z the normalized value (docs/dghw.md).

    Every step is exact int64 arithmetic for rows of up to MAX_NORM_EXTENT:
    |A| < 2^20, V * 2^20 < 2^60, D < 2^62, R <= 2^31. The per-element part runs
    in place on the centered input, as Z = (n R x + (h - (Σx) R)) >> t, h the
    rounding term: n R x - (Σx) R is A R (layer; rms has no Σx term), and each
    term stays below 2^52 (n R |x| <= 2^12 * 2^31 * 255, |Σx| R <= 2^20 * 2^31).
    """
    centered = np.subtract(x, input_zp, dtype=np.int64)
    n = centered.shape[-1]
    total = centered.sum(axis=-1, keepdims=True)
    squares = np.einsum("...i,...i->...", centered, centered)[..., None]  # < 2^28: exact
    if kind == "layer":
        v = n * squares - total * total
    else:
        v = n * squares
    d = (v << dghw.NORM_EPS_BITS) + eps
    # max(0, ceil(bitlen / 2) - 11) = max(0, floor((bitlen - 21) / 2))
    t = np.maximum((bit_length(d) - 21) >> 1, 0)
    r = isqrt((1 << 62) // (d >> (2 * t)))
    offset = (1 << t) >> 1  # the rounding term 2^(t-1); 0 for t = 0
    if kind == "layer":
        offset -= total * r
    centered *= n * r
    centered += offset
    centered >>= t
    return centered


@dataclass(frozen=True)
class NormPlan:
    """A `dghw.norm`'s properties, read once, with its zero point folded when int64 allows.

        ((Z m + bias + 2^(s-1)) >> s) + output_zp = (Z m + offset) >> s,
        offset = bias + 2^(s-1) + (output_zp << s)

    (adding k 2^s before a floor division by 2^s adds k after it). |Z| < 2^28
    (docs/dghw.md) and |m| < 2^31, so |Z m| < 2^59; the zero point is folded
    only when 2^59 + max |offset| stays in int64, else added after the shift.
    """

    kind: str
    """"layer" or "rms"."""
    input_zp: int
    eps: int
    multiplier: np.ndarray
    """int64 [n]."""
    offset: np.ndarray
    """int64 [n]: bias + 2^(shift-1), plus output_zp << shift when folded."""
    shift: int
    output_zp: int
    """What is left to add after the shift: 0 when folded into `offset`."""

    @staticmethod
    def prepare(op: dghw.NormOp) -> NormPlan:
        shift, output_zp = op.shift.value.data, op.output_zp.value.data
        multiplier = dense_array_values(op.multiplier, "<i4", np.int64)
        rounded = [int(b) + (1 << (shift - 1)) for b in dense_array_values(op.bias, "<i8")]
        folded = [b + (output_zp << shift) for b in rounded]
        fits = (1 << 59) + max((abs(b) for b in folded), default=0) <= INT64_MAX
        return NormPlan(
            kind=op.kind.data,
            input_zp=op.input_zp.value.data,
            eps=op.eps.value.data,
            multiplier=multiplier,
            offset=np.array(folded if fits else rounded, dtype=np.int64),
            shift=shift,
            output_zp=0 if fits else output_zp,
        )

    def apply(self, x: np.ndarray) -> np.ndarray:
        z = normalized_fixed_point(x, self.kind, self.input_zp, self.eps)
        z *= self.multiplier
        z += self.offset
        z >>= self.shift
        if self.output_zp:
            z += self.output_zp
        # maximum/minimum in place: np.clip's Python wrapper costs more than the pass.
        np.maximum(z, -128, out=z)
        np.minimum(z, 127, out=z)
        return z.astype(np.int8)


def rescale_parameters(op: dghw.RescaleOp) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Multiplier, shift and rounding term as int64 arrays (length 1 or one per channel)."""
    multiplier = np.array(op.multiplier.get_values(), dtype=np.int64)
    shift = np.array(op.shift.get_values(), dtype=np.int64)
    return multiplier, shift, np.left_shift(np.int64(1), shift - 1)


RescaleParameters = tuple[np.ndarray, np.ndarray, np.ndarray]
"""`rescale_parameters`: multiplier, shift and rounding term."""


def unclamped_rescale(
    op: dghw.RescaleOp, x: np.ndarray, parameters: RescaleParameters
) -> np.ndarray:
    """`dghw.rescale` before its clamp: r + output_zp in int64 (docs/dghw.md)."""
    multiplier, shift, rounding = parameters
    # int64 cannot overflow: |x - zp| <= 2^32, m < 2^31, rounding <= 2^61.
    v = x.astype(np.int64)
    v -= op.input_zp.value.data
    v *= multiplier
    v += rounding
    v >>= shift  # arithmetic shift: floor division by 2^shift
    v += op.output_zp.value.data
    return v


def rescale_plan(op: dghw.RescaleOp) -> Callable[[np.ndarray], np.ndarray]:
    """How `op` runs, prepared once: a table for an int8 input, else a clip and float64
    when those are exact, else the folded form when int64 holds it, else the
    step-by-step definition."""
    parameters = rescale_parameters(op)
    if numpy_dtype(op.input.type) == np.int8:
        return RescaleTable.prepare(op, parameters).apply
    clipped = ClippedFloatRescale.prepare(op)
    if clipped is not None:
        return clipped.apply
    folded = FoldedRescale.prepare(op)
    if folded is not None:
        return folded.apply
    clamp_min, clamp_max = op.clamp_min.value.data, op.clamp_max.value.data
    dtype = numpy_dtype(op.result.type)

    def stepwise(x: np.ndarray) -> np.ndarray:
        v = unclamped_rescale(op, x, parameters)
        np.clip(v, clamp_min, clamp_max, out=v)
        return v.astype(dtype)

    return stepwise


def static_range(value: SSAValue) -> tuple[int, int] | None:
    """Bounds every element of `value` provably lies in, from its type and its producer.

    An int8 value lies in the int8 range. A `dghw.rescale` result lies in
    [clamp_min, clamp_max], its clamp; one of an int8 input is one of the 256
    entries of its table (`RescaleTable`), so it lies between the smallest and
    the largest. None when nothing narrower than int32 is known.
    """
    if numpy_dtype(value.type) == np.int8:
        return -128, 127
    op = value.owner
    if not isinstance(op, dghw.RescaleOp):
        return None
    if numpy_dtype(op.input.type) == np.int8:
        return RescaleTable.prepare(op, rescale_parameters(op)).bounds
    return op.clamp_min.value.data, op.clamp_max.value.data


def sum_fits_int32(lhs: SSAValue, rhs: SSAValue) -> bool:
    """Whether lhs + rhs provably fits int32 for every run (`static_range` of both).

    Then an int32 add cannot wrap and equals the int64 sum `dghw.add` defines,
    and its range check cannot fail.
    """
    lhs_range, rhs_range = static_range(lhs), static_range(rhs)
    if lhs_range is None or rhs_range is None:
        return False
    return lhs_range[0] + rhs_range[0] >= INT32_MIN and lhs_range[1] + rhs_range[1] <= INT32_MAX


@dataclass(frozen=True)
class Saturation:
    """How many elements of one `dghw.rescale` run were clipped to its result type's range."""

    low: int
    """Elements below the type's minimum, where `clamp_min` is that minimum."""
    high: int
    """Elements above the type's maximum, where `clamp_max` is that maximum."""
    elements: int

    @property
    def total(self) -> int:
        return self.low + self.high


class SaturationCounter(Interpreter.Listener):
    """An interpreter listener counting the saturated values of every `dghw.rescale`.

    Saturation is a value the requantization cannot represent: the unclamped
    result lies outside the result type's range and the clamp bound on that
    side is the type's own limit (`saturates`). A clamp that is an activation
    (a bound inside the range, or a ReLU's `clamp_min = output_zp`) cuts off
    what the model cuts off too, so it is not counted. The counter recomputes the rescale
    before its clamp, so it costs one rescale per rescale while attached and
    nothing when not (`DeviceModel.__call__` attaches listeners per call).
    """

    def __init__(self) -> None:
        self.counts: dict[Operation, Saturation] = {}
        self._parameters: dict[Operation, RescaleParameters] = {}

    def will_interpret_op(self, op: Operation, args: tuple[Any, ...]) -> None:
        if not isinstance(op, dghw.RescaleOp):
            return
        parameters = self._parameters.get(op)
        if parameters is None:
            parameters = self._parameters[op] = rescale_parameters(op)
        v = unclamped_rescale(op, args[0], parameters)
        info = np.iinfo(numpy_dtype(op.result.type))
        low = int(np.count_nonzero(v < info.min)) if saturates(op.clamp_min, info.min, op) else 0
        high = int(np.count_nonzero(v > info.max)) if saturates(op.clamp_max, info.max, op) else 0
        seen = self.counts.get(op, Saturation(0, 0, 0))
        self.counts[op] = Saturation(seen.low + low, seen.high + high, seen.elements + v.size)


def saturates(bound: IntegerAttr, limit: int, op: dghw.RescaleOp) -> bool:
    """Whether clamping to `bound` on this side is saturation, not an activation.

    It is when the bound is the type's `limit` and not the output zero point:
    `clamp_min = output_zp` is a ReLU (docs/dghw.md), even when that zero point is -128.
    """
    return bound.value.data == limit and bound.value.data != op.output_zp.value.data


class ValueRecorder(Interpreter.Listener):
    """An interpreter listener keeping every op's results (for per-layer comparisons)."""

    def __init__(self) -> None:
        self.results: dict[Operation, tuple[Any, ...]] = {}

    def did_interpret_op(self, op: Operation, results: tuple[Any, ...]) -> None:
        self.results[op] = results


@dataclass(frozen=True)
class PlannedOp:
    """One op of a block with its operands and results, read once (`DeviceInterpreter`).

    With a `pair_table`, the step stands for a fused residual add (`pair_table_group`):
    its operands are the two int8 inputs, `op` the final rescale.
    """

    op: Operation
    operands: tuple[SSAValue, ...]
    results: tuple[SSAValue, ...]
    pair_table: np.ndarray | None = None


def pair_table_group(add: dghw.AddOp) -> tuple[dghw.RescaleOp, ...] | None:
    """`rescale(add(rescale a, rescale b))` on int8 `a`, `b` of one shape, every rescale
    per tensor and read only inside the group: (rescale a, rescale b, final rescale).

    Such a group maps each pair of int8 inputs to one int8 output, element by
    element, so 65536 entries hold all it can do (TFLite's residual add has this shape).
    """
    inputs = [value.owner for value in (add.lhs, add.rhs)]
    users = list(add.result.uses)
    if add.lhs is add.rhs or len(users) != 1:
        return None
    final = users[0].operation
    group = (*inputs, final)
    if not all(isinstance(op, dghw.RescaleOp) for op in group):
        return None
    lhs, rhs, out = cast(tuple[dghw.RescaleOp, ...], group)
    if not all(len(op.multiplier.get_values()) == 1 for op in group):
        return None
    if numpy_dtype(out.result.type) != np.int8 or lhs.input.type != rhs.input.type:
        return None
    if numpy_dtype(lhs.input.type) != np.int8:
        return None
    if any(len(list(op.result.uses)) != 1 for op in (lhs, rhs)):
        return None
    return lhs, rhs, out


def pair_lookup(table: np.ndarray, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """`table[256 * pattern(lhs) + pattern(rhs)]`, element by element (int8 bit patterns)."""
    index = np.left_shift(lhs.view(np.uint8), 8, dtype=np.uint16)
    index |= rhs.view(np.uint8)
    return np.take(table, index)


@dataclass(frozen=True)
class BlockPlan:
    """How `DeviceInterpreter` runs a block unobserved: constants' values, then the other ops."""

    constants: dict[SSAValue, Any]
    steps: tuple[PlannedOp, ...]


@dataclass
class DeviceInterpreter(Interpreter):
    """xDSL's interpreter with a leaner walk of single-block regions (a dghw function).

    Per op, xDSL's `run_ssacfg_region` walks the block's linked list, reads
    and writes operands through the scoped environment, formats an assertion
    message (evaluated whether or not the check fails), and `_run_op` checks
    counts and loops over listeners. On a small model at batch 1 that
    bookkeeping was a third of the device model's time
    (`bench/interpreter_floor.py`).

    Unobserved (no listeners), a block runs from a plan built once: the values
    of its constants (their `@impl` run once), and its other ops with their
    operand and result values as tuples; values are kept in a plain dict for
    the call. Every op still runs through the registered `@impl`, dispatched by
    xDSL (`_impls.run`, which also locates an impl's error at its op). With
    listeners (compare, saturation counts) each op goes through `_run_op`, so
    the listeners see every op; regions with several blocks take xDSL's path.
    A plan holds a block's ops as they were when it was first run: the device
    model runs a module it does not change (`Program` clones before editing).
    """

    _plans: dict[Block, BlockPlan] = field(default_factory=dict)
    fuse_residual_adds: bool = True
    """Plan residual adds as pair tables, which the registered impls compute. Off where
    the impls are not the device's own (`bench/interpreter_floor.py` replays results)."""

    def run_ssacfg_region(
        self, region: Region, args: tuple[Any, ...], name: str = "unknown"
    ) -> tuple[Any, ...]:
        block = region.blocks.first
        if block is None or block.next_block is not None:
            return super().run_ssacfg_region(region, args, name)
        if self.listeners:
            return self._run_observed(block, args, name)
        return self._run_planned(block, args)

    def _plan(self, block: Block) -> BlockPlan:
        plan = self._plans.get(block)
        if plan is None:
            plan = self._plans[block] = self._make_plan(block)
        return plan

    def _make_plan(self, block: Block) -> BlockPlan:
        """The block's ops, its constants run once (a constant's value never changes),
        each residual-add group as one lookup (`pair_table_group`)."""
        constants: dict[SSAValue, Any] = {}
        fused: dict[Operation, PlannedOp] = {}
        inside: set[Operation] = set()
        for op in block.ops:
            fusable = self.fuse_residual_adds and isinstance(op, dghw.AddOp)
            group = pair_table_group(op) if fusable else None
            if group is not None:
                lhs, rhs, final = group
                table = self._pair_table(lhs, op, rhs, final)
                fused[final] = PlannedOp(final, (lhs.input, rhs.input), (final.result,), table)
                inside.update((lhs, rhs, op))
        steps = []
        for op in block.ops:
            if isinstance(op, dghw.ConstantOp):
                constants[op.result] = self._impls.run(self, op, ()).values[0]
            elif op in fused:
                steps.append(fused[op])
            elif op not in inside:
                steps.append(PlannedOp(op, tuple(op.operands), tuple(op.results)))
        return BlockPlan(constants, tuple(steps))

    def _pair_table(
        self, lhs: dghw.RescaleOp, add: dghw.AddOp, rhs: dghw.RescaleOp, final: dghw.RescaleOp
    ) -> np.ndarray:
        """The group's output for every pair of int8 inputs, computed by the ops' own impls."""
        patterns = np.arange(1 << 16, dtype=np.uint16)
        a = (patterns >> 8).astype(np.uint8).view(np.int8)
        b = (patterns & 0xFF).astype(np.uint8).view(np.int8)
        run = self._impls.run
        summed = run(self, add, (run(self, lhs, (a,)).values[0], run(self, rhs, (b,)).values[0]))
        return run(self, final, (summed.values[0],)).values[0]

    def _run_planned(self, block: Block, args: tuple[Any, ...]) -> tuple[Any, ...]:
        plan = self._plan(block)
        values: dict[SSAValue, Any] = dict(plan.constants)
        values.update(zip(block.args, args, strict=True))
        run = self._impls.run
        for step in plan.steps:
            if step.pair_table is not None:
                lhs, rhs = step.operands
                values[step.results[0]] = pair_lookup(step.pair_table, values[lhs], values[rhs])
                continue
            result = run(self, step.op, tuple([values[v] for v in step.operands]))
            if result.terminator_value is not None:
                return self._returned(step.op, result.terminator_value)
            if len(result.values) != len(step.results):
                raise InterpretationError(
                    f"'{step.op.name}' gave {len(result.values)} results, "
                    f"expected {len(step.results)}"
                )
            values.update(zip(step.results, result.values, strict=False))  # counted above
        return ()

    def _run_observed(self, block: Block, args: tuple[Any, ...], name: str) -> tuple[Any, ...]:
        initial_scope = self._ctx
        self.push_scope(name)
        try:
            self.set_values(zip(block.args, args, strict=False))
            for op in block.ops:
                result = self._run_op(op, self.get_values(op.operands))
                self.set_values(zip(op.results, result.values, strict=False))
                if result.terminator_value is not None:
                    return self._returned(op, result.terminator_value)
            return ()
        finally:
            self._ctx = initial_scope

    @staticmethod
    def _returned(op: Operation, terminator_value: object) -> tuple[Any, ...]:
        if not isinstance(terminator_value, ReturnedValues):  # no dghw op branches
            raise InterpretationError(f"'{op.name}' branches inside a single block")
        return terminator_value.values


class DeviceModel:
    """A dghw module ready to run one of its functions on numpy arrays.

    Holds one interpreter, so the per-op caches persist across calls: the
    first call pays for reading weights, later calls only compute.
    """

    def __init__(self, module: ModuleOp, function: str = "main"):
        self.interpreter = DeviceInterpreter(module)
        self.interpreter.register_implementations(FuncFunctions())
        self.interpreter.register_implementations(DghwFunctions())
        self.function = find_function(module, function)
        trait = self.function.get_trait(CallableOpInterface)
        assert trait is not None
        self.argument_types = trait.get_argument_types(self.function)
        self._fitting: set[tuple[Any, ...]] = set()
        """Signatures (type, dtype, shape per array) that `check` has accepted."""

    def check(self, arrays: Sequence[np.ndarray]) -> None:
        """Raise a ValueError unless `arrays` fit the function's arguments.

        Whether they fit depends only on each array's type, dtype and shape: a
        signature that passed once passes again without the checks.
        """
        try:
            signature = tuple((type(a), a.dtype, a.shape) for a in arrays)
        except AttributeError:  # not arrays: the checks say what is wrong
            signature = None
        if signature is not None and signature in self._fitting:
            return
        check_arguments(self.function.sym_name.data, self.argument_types, arrays)
        if signature is not None:
            if len(self._fitting) >= 64:  # many batch sizes: keep the set small
                self._fitting.clear()
            self._fitting.add(signature)

    def __call__(
        self, arrays: Sequence[np.ndarray], listeners: Sequence[Interpreter.Listener] = ()
    ) -> list[np.ndarray]:
        """Run the function; `listeners` observe this call only (none: no cost at all)."""
        self.check(arrays)
        self.interpreter.listeners = tuple(listeners)
        try:
            results = self.interpreter.call_op(self.function, tuple(arrays))
        finally:
            self.interpreter.listeners = ()
        return [np.ascontiguousarray(r) for r in results]


def find_function(module: ModuleOp, name: str) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == name:
            return op
    raise InterpretationError(f"the module has no function @{name}")


def describe_type(t: Attribute) -> str:
    assert isinstance(t, TensorType)
    dims = "x".join("?" if d == DYNAMIC_INDEX else str(d) for d in t.get_shape())
    return f"tensor<{dims}x{t.element_type}>"


def check_arguments(
    function: str, types: Sequence[Attribute], arrays: Sequence[np.ndarray]
) -> None:
    """Raise a ValueError unless `arrays` fit the argument `types` of `@function`.

    Dynamic extents (the batch axis) take the arrays' extent, which must be the
    same for every argument: the device runs one batch at a time.
    """
    if len(arrays) != len(types):
        raise ValueError(f"@{function} takes {len(types)} argument(s), got {len(arrays)}")
    batch: int | None = None
    for i, (array, t) in enumerate(zip(arrays, types, strict=True)):
        # The name is built only for an error: describing the type costs more than the checks.
        def where(i: int = i, t: Attribute = t) -> str:
            return f"argument #{i} of @{function} ({describe_type(t)})"

        if not isinstance(array, np.ndarray):
            raise ValueError(f"{where()}: expected a numpy array, got {type(array).__name__}")
        if array.dtype != numpy_dtype(t):
            raise ValueError(f"{where()}: expected {numpy_dtype(t)} elements, got {array.dtype}")
        shape = cast(TensorType[Attribute], t).get_shape()
        if array.ndim != len(shape) or any(
            d != DYNAMIC_INDEX and d != a for d, a in zip(shape, array.shape, strict=True)
        ):
            raise ValueError(f"{where()}: got an array of shape {list(array.shape)}")
        for d, a in zip(shape, array.shape, strict=True):
            if d == DYNAMIC_INDEX:
                if batch is not None and a != batch:
                    raise ValueError(f"{where()}: batch extent {a} differs from {batch}")
                batch = a


def run_dghw(
    module: ModuleOp, arrays: Sequence[np.ndarray], function: str = "main"
) -> list[np.ndarray]:
    """Run `@function` (default `@main`) of a dghw module on int8/int32 numpy arrays."""
    return DeviceModel(module, function)(arrays)
