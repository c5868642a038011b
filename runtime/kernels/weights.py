"""The accumulating ops: conv2d (dense and depthwise) and fully_connected, on weights
prepared once for exact float32 GEMMs.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import numpy as np
import torch
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.interpreter import (
    Interpreter,
    impl,
    impl_external,
    register_impls,
)
from xdsl.ir import Attribute, Operation

from dg.dialects import dghw
from dg.runtime.exact import (
    F32_EXACT_LIMIT,
    centered_magnitude_bound,
    column_magnitude_sums,
    exact_split_gemm,
    exact_weight_splits,
    float_gemm,
    may_leave_int32,
)
from dg.runtime.kernels.common import (
    KernelFunctions,
    check_int32,
    defined_by_constant,
    sole_int8_rescale,
)
from dg.runtime.kernels.pooling import pad_for_windows, spatial_extents, window_taps
from dg.runtime.kernels.requantization import SumRequantization

_W = TypeVar("_W")
"""Prepared weights of some kind (`WeightsFunctions.prepared_weights`)."""

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
    _stored: torch.Tensor = field(init=False, compare=False, repr=False)
    """`stored` as a tensor (shared memory): torch's int8 casts are vectorized, numpy's
    are not (a third of the time on VGG-16's first Linear)."""

    def __post_init__(self) -> None:
        with warnings.catch_warnings():
            # A constant's bytes are read-only; they are only ever read here.
            warnings.filterwarnings("ignore", "The given NumPy array is not writable")
            object.__setattr__(self, "_stored", torch.from_numpy(self.stored))

    @property
    def shape(self) -> tuple[int, ...]:
        return self.stored.shape

    def __getitem__(self, rows: slice, /) -> np.ndarray:
        # Widened before the subtraction, which `dtype` holds exactly (|w - zp| <= 255).
        block = self._stored[rows].to(self.dtype)
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
    _tiled_bias: dict[int, np.ndarray] = field(default_factory=dict, compare=False, repr=False)
    """bias32 tiled over M / items rows, by that row length (`accumulate_in_int32`)."""

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
            float_gemm(patches[:, : bounds[1]], self.matrix[: bounds[1]]).reshape(items, size),
            bias,
            dtype=np.int32,
            casting="unsafe",  # float32 -> int32 of exact integers: exact
        )
        for start, end in zip(bounds[1:-1], bounds[2:], strict=True):
            chunk = float_gemm(patches[:, start:end], self.matrix[start:end]).reshape(items, size)
            np.add(acc, chunk, out=acc, dtype=np.int32, casting="unsafe")
        return acc.reshape(m, n)


def float_taps_are_exact(centered_columns: np.ndarray, x_bound: int) -> bool:
    """Whether float32 computes every tap sum of a depthwise conv exactly.

    `centered_columns` is the integer [KH*KW, C] matrix of w - weight_zp. Each of
    an output's partial sums (a product, then one multiply-add per further tap, fused
    or not) is a sum of a subset of its products, so its magnitude is at most
    x_bound * sum_t |w[t, c] - weight_zp|. While that is <= 2^24 - 1, every partial
    sum is an integer float32 holds, so no operation rounds (docs/dghw.md).
    """
    bound = x_bound * column_magnitude_sums(centered_columns)
    return bool(bound.max(initial=0) <= F32_EXACT_LIMIT - 1)


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
    into the interior of the result and only the border is zeroed, where `np.pad`
    of a centered copy would make three (convert, subtract, pad) and a zero-filled
    result two (a 1x1 conv has no border at all).
    """
    top, bottom, left, right = pad
    n, h, w, c = x.shape
    out = np.empty((n, top + h + bottom, left + w + right, c), dtype=dtype)
    out[:, :top] = 0
    out[:, top + h :] = 0
    out[:, top : top + h, :left] = 0
    out[:, top : top + h, left + w :] = 0
    # dtype= makes numpy subtract in `dtype`, not in int8 (which would wrap).
    np.subtract(x, zero_point, out=out[:, top : top + h, left : left + w], dtype=dtype)
    return out


def add_bias(sums: np.ndarray, bias: np.ndarray, may_overflow: bool, op: Operation) -> np.ndarray:
    """bias + sums as int32, for float32 `sums` of exact integers below 2^24 (last axis C).

    The conversion of such a float32 is exact. When no partial sum can leave int32
    (`may_overflow` False) the add runs in int32, else in int64 with the range check.
    """
    if not may_overflow:
        return np.add(sums, bias, dtype=np.int32, casting="unsafe")
    acc = np.add(sums, bias, dtype=np.int64, casting="unsafe")
    check_int32(acc, op)
    return acc.astype(np.int32)


@dataclass(frozen=True)
class DepthwiseWeights:
    """A depthwise conv's weights and bias, prepared once for exact tap sums."""

    taps: np.ndarray
    """(w - weight_zp) [KH, KW, C] in the integer accumulator dtype."""
    bias: np.ndarray
    """[C] in the integer accumulator dtype."""
    may_overflow: bool
    """Whether some accumulator can leave int32; if not, int32 accumulators are exact."""
    float_taps: torch.Tensor | None
    """(w - weight_zp) as float32 [KH, KW, C] when every channel's tap sum is exact in
    float32 (`X * sum |w - weight_zp| <= 2^24 - 1`, `float_taps_are_exact`), else None."""

    @staticmethod
    def prepare(
        weight: np.ndarray, bias: np.ndarray, weight_zp: int, x_bound: int
    ) -> DepthwiseWeights:
        centered = weight.astype(np.int64) - weight_zp
        columns = centered.reshape(-1, centered.shape[-1])
        may_overflow = may_leave_int32(columns, bias, x_bound)
        # int32 is exact when no partial sum can leave it; otherwise int64 is, since
        # |acc| <= 2^31 + KH*KW*255*255 is far below 2^63.
        dtype = np.int64 if may_overflow else np.int32
        float_taps = None
        if float_taps_are_exact(columns, x_bound):
            float_taps = torch.from_numpy(centered.astype(np.float32))
        return DepthwiseWeights(
            centered.astype(dtype), bias.astype(dtype), may_overflow, float_taps
        )

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

    def accumulate_float(
        self, centered_padded: np.ndarray, stride: Sequence[int], out_hw: tuple[int, int]
    ) -> np.ndarray:
        """The tap sums without the bias, float32 [N, OH, OW, C] of exact integers.

        `centered_padded` is x - input_zp, padded with 0, in float32. One fused
        multiply-add pass per tap (torch's `addcmul_`; numpy would need a product
        and an add): about three times as fast as the integer taps.
        """
        assert self.float_taps is not None
        padded = torch.from_numpy(centered_padded)
        n, channels = centered_padded.shape[0], centered_padded.shape[3]
        acc = torch.empty((n, *out_hw, channels), dtype=torch.float32)
        taps = window_taps(padded, self.taps.shape[:2], stride, out_hw)
        ky, kx, view = next(taps)
        torch.mul(view, self.float_taps[ky, kx], out=acc)
        for ky, kx, view in taps:
            acc.addcmul_(view, self.float_taps[ky, kx])
        return acc.numpy()


ACCUMULATE_THEN_RESCALE = "dghw.accumulate_then_rescale"
"""The external impl (`impl_external`) the device model's plan runs a
`requantized_accumulate` group with."""

FUSED_MIN_ELEMENTS = 1 << 12
"""Result elements from which that step requantizes the float32 sums itself: on smaller maps
(the digits demos') its torch calls cost more than the int32 map saves, and the two ops'
impls run in turn (digits CNN at batch 1: 0.67 ms fused, 0.43 op by op)."""


def has_constant_weights(op: dghw.AccumulateOp) -> bool:
    """Whether `op`'s weight and bias are constants (always, after lowering): then what is
    prepared from them belongs to the op and is prepared once."""
    return defined_by_constant(op.weight) and defined_by_constant(op.bias)


def requantized_accumulate(op: Operation) -> dghw.RescaleOp | None:
    """The rescale to int8 that is the only use of `op`'s result, when `op` is an
    accumulate op on constant weights and bias (so their preparation is per op)."""
    if not isinstance(op, dghw.AccumulateOp):
        return None
    return sole_int8_rescale(op) if has_constant_weights(op) else None


def result_shape(op: dghw.AccumulateOp, x: np.ndarray) -> tuple[int, ...]:
    """The op's result shape, with x's extents where the type's are dynamic (the batch
    axis; an FC's leading axes are x's)."""
    return filled_shape(cast(TensorType[Attribute], op.result.type).get_shape(), x)


def filled_shape(shape: Sequence[int], x: np.ndarray) -> tuple[int, ...]:
    """`shape` with x's extents where it is dynamic."""
    return tuple(x.shape[i] if d == DYNAMIC_INDEX else d for i, d in enumerate(shape))


@register_impls
@dataclass
class WeightsFunctions(KernelFunctions):
    """The weights family's dghw ops."""

    def gemm_weights(
        self,
        op: dghw.AccumulateOp,
        weight: np.ndarray,
        bias: np.ndarray,
        to_matrix: Callable[[np.ndarray], np.ndarray],
    ) -> GemmWeights:
        """Prepared weights of `op` (`prepared_weights`)."""

        def prepare() -> GemmWeights:
            input_zp = op.input_zp.value.data
            x_range = (-128 - input_zp, 127 - input_zp)
            return GemmWeights.prepare(to_matrix(weight), op.weight_zp.value.data, bias, x_range)

        return self.prepared_weights(op, prepare)

    def prepared_weights(self, op: dghw.AccumulateOp, prepare: Callable[[], _W]) -> _W:
        """`prepare()`, cached by op when its weights are constants (`has_constant_weights`)."""
        weights = self._cache.get(op)
        if weights is not None:
            return cast(_W, weights)
        return self.cached(op, prepare) if has_constant_weights(op) else prepare()

    def conv_weights(self, op: dghw.Conv2dOp, weight: np.ndarray, bias: np.ndarray) -> GemmWeights:
        # OHWI -> [(ky, kx, c), o], the column order of `conv_patches`.
        return self.gemm_weights(op, weight, bias, lambda w: w.reshape(w.shape[0], -1).T)

    def conv_patches(self, op: dghw.Conv2dOp, x: np.ndarray, weight: np.ndarray) -> np.ndarray:
        """`conv_patches` of a conv2d's input: float32 [N*OH*OW, KH*KW*C]."""
        input_zp, stride, pad = self.planned(
            op,
            lambda op: (
                op.input_zp.value.data,
                tuple(op.stride.get_values()),
                tuple(op.pad.get_values()),
            ),
        )
        return conv_patches(x, input_zp, weight.shape[1:3], stride, pad)[0]

    @impl(dghw.Conv2dOp)
    def run_conv2d(
        self, interpreter: Interpreter, op: dghw.Conv2dOp, args: tuple[np.ndarray, ...]
    ) -> tuple[np.ndarray]:
        x, weight, bias = args
        weights = self.conv_weights(op, weight, bias)
        patches = self.conv_patches(op, x, weight)
        shape = result_shape(op, x)
        return (weights.accumulate(patches, op, shape[0]).reshape(shape),)

    def depthwise_weights(
        self, op: dghw.DepthwiseConv2dOp, weight: np.ndarray, bias: np.ndarray
    ) -> DepthwiseWeights:
        """Prepared weights of `op` (`prepared_weights`)."""

        def prepare() -> DepthwiseWeights:
            x_bound = centered_magnitude_bound(np.dtype(np.int8), op.input_zp.value.data)
            return DepthwiseWeights.prepare(weight, bias, op.weight_zp.value.data, x_bound)

        return self.prepared_weights(op, prepare)

    @staticmethod
    def depthwise_float_sums(
        op: dghw.DepthwiseConv2dOp, x: np.ndarray, weights: DepthwiseWeights
    ) -> np.ndarray:
        """The tap sums without the bias, float32 NHWC (`DepthwiseWeights.accumulate_float`)."""
        # Centering before padding makes the padded positions 0, i.e. reading input_zp.
        padded = centered_padded(
            x, op.input_zp.value.data, op.pad.get_values(), np.dtype(np.float32)
        )
        return weights.accumulate_float(padded, op.stride.get_values(), spatial_extents(op))

    @impl(dghw.DepthwiseConv2dOp)
    def run_depthwise_conv2d(
        self, interpreter: Interpreter, op: dghw.DepthwiseConv2dOp, args: tuple[np.ndarray, ...]
    ) -> tuple[np.ndarray]:
        x, weight, bias = args
        weights = self.depthwise_weights(op, weight, bias)
        if weights.float_taps is not None:
            sums = self.depthwise_float_sums(op, x, weights)
            return (add_bias(sums, weights.bias, weights.may_overflow, op),)
        stride, pad = op.stride.get_values(), op.pad.get_values()
        out_hw = spatial_extents(op)
        centered = x.astype(weights.taps.dtype)
        centered -= op.input_zp.value.data
        padded = pad_for_windows(centered, (pad[0], pad[2]), weight.shape[:2], stride, out_hw, 0)
        return (weights.accumulate(padded, stride, out_hw, op),)

    def fc_weights(
        self, op: dghw.FullyConnectedOp, weight: np.ndarray, bias: np.ndarray
    ) -> GemmWeights:
        return self.gemm_weights(op, weight, bias, lambda w: w.T)

    def fc_rows(self, op: dghw.FullyConnectedOp, x: np.ndarray) -> np.ndarray:
        """x - input_zp as float32 [M, K] rows."""
        input_zp = self.planned(op, lambda op: op.input_zp.value.data)
        # dtype= makes numpy subtract in float32 (exact), not in int8 (which would wrap).
        return np.subtract(x.reshape(-1, x.shape[-1]), input_zp, dtype=np.float32)

    @impl(dghw.FullyConnectedOp)
    def run_fully_connected(
        self, interpreter: Interpreter, op: dghw.FullyConnectedOp, args: tuple[np.ndarray, ...]
    ) -> tuple[np.ndarray]:
        x, weight, bias = args
        weights = self.fc_weights(op, weight, bias)
        shape = result_shape(op, x)
        out = weights.accumulate(self.fc_rows(op, x), op, x.shape[0] if x.ndim > 1 else 1)
        return (out.reshape(shape),)

    def sum_requantization(
        self, accumulate: Operation, rescale: dghw.RescaleOp, args: tuple[np.ndarray, ...]
    ) -> SumRequantization | None:
        """The rescale of the op's float32 sums with its bias folded in, where its sums
        are exact float32 integers and int32 holds every partial sum; else None."""
        _, weight, bias = args
        if isinstance(accumulate, dghw.DepthwiseConv2dOp):
            taps = self.depthwise_weights(accumulate, weight, bias)
            if taps.float_taps is None or taps.may_overflow:
                return None
            return SumRequantization.prepare(rescale, taps.bias)
        if isinstance(accumulate, dghw.Conv2dOp):
            gemm = self.conv_weights(accumulate, weight, bias)
        else:
            gemm = self.fc_weights(cast(dghw.FullyConnectedOp, accumulate), weight, bias)
        if gemm.splits or gemm.may_overflow or isinstance(gemm.matrix, WidenedRows):
            return None  # several chunks (sums past 2^24), or a matrix widened per block
        return SumRequantization.prepare(rescale, gemm.bias)

    @impl_external(ACCUMULATE_THEN_RESCALE)
    def run_accumulate_then_rescale(
        self, interpreter: Interpreter, op: Operation, args: tuple[np.ndarray, ...]
    ) -> tuple[np.ndarray]:
        """`op`, the rescale of a `requantized_accumulate` group, of the accumulate op on
        `args`: from the float32 sums, without the int32 map, where `sum_requantization`
        allows it and the map has `FUSED_MIN_ELEMENTS`; else the two ops' impls in turn."""
        rescale = cast(dghw.RescaleOp, op)
        accumulate = cast(dghw.AccumulateOp, rescale.input.owner)
        requantize, shape = self.planned(
            rescale,
            lambda r: (
                self.sum_requantization(accumulate, r, args),
                cast(TensorType[Attribute], accumulate.result.type).get_shape(),  # read once
            ),
        )
        x, weight, _ = args
        if requantize is None or math.prod(filled_shape(shape, x)) < FUSED_MIN_ELEMENTS:
            (acc,) = interpreter.run_op(accumulate, args)
            return cast(tuple[np.ndarray], interpreter.run_op(rescale, (acc,)))
        if isinstance(accumulate, dghw.DepthwiseConv2dOp):
            weights = self.depthwise_weights(accumulate, weight, args[2])
            return (requantize.apply(self.depthwise_float_sums(accumulate, x, weights)),)
        if isinstance(accumulate, dghw.Conv2dOp):
            rows = self.conv_patches(accumulate, x, weight)
            matrix = self.conv_weights(accumulate, weight, args[2]).matrix
        else:
            fc = cast(dghw.FullyConnectedOp, accumulate)
            rows, matrix = self.fc_rows(fc, x), self.fc_weights(fc, weight, args[2]).matrix
        sums = float_gemm(rows, matrix)  # one chunk: exact integers below 2^24
        return (requantize.apply(sums.reshape(result_shape(accumulate, x))),)
