"""max_pool2d and avg_pool2d: windows walked tap by tap on strided views, avg pool's
divisors as fixed-point scales.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
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
from dg.dialects.fixed_point import MAX_DIVISOR, reciprocal_scale
from dg.runtime.kernels.common import KernelFunctions


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


@register_impls
@dataclass
class PoolingFunctions(KernelFunctions):
    """The pooling family's dghw ops."""

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
