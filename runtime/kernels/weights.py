"""The accumulating ops: conv2d (dense and depthwise) and fully_connected, on weights
prepared once for exact GEMMs (`gemm_weights`) and depthwise taps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias, TypeVar, cast

import numpy as np
import torch
from xdsl.interpreter import (
    Interpreter,
    impl,
    impl_external,
    register_impls,
)
from xdsl.ir import Operation

from dg.dialects import dghw
from dg.runtime.exact import (
    F32_EXACT_LIMIT,
    centered_magnitude_bound,
    column_magnitude_sums,
    may_leave_int32,
)
from dg.runtime.kernels.common import (
    KernelFunctions,
    check_int32,
    defined_by_constant,
    sole_int8_rescale,
)
from dg.runtime.kernels.gemm import (
    AccumulatePlan,
    GemmOp,
    PreparedGemm,
    gemm_weights,
    takes_scaled,
)
from dg.runtime.kernels.patches import centered_padded
from dg.runtime.kernels.pooling import pad_for_windows, spatial_extents, window_taps
from dg.runtime.kernels.quantization import per_element_rescale_plan
from dg.runtime.kernels.requantization import ScaledGemm, SumRequantization
from dg.runtime.threads import run_blocks_in_parts, threads_for

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


DEPTHWISE_BLOCK = 1 << 17
"""Sums per block of a requantized depthwise conv (`DepthwiseWeights.requantized`): the
block's float32 sums (512 KB) stay in cache through its taps and its requantization.
MobileNetV2's at batch 32, the taps and their requantization alone: 112 x 112 x 32 took
40 against 74 ms for the whole map at once on one thread (27 against 49 on two), 56 x 56
x 144 41 against 90 (39 against 50)."""

DEPTHWISE_BLOCKS = 4
"""Blocks up to which a requantized depthwise conv takes the whole map at once: at batch 1
(MobileNetV2's maps of at most 112 x 112 x 32 sums) the blocks' calls cost more than the
cache saves (1.1 to 1.3 ms against 1.0 to 1.1 for the whole map)."""


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
        n, channels = centered_padded.shape[0], centered_padded.shape[3]
        acc = torch.empty((n, *out_hw, channels), dtype=torch.float32)
        with threads_for(acc.numel()):
            self.tap_sums_into(torch.from_numpy(centered_padded), stride, acc)
        return acc.numpy()

    def tap_sums_into(self, padded: torch.Tensor, stride: Sequence[int], acc: torch.Tensor) -> None:
        """The tap sums of the windows of `padded` (float32, centred and padded) into `acc`
        [N, OH, OW, C]: one fused multiply-add pass per tap."""
        assert self.float_taps is not None
        taps = window_taps(padded, self.taps.shape[:2], stride, tuple(acc.shape[1:3]))
        ky, kx, view = next(taps)
        torch.mul(view, self.float_taps[ky, kx], out=acc)
        for ky, kx, view in taps:
            acc.addcmul_(view, self.float_taps[ky, kx])

    def requantized(
        self,
        centered_padded: np.ndarray,
        stride: Sequence[int],
        out_hw: tuple[int, int],
        requantize: SumRequantization,
    ) -> np.ndarray:
        """`requantize` of the tap sums (`accumulate_float`): over a map of more than
        `DEPTHWISE_BLOCKS` blocks, a block of an item's output rows at a time
        (`DEPTHWISE_BLOCK` sums), each block's sums taking all the taps and their
        requantization while in cache, the blocks split over the caller's threads
        (`run_blocks_in_parts`). Each sum is the same taps' in the same order either way."""
        n, channels = centered_padded.shape[0], centered_padded.shape[3]
        oh, ow = out_hw
        if n * oh * ow * channels <= DEPTHWISE_BLOCKS * DEPTHWISE_BLOCK:
            return requantize.apply(self.accumulate_float(centered_padded, stride, out_hw))
        (kh, _), sy = self.taps.shape[:2], stride[0]
        rows = max(1, DEPTHWISE_BLOCK // (ow * channels))
        per_item = -(-oh // rows)  # blocks of an item's output rows, the last one shorter
        padded = torch.from_numpy(centered_padded)
        out = torch.empty((n, oh, ow, channels), dtype=requantize.dtype)

        def scratch() -> tuple[torch.Tensor, torch.Tensor]:
            return (
                torch.empty((1, rows, ow, channels), dtype=torch.float32),
                torch.empty((rows * ow, channels), dtype=torch.float64),
            )

        def accumulate_then_requantize(
            block: int, _: int, buffers: tuple[torch.Tensor, torch.Tensor]
        ) -> None:
            item, start = block // per_item, block % per_item * rows
            count = min(rows, oh - start)
            window = padded[item : item + 1, start * sy : (start + count - 1) * sy + kh]
            sums = buffers[0][:, :count]
            self.tap_sums_into(window, stride, sums)
            block_out = out[item, start : start + count].view(-1, channels)
            requantize.requantize_into(sums.view(-1, channels), block_out, buffers[1])

        work = out.numel() * self.taps[..., 0].size
        run_blocks_in_parts(n * per_item, 1, accumulate_then_requantize, scratch, work)
        return out.numpy()


RequantizedStep: TypeAlias = tuple[
    PreparedGemm | None,
    SumRequantization | None,
    ScaledGemm | None,
    Callable[[np.ndarray], np.ndarray],
]
"""`WeightsFunctions.requantized_step`'s forms of one requantized accumulate op."""


ACCUMULATE_THEN_RESCALE = "dghw.accumulate_then_rescale"
"""The external impl (`impl_external`) the device model's plan runs a
`requantized_accumulate` group with."""


SIBLING_FCS = "dghw.sibling_fcs_then_rescale"
"""The external impl the device model's plan runs a `sibling_fcs` group with: the shared
input, then each FC's weight and bias, in; each FC's rescaled int8 result out."""


def sibling_fcs(op: Operation) -> tuple[dghw.FullyConnectedOp, ...] | None:
    """The requantized FCs (`requantized_accumulate`) that read `op`'s input with `op`'s input
    zero point, `op` first in the block among them, when there are at least two (an
    attention's q, k and v projections): their GEMMs have the same rows, so one GEMM of their
    weights side by side does the work of all (`SiblingFcs`)."""
    if not isinstance(op, dghw.FullyConnectedOp) or requantized_accumulate(op) is None:
        return None
    members = [
        use.operation
        for use in op.input.uses
        if isinstance(use.operation, dghw.FullyConnectedOp)
        and use.index == 0
        and use.operation.parent_block() is op.parent_block()
        and use.operation.input_zp.value.data == op.input_zp.value.data
        and requantized_accumulate(use.operation) is not None
    ]
    if len(members) < 2 or any(other.is_before_in_block(op) for other in members):
        return None
    return (op, *sorted((m for m in members if m is not op), key=op_position))


def member_args(args: tuple[np.ndarray, ...], index: int) -> tuple[np.ndarray, ...]:
    """The `index`-th member's (x, weight, bias) of a `SIBLING_FCS` step's operands: x, then
    each member's weight and bias."""
    return (args[0], *args[1 + 2 * index : 3 + 2 * index])


def op_position(op: Operation) -> int:
    """`op`'s index in its block."""
    block = op.parent_block()
    assert block is not None
    return block.get_operation_index(op)


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
class SiblingFcs:
    """A `sibling_fcs` group prepared once: each FC's rescale, and, where every member's
    requantization folds into its weights with one clamp (`ScaledGemm.side_by_side`), that
    one form with each member's columns. Each column is computed as its own FC's would be,
    so each result is that FC's."""

    rescales: tuple[dghw.RescaleOp, ...]
    gemm: PreparedGemm
    """The first FC's: its rows are every member's (one input, one zero point)."""
    scaled: ScaledGemm | None
    columns: tuple[tuple[int, int], ...]
    """Each member's columns of `scaled`'s results."""

    @property
    def widest(self) -> int:
        """The most columns of a member: `scaled` runs where each member's own would
        (`takes_scaled`)."""
        return max(end - start for start, end in self.columns)

    def apply(self, x: np.ndarray) -> tuple[np.ndarray, ...] | None:
        """The members' results on x by the one form (views of its [M, N] results), or None
        where a member's own step would not take its form."""
        k = x.shape[-1]
        # Judged from x's shape before the rows are made: float32 weights' rows are a
        # centred copy, which the members' own steps would then make again.
        if self.scaled is None or not takes_scaled(x.size // k, k, self.widest):
            return None
        out = self.scaled.apply(self.gemm.rows(x))
        lead = x.shape[:-1]
        return tuple(out[:, start:end].reshape(*lead, end - start) for start, end in self.columns)


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
        padded, stride = self.depthwise_float_input(op, x)
        return weights.accumulate_float(padded, stride, spatial_extents(op))

    def depthwise_float_input(
        self, op: dghw.DepthwiseConv2dOp, x: np.ndarray
    ) -> tuple[np.ndarray, tuple[int, ...]]:
        """x centred and padded in float32, as the float taps read it, and the stride."""
        plan = self.planned(op, AccumulatePlan.prepare)
        # Centering before padding makes the padded positions 0, i.e. reading input_zp.
        return centered_padded(x, plan.input_zp, plan.pad, np.dtype(np.float32)), plan.stride

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
        gemm, requantize, scaled, rescale_alone = self.planned(
            rescale, lambda r: self.requantized_step(r, args)
        )
        if gemm is None:
            return self.depthwise_then_rescale(interpreter, rescale, requantize, args)
        x = args[0]
        if requantize is not None:
            return (gemm.requantized(x, requantize, scaled),)
        return (rescale_alone(gemm.accumulate(x, rescale.input.owner)),)

    @impl_external(SIBLING_FCS)
    def run_sibling_fcs(
        self, interpreter: Interpreter, op: Operation, args: tuple[np.ndarray, ...]
    ) -> tuple[np.ndarray, ...]:
        """The results of `op`'s `sibling_fcs` group on x and each member's weight and bias
        (`args`): by the one folded form (`SiblingFcs`), else each member's own step
        (`run_accumulate_then_rescale`)."""
        x = args[0]
        siblings = self.planned(op, lambda first: self.sibling_step(first, args))
        results = siblings.apply(x)
        if results is not None:
            return results
        return tuple(
            self.run_accumulate_then_rescale(interpreter, rescale, member_args(args, i))[0]
            for i, rescale in enumerate(siblings.rescales)
        )

    def sibling_step(self, first: Operation, args: tuple[np.ndarray, ...]) -> SiblingFcs:
        """`run_sibling_fcs`'s group, prepared once: each member's own step
        (`requantized_step`, as its rescale's plan), and their folded forms side by side."""
        members = sibling_fcs(first)
        assert members is not None
        rescales = tuple(cast(dghw.RescaleOp, requantized_accumulate(fc)) for fc in members)
        steps = [
            self.planned(r, lambda r, i=i: self.requantized_step(r, member_args(args, i)))
            for i, r in enumerate(rescales)
        ]
        forms = [scaled for _, _, scaled, _ in steps]
        gemms = [gemm for gemm, _, _, _ in steps]
        kinds = {type(gemm.weights) for gemm in gemms if gemm is not None}
        scaled = None
        if all(form is not None for form in forms) and len(kinds) == 1:
            scaled = ScaledGemm.side_by_side(cast(list[ScaledGemm], forms))
        widths = [cast(PreparedGemm, gemm).weights.matrix.shape[1] for gemm in gemms]
        bounds = np.cumsum([0, *widths]).tolist()
        columns = tuple(zip(bounds[:-1], bounds[1:], strict=True))
        return SiblingFcs(rescales, cast(PreparedGemm, gemms[0]), scaled, columns)

    def requantized_step(
        self, rescale: dghw.RescaleOp, args: tuple[np.ndarray, ...]
    ) -> RequantizedStep:
        """What `run_accumulate_then_rescale` reads for `rescale`, prepared once: the
        accumulate op's `PreparedGemm` (None for a depthwise conv), the fused form, the
        form folded into small weights (`PreparedGemm.scaled`), and the rescale's own plan."""
        accumulate = cast(dghw.AccumulateOp, rescale.input.owner)
        requantize = self.sum_requantization(accumulate, rescale, args)
        if isinstance(accumulate, dghw.DepthwiseConv2dOp):
            return None, requantize, None, per_element_rescale_plan(rescale)
        gemm = self.prepared_gemm(cast(GemmOp, accumulate), args[1], args[2])
        scaled = None if requantize is None else gemm.scaled(requantize)
        return gemm, requantize, scaled, per_element_rescale_plan(rescale)

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
        padded, stride = self.depthwise_float_input(depthwise, x)
        return (weights.requantized(padded, stride, spatial_extents(depthwise), requantize),)
