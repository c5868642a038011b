"""Layout: ops that only move or pick stored values (reshape and flatten, dg.Flatten's
channels-last flatten, transpose, slice, pad, concat, nearest resize).

Each commutes with dequantize, so it moves to the quantized side on its
input's grid: `op(dgq.dequantize(a)) -> dgq.dequantize(dgq.op(a))`
(`LegalizeValueMovement`). A `dgq.pad` must then fold into the conv2d or
avg_pool2d after it (`dg.lowering.pad_folding`).
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from dg.dialects import dgq, dgtorch
from dg.dialects.common import i64_array, int_array, located, shape_of, static_numel
from dg.lowering.dgtorch_to_dgq.common import (
    LegalizeValueMovement,
    per_tensor_source,
    quantized_source,
    quantized_tensor,
    result_element,
    same_grid_result,
)
from dg.lowering.diagnostics import LoweringProblem, Reason

PERMUTE_NOT_FLATTENED = Reason(
    "permute-not-flattened",
    "permute {dims} must be flattened right away (as dg.Flatten does): it is only "
    "supported as the NCHW -> NHWC reorder of dg.Flatten",
)
PERMUTE_ORDER = Reason(
    "permute-order",
    "permute {dims} is not supported: the only permute accepted is the NCHW -> NHWC "
    "reorder [0, 2, 3, 1] of dg.Flatten; use dg.Flatten or torch.transpose",
)
SLICE_STEP = Reason("slice-step", "slice step {step} is not supported: the step must be 1")
SLICE_SPATIAL = Reason(
    "slice-spatial",
    "slice of a spatial feature map is not supported: dg slices sequence-domain "
    "tensors only (from a linear or matmul)",
)
PAD_VALUE = Reason("pad-value", "padding value {value} is not supported: F.pad must pad with 0")
PAD_NEGATIVE = Reason("pad-negative", "negative padding {pad} (cropping) is not supported")
PAD_AXES = Reason(
    "pad-axes", "only H and W (the last two axes of an NCHW feature map) can be padded"
)
CONCAT_GRIDS = Reason(
    "concat-grids",
    "its inputs must share one quantization grid (dg's quantizer shares it), "
    "or its result must feed exactly one quantize",
)


class LegalizeReshape(LegalizeValueMovement):
    """`flatten`/`reshape` of `dgq.dequantize(a)` -> `dgq.dequantize(dgq.reshape(a))`."""

    source = (dgtorch.FlattenOp, dgtorch.ReshapeOp)

    def build(self, op: Operation, rewriter: PatternRewriter) -> Operation | None:
        assert isinstance(op, dgtorch.FlattenOp | dgtorch.ReshapeOp)
        if (source := per_tensor_source(op.input)) is None:
            return None
        return dgq.ReshapeOp.build(
            operands=[source[0]], result_types=[same_grid_result(op, source[1])]
        )


def _is_channels_last_flatten(op: dgtorch.FlattenOp | dgtorch.ReshapeOp) -> bool:
    """Whether `op` merges axes 1..3 of a rank-4 value into one (result [N, H*W*C])."""
    shape, result = shape_of(op.input), shape_of(op.result)
    if len(shape) != 4 or len(result) != 2:
        return False
    if isinstance(op, dgtorch.FlattenOp):
        return op.start_dim.value.data % 4 == 1 and op.end_dim.value.data % 4 == 3
    return static_numel(shape[1:]) == result[1]


def _is_channels_last_permute(op: Operation | None) -> bool:
    """Whether `op` is `permute(x, [0, 2, 3, 1])`, the NCHW -> NHWC step of `dg.Flatten`."""
    if not isinstance(op, dgtorch.PermuteOp):
        return False
    return tuple(d % 4 for d in int_array(op.dims, "dims")) == (0, 2, 3, 1)


class LegalizeChannelsLastFlatten(LegalizeValueMovement):
    """`flatten(permute(dgq.dequantize(a), [0, 2, 3, 1]))` -> `dgq.flatten_channels_last(a)`.

    This is `dg.Flatten`: features in H, W, C order, which is how an NHWC
    device holds the map, so it lowers to a plain reshape. It explains a
    permute left over: no other permute is supported.
    """

    source = (dgtorch.FlattenOp, dgtorch.ReshapeOp)
    reasons = (PERMUTE_NOT_FLATTENED, PERMUTE_ORDER)

    def explain(self, op: Operation) -> LoweringProblem | None:
        if not isinstance(op, dgtorch.PermuteOp):
            return None
        dims = list(int_array(op.dims, "dims"))
        if _is_channels_last_permute(op):
            return PERMUTE_NOT_FLATTENED.at(op, dims=dims)
        return PERMUTE_ORDER.at(op, dims=dims)

    def build(self, op: Operation, rewriter: PatternRewriter) -> Operation | None:
        assert isinstance(op, dgtorch.FlattenOp | dgtorch.ReshapeOp)
        permute = op.input.owner
        if not _is_channels_last_permute(permute) or not _is_channels_last_flatten(op):
            return None
        assert isinstance(permute, dgtorch.PermuteOp)
        if (source := per_tensor_source(permute.input)) is None:
            return None
        return dgq.FlattenChannelsLastOp.build(
            operands=[source[0]], result_types=[same_grid_result(op, source[1])]
        )


class LegalizeResizeNearest(LegalizeValueMovement):
    """`upsample_nearest2d` of `dgq.dequantize(a)` -> `dgq.resize_nearest(a)`, same mode."""

    source = dgtorch.UpsampleNearest2dOp

    def build(self, op: Operation, rewriter: PatternRewriter) -> Operation | None:
        assert isinstance(op, dgtorch.UpsampleNearest2dOp)
        if (source := per_tensor_source(op.input)) is None:
            return None
        return dgq.ResizeNearestOp.build(
            operands=[source[0]],
            properties={"mode": op.mode},
            result_types=[same_grid_result(op, source[1])],
        )


class LegalizeTranspose(LegalizeValueMovement):
    """`transpose` of `dgq.dequantize(a)` -> `dgq.transpose(a)` with the swap as a permutation."""

    source = dgtorch.TransposeOp

    def build(self, op: Operation, rewriter: PatternRewriter) -> Operation | None:
        assert isinstance(op, dgtorch.TransposeOp)
        if (source := per_tensor_source(op.input)) is None:
            return None
        rank = len(shape_of(op.input))
        a, b = (axis.value.data % rank for axis in (op.dim0, op.dim1))
        perm = list(range(rank))
        perm[a], perm[b] = b, a
        return dgq.TransposeOp.build(
            operands=[source[0]],
            properties={"perm": i64_array(perm)},
            result_types=[same_grid_result(op, source[1])],
        )


def _slice_problem(op: dgtorch.SliceOp) -> LoweringProblem | None:
    """Why a slice has no dgq form (a step other than 1, a spatial input), or None."""
    if op.step.value.data != 1:
        return SLICE_STEP.at(op, step=op.step.value.data)
    if dgq.value_domain(op.input) != dgq.SEQUENCE:
        return SLICE_SPATIAL.at(op)
    return None


class LegalizeSlice(LegalizeValueMovement):
    """`slice` (step 1) of `dgq.dequantize(a)` -> `dgq.slice(a)`, the same range."""

    source = dgtorch.SliceOp
    reasons = (SLICE_STEP, SLICE_SPATIAL)

    def explain(self, op: Operation) -> LoweringProblem | None:
        return _slice_problem(op) if isinstance(op, dgtorch.SliceOp) else None

    def build(self, op: Operation, rewriter: PatternRewriter) -> Operation | None:
        assert isinstance(op, dgtorch.SliceOp)
        if _slice_problem(op) is not None or (source := per_tensor_source(op.input)) is None:
            return None
        return dgq.SliceOp.build(
            operands=[source[0]],
            properties={
                "axis": IntegerAttr(op.dim.value.data % len(shape_of(op.input)), i64),
                "start": op.start,
                "end": op.end,
            },
            result_types=[same_grid_result(op, source[1])],
        )


def _pad_problem(op: dgtorch.PadOp) -> LoweringProblem | None:
    """Why an `F.pad` has no dgq form (dgq pads H and W of NCHW with zeros only), or None."""
    value = op.value.value.data
    if value != 0:
        return PAD_VALUE.at(op, value=value)
    pad = int_array(op.pad, "pad")
    if any(p < 0 for p in pad):
        return PAD_NEGATIVE.at(op, pad=list(pad))
    if len(shape_of(op.input)) != 4 or any(pad[4:]):
        return PAD_AXES.at(op)
    return None


class LegalizePad(LegalizeValueMovement):
    """`pad` with zeros of H, W -> `dgq.pad` (torch's `[left, right, top, bottom]` becomes
    `[top, bottom, left, right]`); it must then fold into a conv2d or avg_pool2d."""

    source = dgtorch.PadOp
    reasons = (PAD_VALUE, PAD_NEGATIVE, PAD_AXES)

    def explain(self, op: Operation) -> LoweringProblem | None:
        return _pad_problem(op) if isinstance(op, dgtorch.PadOp) else None

    def build(self, op: Operation, rewriter: PatternRewriter) -> Operation | None:
        assert isinstance(op, dgtorch.PadOp)
        if _pad_problem(op) is not None or (source := per_tensor_source(op.input)) is None:
            return None
        left, right, top, bottom = (*int_array(op.pad, "pad"), 0, 0, 0, 0)[:4]
        return dgq.PadOp.build(
            operands=[source[0]],
            properties={"pad": i64_array((top, bottom, left, right))},
            result_types=[same_grid_result(op, source[1])],
        )


def _concat_grid(op: dgtorch.CatOp) -> dgq.UniformQuantizedType | None:
    """The grid to concatenate on: the inputs' shared one, else that of the one quantize after."""
    sources = [per_tensor_source(value) for value in op.inputs]
    grids = {source[1] for source in sources if source is not None}
    if None in sources or not grids:
        return None
    if len(grids) == 1:
        return grids.pop()
    user = op.result.get_user_of_unique_use()
    return result_element(user.result.type) if isinstance(user, dgq.QuantizeOp) else None


class LegalizeConcat(LegalizeValueMovement):
    """`cat` of dequantized values -> `dgq.concat` along the non-negative axis.

    dg's quantizer gives the inputs and the result one grid, and the device
    only copies. Inputs on other grids (hand-written IR) are requantized to
    the grid of the quantize after the cat, which is what torch computes.
    """

    source = dgtorch.CatOp
    reasons = (CONCAT_GRIDS,)

    def explain(self, op: Operation) -> LoweringProblem | None:
        if isinstance(op, dgtorch.CatOp) and all(
            per_tensor_source(v) is not None for v in op.inputs
        ):
            return CONCAT_GRIDS.at(op)
        return None

    def build(self, op: Operation, rewriter: PatternRewriter) -> Operation | None:
        assert isinstance(op, dgtorch.CatOp)
        grid = _concat_grid(op)
        if grid is None:
            return None
        inputs: list[SSAValue] = []
        for value in op.inputs:
            source = quantized_source(value)
            assert source is not None
            if source.type != quantized_tensor(source.type, grid):
                requantize = dgq.RequantizeOp.build(
                    operands=[source], result_types=[quantized_tensor(source.type, grid)]
                )
                rewriter.insert(located(requantize, op))
                source = requantize.result
            inputs.append(source)
        axis = op.dim.value.data % len(shape_of(op.result))
        return dgq.ConcatOp.build(
            operands=[inputs],
            properties={"axis": IntegerAttr(axis, i64)},
            result_types=[same_grid_result(op, grid)],
        )
