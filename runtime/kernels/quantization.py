"""Constants and rescales: each rescale prepared once as a table, a clipped float64
form, a folded form or the step-by-step definition.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import (
    TensorType,
)
from xdsl.interpreter import (
    Interpreter,
    impl,
    register_impls,
)
from xdsl.ir import Attribute, SSAValue

from dg.dialects import dghw
from dg.runtime.kernels.common import (
    BLOCK_ELEMENTS,
    INT64_MAX,
    KernelFunctions,
    as_int32,
    block_head,
    channel_blocks,
    in_memory_order,
    numpy_dtype,
    per_channel_rows,
    per_item_parameters,
    uniform,
)
from dg.runtime.threads import run_blocks_in_parts


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


def rescale_of(op: dghw.RescaleOp, m: int, s: int, x: int) -> int:
    """`dghw.rescale` of one value with the multiplier `m` and shift `s` of one of its
    channels, before the clamp: the docs' definition."""
    input_zp, output_zp = op.input_zp.value.data, op.output_zp.value.data
    return (((x - input_zp) * m + (1 << (s - 1))) >> s) + output_zp


def clip_window(op: dghw.RescaleOp, m: int, s: int) -> tuple[int, int] | None:
    """(low, high) of one channel of an int32 rescale (`ClippedFloatRescale`), or None
    where clipping to them and float64 do not give the rescale's integers."""
    info = np.iinfo(np.int32)
    clamp_min, clamp_max = op.clamp_min.value.data, op.clamp_max.value.data
    if m <= 0 or max(abs(clamp_min), abs(clamp_max) + 1) << s > F64_EXACT_LIMIT:
        return None
    offset = folded_offset(op, m, s)
    # The smallest x with x * m + offset >= clamp_min * 2^s, and the
    # largest with x * m + offset < (clamp_max + 1) * 2^s.
    low = max(-((offset - (clamp_min << s)) // m), int(info.min))
    high = min((((clamp_max + 1) << s) - offset - 1) // m, int(info.max))
    if low > high:
        return None
    if low > info.min and rescale_of(op, m, s, low) != clamp_min:
        return None
    if high < info.max and rescale_of(op, m, s, high) != clamp_max:
        return None
    if max(abs(low), abs(high)) * m > F64_EXACT_LIMIT or abs(offset) > F64_EXACT_LIMIT:
        return None
    return low, high


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
    _blocks: dict[int, tuple[int, tuple[Any, ...]]] = field(
        default_factory=dict, compare=False, repr=False
    )
    """Per channel count: the block length and the parameters tiled to a block."""

    @staticmethod
    def prepare(op: dghw.RescaleOp) -> ClippedFloatRescale | None:
        if numpy_dtype(op.input.type) != np.int32:
            return None
        lows, highs, factors, offsets = [], [], [], []
        parameters = zip(op.multiplier.get_values(), op.shift.get_values(), strict=True)
        for m, s in parameters:
            window = clip_window(op, m, s)
            if window is None:
                return None
            lows.append(window[0])
            highs.append(window[1])
            factors.append(math.ldexp(m, -s))
            offsets.append(math.ldexp(folded_offset(op, m, s), -s))
        low_bounds, high_bounds = uniform(lows), uniform(highs)
        return ClippedFloatRescale(
            as_int32(low_bounds),
            as_int32(high_bounds),
            uniform(factors, np.float64),
            uniform(offsets, np.float64),
            numpy_dtype(op.result.type),
        )

    def apply(self, x: np.ndarray) -> np.ndarray:
        """The five passes over the whole array, or block by block (`apply_blocked`) when
        it is C-contiguous and longer than two blocks: the same elementwise arithmetic."""
        if x.size > 2 * BLOCK_ELEMENTS and x.flags.c_contiguous:
            return self.apply_blocked(x)
        rows, (low, high, factor, offset) = per_item_parameters(
            self._tiled, x, (self.low, self.high, self.factor, self.offset)
        )
        clipped = np.maximum(rows, low)  # int32 bounds: the clip cannot wrap
        np.minimum(clipped, high, out=clipped)
        v = np.multiply(clipped, factor, dtype=np.float64)
        v += offset
        np.floor(v, out=v)
        return v.astype(self.dtype).reshape(x.shape)

    def apply_blocked(self, x: np.ndarray) -> np.ndarray:
        """`apply` block by block of the flat array (`channel_blocks`), its int32 and
        float64 temporaries in cache: about three times as fast on a feature map. The
        blocks of a long map are split over the caller's threads (`PARALLEL_NUMPY_WORK`)."""
        flat = x.reshape(-1)
        out = np.empty(flat.shape, self.dtype)
        block, tiles = self._blocks.get(x.shape[-1], (0, ()))
        if not block:
            parameters = (self.low, self.high, self.factor, self.offset)
            block, tiles = self._blocks[x.shape[-1]] = channel_blocks(x.shape[-1], parameters)

        def rescale(start: int, end: int, buffers: tuple[np.ndarray, np.ndarray]) -> None:
            length = end - start
            low, high, factor, offset = (block_head(v, length) for v in tiles)
            c, v = buffers[0][:length], buffers[1][:length]
            np.maximum(flat[start:end], low, out=c)
            np.minimum(c, high, out=c)
            np.multiply(c, factor, out=v)
            v += offset
            np.floor(v, out=v)
            np.copyto(out[start:end], v, casting="unsafe")  # integers in the clamp: exact

        def scratch() -> tuple[np.ndarray, np.ndarray]:
            length = min(block, flat.size)
            return np.empty(length, np.int32), np.empty(length, np.float64)

        run_blocks_in_parts(flat.size, block, rescale, scratch, flat.size, numpy=True)
        return out.reshape(x.shape)


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
            return self.table.take(patterns)
        if x.ndim < 2:  # the channel axis is the only one
            return self.table.take(np.arange(self.channels) * 256 + patterns)
        item = x.shape[1:]
        base = self._bases.get(item)
        if base is None:
            base = self._bases[item] = np.tile(
                np.arange(self.channels, dtype=np.intp) * 256, math.prod(item) // self.channels
            )
        index = np.add(per_channel_rows(patterns, len(base)), base, dtype=np.intp)
        return self.table.take(index).reshape(x.shape)


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


def product_range(op: dghw.MulOp) -> tuple[int, int]:
    """Bounds of every element of a `dghw.mul`, (x - input_zp) * (c - constant_zp): x is
    any int8, c one of the constant's entries (any int8 when it is not a constant)."""
    x_low, x_high = -128 - op.input_zp.value.data, 127 - op.input_zp.value.data
    c_low, c_high = -128, 127
    constant = op.constant.owner
    if isinstance(constant, dghw.ConstantOp):
        entries = np.frombuffer(constant.value.data.data, dtype=np.int8)
        if entries.size:
            c_low, c_high = int(entries.min()), int(entries.max())
    c_low, c_high = c_low - op.constant_zp.value.data, c_high - op.constant_zp.value.data
    corners = [a * b for a in (x_low, x_high) for b in (c_low, c_high)]
    return min(corners), max(corners)


def static_range(value: SSAValue) -> tuple[int, int] | None:
    """Bounds every element of `value` provably lies in, from its type and its producer.

    An int8 value lies in the int8 range. A `dghw.rescale` result lies in
    [clamp_min, clamp_max], its clamp; one of an int8 input is one of the 256
    entries of its table (`RescaleTable`), so it lies between the smallest and
    the largest. A `dghw.mul` result lies in its `product_range`. None when
    nothing narrower than int32 is known.
    """
    if numpy_dtype(value.type) == np.int8:
        return -128, 127
    op = value.owner
    if isinstance(op, dghw.MulOp):
        return product_range(op)
    if not isinstance(op, dghw.RescaleOp):
        return None
    if numpy_dtype(op.input.type) == np.int8:
        return RescaleTable.prepare(op, rescale_parameters(op)).bounds
    return op.clamp_min.value.data, op.clamp_max.value.data


RANGE_TABLE_ENTRIES = 1 << 17
"""The most results a `RangeTable` holds (128 KB for an int8 result, in cache): enough
for every product of two int8 values (2 * 255 * 255 + 1 = 130051 at most)."""


@dataclass(frozen=True)
class RangeTable:
    """A per-tensor `dghw.rescale` of an int32 input as a table of its results over an
    interval [low, high] of at most `RANGE_TABLE_ENTRIES` values, where every input
    outside the interval has the result of its nearer end.

    That holds for the input's `static_range` (no input lies outside it: after a
    `dghw.mul`, RoPE's products with its cos and sin tables), and for the clip
    interval of `ClippedFloatRescale` (below `low` every result is clamp_min, the
    result of `low`; above `high` clamp_max, that of `high`: the requantization
    after an attention matmul). Entry `v - low` is the rescale of `v`, computed
    once by the step-by-step definition (`unclamped_rescale` and the clamp,
    docs/dghw.md); a lookup whose index is clipped to the table (numpy's
    `mode="clip"`) returns the integers the arithmetic would: two passes, not five.
    """

    low: int
    table: np.ndarray
    """[high - low + 1] in the result dtype."""

    @staticmethod
    def prepare(op: dghw.RescaleOp, parameters: RescaleParameters) -> RangeTable | None:
        if numpy_dtype(op.input.type) != np.int32 or len(op.multiplier.get_values()) > 1:
            return None
        bounds = static_range(op.input)
        if bounds is None or bounds[1] - bounds[0] + 1 > RANGE_TABLE_ENTRIES:
            clipped = ClippedFloatRescale.prepare(op)
            if clipped is None:
                return None
            bounds = int(clipped.low), int(clipped.high)  # per tensor: ints
            if bounds[1] - bounds[0] + 1 > RANGE_TABLE_ENTRIES:
                return None
        v = unclamped_rescale(op, np.arange(bounds[0], bounds[1] + 1), parameters)
        np.clip(v, op.clamp_min.value.data, op.clamp_max.value.data, out=v)
        return RangeTable(bounds[0], v.astype(numpy_dtype(op.result.type)))

    def apply(self, x: np.ndarray) -> np.ndarray:
        index = np.subtract(x, self.low, dtype=np.int64)  # int32 - int32: no wrap
        # "clip" maps an index below 0 to entry 0 and one past the end to the last entry:
        # an input outside [low, high] gets its nearer end's result (the class's premise).
        return self.table.take(index, mode="clip")


def rescale_plan(op: dghw.RescaleOp) -> Callable[[np.ndarray], np.ndarray]:
    """How `op` runs, prepared once: a table for an int8 input or over a small interval
    (`RangeTable`), else a clip and float64 when those are exact, else the folded form
    when int64 holds it, else the step-by-step definition."""
    parameters = rescale_parameters(op)
    if numpy_dtype(op.input.type) == np.int8:
        return RescaleTable.prepare(op, parameters).apply
    ranged = RangeTable.prepare(op, parameters)
    if ranged is not None:
        return ranged.apply
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


def per_element_rescale_plan(op: dghw.RescaleOp) -> Callable[[np.ndarray], np.ndarray]:
    """`rescale_plan`, run in the input's memory order (`in_memory_order`) when the rescale
    is per tensor: then every element has the same parameters, whatever its axis."""
    plan = rescale_plan(op)
    if len(op.multiplier.get_values()) > 1:
        return plan
    return lambda x: in_memory_order(plan, x)


@register_impls
@dataclass
class QuantizationFunctions(KernelFunctions):
    """The quantization family's dghw ops."""

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

    @impl(dghw.RescaleOp)
    def run_rescale(
        self, interpreter: Interpreter, op: dghw.RescaleOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        return (self.planned(op, per_element_rescale_plan)(x),)
