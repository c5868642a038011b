"""The accumulating ops: conv2d (dense and depthwise) and fully_connected, on weights
prepared once for exact GEMMs (`gemm_weights`) and depthwise taps.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar, cast

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
    as_tensor,
    centered_magnitude_bound,
    column_magnitude_sums,
    float32_gemm_into,
    may_leave_int32,
    torch_matmul_is_ieee,
)
from dg.runtime.int8_gemm import int8_gemm_into, int8_gemms_enabled, int8_tensor
from dg.runtime.kernels.common import (
    KernelFunctions,
    centered_into,
    check_int32,
    defined_by_constant,
    sole_int8_rescale,
)
from dg.runtime.kernels.gemm_weights import AnyGemmWeights, GemmWeights, Int8GemmWeights
from dg.runtime.kernels.pooling import pad_for_windows, spatial_extents, window_taps
from dg.runtime.kernels.quantization import per_element_rescale_plan
from dg.runtime.kernels.requantization import SumRequantization
from dg.runtime.threads import run_in_parts, threads_for

_W = TypeVar("_W")
"""Prepared weights of some kind (`WeightsFunctions.prepared_weights`)."""


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
    x: np.ndarray,
    input_zp: int,
    kernel: tuple[int, int],
    stride: Sequence[int],
    pad: Sequence[int],
    centered: bool = True,
) -> tuple[np.ndarray, tuple[int, int, int]]:
    """im2col of an NHWC int8 map: [N*OH*OW, KH*KW*C] patches and (N, OH, OW): the
    `conv_windows` as rows, a view of x where no copy is needed (a 1x1 conv of stride 1
    without padding, of int8 x)."""
    windows = conv_windows(x, input_zp, kernel, stride, pad, centered)
    n, oh, ow = windows.shape[:3]
    return windows.reshape(n * oh * ow, -1), (n, oh, ow)


def conv_windows(
    x: np.ndarray,
    input_zp: int,
    kernel: tuple[int, int],
    stride: Sequence[int],
    pad: Sequence[int],
    centered: bool = True,
) -> np.ndarray:
    """The [N, OH, OW, KH, KW, C] view of every output's window of an NHWC int8 map.

    `centered`: of float32 x - input_zp, padded with 0 (for float32 GEMMs); else of x's own
    int8, padded with input_zp (for int8 GEMMs, which fold the zero point into the bias).
    Either way a padded position contributes nothing, as reading input_zp does.
    A window's elements are ordered (ky, kx, c), the OHWI weight order: with the window axes
    in front of C, an im2col copy reads runs of C contiguous elements, which is most
    of its cost.
    """
    (kh, kw), (sy, sx) = kernel, stride
    top, bottom, left, right = pad
    oh = (x.shape[1] + top + bottom - kh) // sy + 1
    ow = (x.shape[2] + left + right - kw) // sx + 1
    if centered:
        padded = centered_padded(x, input_zp, pad, np.dtype(np.float32))
    elif any(pad):
        padded = pad_for_windows(x, (top, left), kernel, stride, (oh, ow), input_zp)
    else:
        padded = np.ascontiguousarray(x)  # the window view is made on its buffer
    n, c = padded.shape[0], padded.shape[3]
    sn, sh, sw, sc = padded.strides
    # Made from strides directly: `sliding_window_view` + a strided slice + a transpose
    # give the same view at ~30 us of Python per call, which is a third of a small conv.
    return np.ndarray(
        (n, oh, ow, kh, kw, c), padded.dtype, padded, 0, (sn, sh * sy, sw * sx, sh, sw, sc)
    )


def copy_patches(windows: np.ndarray, out: np.ndarray, start: int) -> None:
    """The im2col rows [start, start + len(out)) of `windows` ([N, OH, OW, KH, KW, C], rows
    in (n, oh, ow) order) copied into `out` [rows, KH*KW*C]: an item's whole output rows in
    one copy, a partial row in one more."""
    _, oh, ow = windows.shape[:3]
    window = windows.shape[3:]
    done, end = 0, len(out)
    while done < end:
        item, rest = divmod(start + done, oh * ow)
        row, column = divmod(rest, ow)
        if column or end - done < ow:
            take = min(ow - column, end - done)
            target = out[done : done + take].reshape(take, *window)
            np.copyto(target, windows[item, row, column : column + take])
        else:
            rows = min(oh - row, (end - done) // ow)
            take = rows * ow
            target = out[done : done + take].reshape(rows, ow, *window)
            np.copyto(target, windows[item, row : row + rows])
        done += take


def centered_padded(
    x: np.ndarray, zero_point: int, pad: Sequence[int], dtype: np.dtype[Any]
) -> np.ndarray:
    """x - zero_point in `dtype` (exact: wide enough for it), NHWC, padded with 0.

    `pad` = (top, bottom, left, right). The subtraction writes straight into the
    interior of the result (`centered_into`) and only the border is zeroed, where
    `np.pad` of a centered copy would make three passes (convert, subtract, pad) and
    a zero-filled result two (a 1x1 conv has no border at all).
    """
    top, bottom, left, right = pad
    n, h, w, c = x.shape
    out = np.empty((n, top + h + bottom, left + w + right, c), dtype=dtype)
    out[:, :top] = 0
    out[:, top + h :] = 0
    out[:, top : top + h, :left] = 0
    out[:, top : top + h, left + w :] = 0
    centered_into(out[:, top : top + h, left : left + w], x, zero_point)
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
        with threads_for(acc.numel()):
            ky, kx, view = next(taps)
            torch.mul(view, self.float_taps[ky, kx], out=acc)
            for ky, kx, view in taps:
                acc.addcmul_(view, self.float_taps[ky, kx])
        return acc.numpy()


ACCUMULATE_THEN_RESCALE = "dghw.accumulate_then_rescale"
"""The external impl (`impl_external`) the device model's plan runs a
`requantized_accumulate` group with."""


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


@dataclass(frozen=True)
class AccumulatePlan:
    """What an accumulate op's kernels read from its op on every run, read once."""

    input_zp: int
    stride: tuple[int, ...]
    """A convolution's (sy, sx); () for fully_connected."""
    pad: tuple[int, ...]
    """A convolution's (top, bottom, left, right); () for fully_connected."""
    shape: tuple[int, ...]
    """The result type's shape, `DYNAMIC_INDEX` where x's extent goes (`result_shape`)."""

    def result_shape(self, x: np.ndarray) -> tuple[int, ...]:
        """The result's shape for the input x: x's extents where it is dynamic (the batch
        axis alone, in every lowered module, is filled without a loop)."""
        shape = self.shape
        if shape[0] == DYNAMIC_INDEX and DYNAMIC_INDEX not in shape[1:]:
            return (x.shape[0], *shape[1:])
        return tuple(x.shape[i] if d == DYNAMIC_INDEX else d for i, d in enumerate(shape))

    @staticmethod
    def prepare(op: dghw.AccumulateOp) -> AccumulatePlan:
        conv = isinstance(op, dghw.Conv2dOp | dghw.DepthwiseConv2dOp)
        return AccumulatePlan(
            op.input_zp.value.data,
            tuple(op.stride.get_values()) if conv else (),
            tuple(op.pad.get_values()) if conv else (),
            tuple(cast(TensorType[Attribute], op.result.type).get_shape()),
        )


FUSED_BLOCK = 1 << 16
"""Sums per block of a requantized GEMM (`PreparedGemm.requantized`): the block's int32 or
float32 sums (256 KB) and float64 scratch (512 KB) stay in cache between the GEMM and the
requantization."""


BlockGemm: TypeAlias = tuple[int, Callable[[int, int, torch.Tensor], None], torch.dtype, int]
"""`PreparedGemm.block_gemm`'s (rows, GEMM of a block of rows, sums dtype, multiply-adds)."""


GemmOp: TypeAlias = dghw.Conv2dOp | dghw.FullyConnectedOp
"""The accumulate ops that run as GEMMs."""


def gemm_weights(op: GemmOp, matrix: np.ndarray, bias: np.ndarray) -> AnyGemmWeights:
    """`op`'s [K, N] weight `matrix` prepared for int8 GEMMs where they are enabled
    (`int8_gemms_enabled`) and the weights allow (`Int8GemmWeights.prepare`), else for
    float32 GEMMs."""
    input_zp, weight_zp = op.input_zp.value.data, op.weight_zp.value.data
    if int8_gemms_enabled():
        int8 = Int8GemmWeights.prepare(matrix, weight_zp, bias, input_zp)
        if int8 is not None:
            return int8
    x_range = (-128 - input_zp, 127 - input_zp)
    return GemmWeights.prepare(matrix, weight_zp, bias, x_range)


@dataclass(frozen=True)
class PreparedGemm:
    """A conv2d or fully_connected prepared once: its GEMM weights, its plan, and how its
    input becomes the GEMM's rows (`rows`)."""

    weights: AnyGemmWeights
    plan: AccumulatePlan
    kernel: tuple[int, int] | None
    """A conv's (KH, KW); None for fully_connected."""

    def rows(self, x: np.ndarray) -> np.ndarray:
        """The GEMM's [M, K] rows of x, as the weights take them: float32 and centred, or
        x's own int8 for `Int8GemmWeights`; a conv's patches (`conv_patches`), an FC's
        rows (a view, for int8)."""
        int8 = isinstance(self.weights, Int8GemmWeights)
        plan = self.plan
        if self.kernel is not None:
            return conv_patches(x, plan.input_zp, self.kernel, plan.stride, plan.pad, not int8)[0]
        rows = x.reshape(-1, x.shape[-1])
        if int8:
            return rows
        return centered_into(np.empty(rows.shape, np.float32), rows, plan.input_zp)

    def requantized(self, x: np.ndarray, requantize: SumRequantization) -> np.ndarray:
        """`requantize` of the GEMM's sums on x (`one_gemm_sums`). A GEMM of more than
        `FUSED_BLOCK` sums runs a block of rows at a time (`block_gemm`), each block's sums
        requantized while in cache, the blocks split over the caller's threads
        (`run_in_parts`): a map-sized sum was written to memory and read back, and its
        requantization ran slower on two threads than on one (ViT-Ti at batch 32: 160
        against 130 ms)."""
        shape = self.plan.result_shape(x)
        n = self.weights.matrix.shape[1]
        block = self.block_gemm(x) if math.prod(shape) > FUSED_BLOCK else None
        if block is None:
            return requantize.apply(self.weights.sums(self.rows(x)).reshape(shape))
        count, gemm, sums_dtype, work = block
        out = torch.empty((count, n), dtype=requantize.dtype)
        block_rows = max(1, FUSED_BLOCK // n)

        def gemm_then_requantize(starts: Sequence[int]) -> None:
            sums = torch.empty((block_rows, n), dtype=sums_dtype)
            scaled = torch.empty((block_rows, n), dtype=torch.float64)
            for start in starts:
                end = min(start + block_rows, count)
                gemm(start, end, sums[: end - start])
                requantize.requantize_into(sums[: end - start], out[start:end], scaled)

        run_in_parts(gemm_then_requantize, range(0, count, block_rows), work)
        return out.numpy().reshape(shape)

    def block_gemm(self, x: np.ndarray) -> BlockGemm | None:
        """(rows M, the GEMM of rows [start, end) into a tensor, its sums' dtype, M K N) for
        `requantized`'s blocks, where a block's GEMM is exact on its own: an int8 GEMM
        (int32 sums), or torch's float32 matmul while it computes in IEEE float32
        (`torch_matmul_is_ieee`); each block's sums are the exact integers of the whole
        GEMM's rows. A block's rows are x's own (`own_rows`; float32: centred a block at a
        time), or a conv's patches copied from its windows (`copy_patches`): no map-sized
        patches (ResNet-18's 7x7 stem at batch 32: 236 MB of float32). None otherwise."""
        weights = self.weights
        int8 = isinstance(weights, Int8GemmWeights)
        if int8:
            matrix, multiply = weights.matrix, int8_gemm_into
        elif isinstance(weights.matrix, np.ndarray) and torch_matmul_is_ieee():
            matrix, multiply = as_tensor(weights.matrix), float32_gemm_into
        else:
            return None
        if matrix is None:
            return None
        count, rows_of = self.block_lhs(x, int8)
        k, n = matrix.shape

        def block(start: int, end: int, sums: torch.Tensor) -> None:
            multiply(rows_of(start, end), matrix, sums)

        return count, block, torch.int32 if int8 else torch.float32, count * k * n

    def block_lhs(
        self, x: np.ndarray, int8: bool
    ) -> tuple[int, Callable[[int, int], torch.Tensor]]:
        """(rows M, the GEMM's rows [start, end) as a tensor) of x, for `block_gemm`."""
        plan = self.plan
        own = self.own_rows(x)
        if own is None:
            assert self.kernel is not None
            windows = conv_windows(x, plan.input_zp, self.kernel, plan.stride, plan.pad, not int8)
            k = math.prod(windows.shape[3:])

            def patches(start: int, end: int) -> torch.Tensor:
                block = np.empty((end - start, k), windows.dtype)
                copy_patches(windows, block, start)
                return torch.from_numpy(block)

            return math.prod(windows.shape[:3]), patches
        rows = int8_tensor(own)
        if int8:
            return len(rows), lambda start, end: rows[start:end]
        zero_point = plan.input_zp
        # x - zp in float32: exact (|x - zp| <= 255)
        return len(rows), lambda start, end: rows[start:end].to(torch.float32).sub_(zero_point)

    def own_rows(self, x: np.ndarray) -> np.ndarray | None:
        """x's int8 elements as the GEMM's [M, K] rows (a view), where they are: an FC's, a
        1x1 conv's of stride 1 without padding; else None (patches)."""
        plan = self.plan
        if self.kernel is None:
            return x.reshape(-1, x.shape[-1])
        if self.kernel == (1, 1) and set(plan.stride) == {1} and not any(plan.pad):
            return x.reshape(-1, x.shape[-1])
        return None

    def accumulate(self, x: np.ndarray, op: Operation) -> np.ndarray:
        """The op's int32 result on x (`AnyGemmWeights.accumulate`), its rows in one run per
        batch item."""
        items = x.shape[0] if self.kernel is not None else fc_items(x)
        shape = self.plan.result_shape(x)
        return self.weights.accumulate(self.rows(x), op, items).reshape(shape)


@register_impls
@dataclass
class WeightsFunctions(KernelFunctions):
    """The weights family's dghw ops."""

    def prepared_gemm(self, op: GemmOp, weight: np.ndarray, bias: np.ndarray) -> PreparedGemm:
        """`op` prepared for its GEMM (`prepared_weights`): its weights as a [K, N] matrix
        (`gemm_weights`; a conv's OHWI as [(ky, kx, c), o], the column order of
        `conv_patches`; an FC's [N, K] transposed) and its plan."""

        def prepare() -> PreparedGemm:
            plan = AccumulatePlan.prepare(op)
            if isinstance(op, dghw.Conv2dOp):
                matrix = weight.reshape(weight.shape[0], -1).T
                kernel = (weight.shape[1], weight.shape[2])
                return PreparedGemm(gemm_weights(op, matrix, bias), plan, kernel)
            return PreparedGemm(gemm_weights(op, weight.T, bias), plan, None)

        return self.prepared_weights(op, prepare)

    def prepared_weights(self, op: dghw.AccumulateOp, prepare: Callable[[], _W]) -> _W:
        """`prepare()`, cached by op when its weights are constants (`has_constant_weights`)."""
        weights = self._cache.get(op)
        if weights is not None:
            return cast(_W, weights)
        return self.cached(op, prepare) if has_constant_weights(op) else prepare()

    @impl(dghw.Conv2dOp)
    def run_conv2d(
        self, interpreter: Interpreter, op: dghw.Conv2dOp, args: tuple[np.ndarray, ...]
    ) -> tuple[np.ndarray]:
        x, weight, bias = args
        return (self.prepared_gemm(op, weight, bias).accumulate(x, op),)

    def depthwise_weights(
        self, op: dghw.DepthwiseConv2dOp, weight: np.ndarray, bias: np.ndarray
    ) -> DepthwiseWeights:
        """Prepared weights of `op` (`prepared_weights`)."""

        def prepare() -> DepthwiseWeights:
            x_bound = centered_magnitude_bound(np.dtype(np.int8), op.input_zp.value.data)
            return DepthwiseWeights.prepare(weight, bias, op.weight_zp.value.data, x_bound)

        return self.prepared_weights(op, prepare)

    def depthwise_float_sums(
        self, op: dghw.DepthwiseConv2dOp, x: np.ndarray, weights: DepthwiseWeights
    ) -> np.ndarray:
        """The tap sums without the bias, float32 NHWC (`DepthwiseWeights.accumulate_float`)."""
        plan = self.planned(op, AccumulatePlan.prepare)
        # Centering before padding makes the padded positions 0, i.e. reading input_zp.
        padded = centered_padded(x, plan.input_zp, plan.pad, np.dtype(np.float32))
        return weights.accumulate_float(padded, plan.stride, spatial_extents(op))

    @impl(dghw.DepthwiseConv2dOp)
    def run_depthwise_conv2d(
        self, interpreter: Interpreter, op: dghw.DepthwiseConv2dOp, args: tuple[np.ndarray, ...]
    ) -> tuple[np.ndarray]:
        x, weight, bias = args
        weights = self.depthwise_weights(op, weight, bias)
        if weights.float_taps is not None:
            sums = self.depthwise_float_sums(op, x, weights)
            return (add_bias(sums, weights.bias, weights.may_overflow, op),)
        plan = self.planned(op, AccumulatePlan.prepare)
        stride, pad, out_hw = plan.stride, plan.pad, spatial_extents(op)
        centered = x.astype(weights.taps.dtype)
        centered -= plan.input_zp
        padded = pad_for_windows(centered, (pad[0], pad[2]), weight.shape[:2], stride, out_hw, 0)
        return (weights.accumulate(padded, stride, out_hw, op),)

    @impl(dghw.FullyConnectedOp)
    def run_fully_connected(
        self, interpreter: Interpreter, op: dghw.FullyConnectedOp, args: tuple[np.ndarray, ...]
    ) -> tuple[np.ndarray]:
        x, weight, bias = args
        return (self.prepared_gemm(op, weight, bias).accumulate(x, op),)

    def sum_requantization(
        self, accumulate: Operation, rescale: dghw.RescaleOp, args: tuple[np.ndarray, ...]
    ) -> SumRequantization | None:
        """The rescale of the op's bias-less sums with its bias folded in, where one GEMM (or
        the float taps) gives them exactly and int32 holds every partial sum; else None."""
        _, weight, bias = args
        if isinstance(accumulate, dghw.DepthwiseConv2dOp):
            taps = self.depthwise_weights(accumulate, weight, bias)
            if taps.float_taps is None or taps.may_overflow:
                return None
            return SumRequantization.prepare(rescale, taps.bias, F32_EXACT_LIMIT)
        gemm = self.prepared_gemm(cast(GemmOp, accumulate), weight, bias)
        form = gemm.weights.one_gemm_sums()
        return None if form is None else SumRequantization.prepare(rescale, *form)

    @impl_external(ACCUMULATE_THEN_RESCALE)
    def run_accumulate_then_rescale(
        self, interpreter: Interpreter, op: Operation, args: tuple[np.ndarray, ...]
    ) -> tuple[np.ndarray]:
        """`op`, the rescale of a `requantized_accumulate` group, of the accumulate op on
        `args`: from the bias-less sums, without the int32 map, where `sum_requantization`
        allows it; else the accumulator, then the rescale's own plan
        (`per_element_rescale_plan`)."""
        rescale = cast(dghw.RescaleOp, op)
        gemm, requantize, rescale_alone = self.planned(
            rescale, lambda r: self.requantized_step(r, args)
        )
        if gemm is None:
            return self.depthwise_then_rescale(interpreter, rescale, requantize, args)
        x = args[0]
        if requantize is not None:
            return (gemm.requantized(x, requantize),)
        return (rescale_alone(gemm.accumulate(x, rescale.input.owner)),)

    def requantized_step(
        self, rescale: dghw.RescaleOp, args: tuple[np.ndarray, ...]
    ) -> tuple[PreparedGemm | None, SumRequantization | None, Callable[[np.ndarray], np.ndarray]]:
        """What `run_accumulate_then_rescale` reads for `rescale`, prepared once: the
        accumulate op's `PreparedGemm` (None for a depthwise conv), the fused form, and the
        rescale's own plan."""
        accumulate = cast(dghw.AccumulateOp, rescale.input.owner)
        requantize = self.sum_requantization(accumulate, rescale, args)
        if isinstance(accumulate, dghw.DepthwiseConv2dOp):
            gemm = None
        else:
            gemm = self.prepared_gemm(cast(GemmOp, accumulate), args[1], args[2])
        return gemm, requantize, per_element_rescale_plan(rescale)

    def depthwise_then_rescale(
        self,
        interpreter: Interpreter,
        rescale: dghw.RescaleOp,
        requantize: SumRequantization | None,
        args: tuple[np.ndarray, ...],
    ) -> tuple[np.ndarray]:
        """`run_accumulate_then_rescale` of a depthwise conv2d: the fused form from the float
        taps, else the two ops' impls in turn."""
        depthwise = cast(dghw.DepthwiseConv2dOp, rescale.input.owner)
        x, weight, bias = args
        if requantize is None:
            run = interpreter._impls.run  # as the plan runs every op (unobserved)
            acc = run(interpreter, depthwise, args).values
            return cast(tuple[np.ndarray], run(interpreter, rescale, acc).values)
        weights = self.depthwise_weights(depthwise, weight, bias)
        return (requantize.apply(self.depthwise_float_sums(depthwise, x, weights)),)


def fc_items(x: np.ndarray) -> int:
    """The runs of rows of a fully_connected's input, one per batch item (`accumulate`)."""
    return x.shape[0] if x.ndim > 1 else 1
