"""Pooling: avg_pool2d and adaptive_avg_pool2d partitions on their input's grid, and
max_pool2d, which only picks stored values.

An average is rounded once, onto the grid it is quantized to, which must be
the input's (dg's quantizer shares it): dghw divides without rescaling. A
max pool moves to the quantized side as it is. (A zero `F.pad` before a pool
folds into it: `dg.lowering.pad_folding`.)
"""

from __future__ import annotations

from xdsl.dialects.builtin import DYNAMIC_INDEX, BoolAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from dg.dialects import dgq, dgtorch
from dg.dialects.common import i64_array, int_array, shape_of, window_counts
from dg.lowering.dgtorch_to_dgq.common import (
    LegalizePartition,
    LegalizeValueMovement,
    describe_grid,
    per_tensor_source,
    quantized_result_element,
    result_element,
    same_grid_result,
    symmetric_pad,
)
from dg.lowering.diagnostics import LoweringProblem, Reason

POOL_RESULT_GRID = Reason(
    "pool-result-grid",
    "its result must be quantized on its input's grid (dg's quantizer shares it): "
    "input {input_grid}, result {result_grid}",
)
ADAPTIVE_POOL_UNEVEN = Reason(
    "adaptive-pool-uneven",
    "adaptive_avg_pool2d from {height}x{width} to {out_h}x{out_w} is not "
    "supported: each input extent must be a multiple of the output size "
    "({height} % {out_h} = {rest_h}, {width} % {out_w} = {rest_w}); "
    "change the input size or output_size, or use AvgPool2d",
)
MAX_POOL_PADDING = Reason(
    "max-pool-padding",
    "padding {padding} is not supported: max_pool2d does not support padding; use padding=0",
)
MAX_POOL_DILATION = Reason(
    "max-pool-dilation", "dilation {dilation} is not supported: dilation must be 1"
)
MAX_POOL_CEIL_MODE = Reason(
    "max-pool-ceil-mode",
    "ceil_mode=True makes the last window read past the input edge, which is "
    "padding: max_pool2d does not support padding; use ceil_mode=False",
)


def _keeps_grid(op: Operation, result_type: Attribute) -> SSAValue | None:
    """The quantized input of a one-input partition whose result keeps the input's grid."""
    source = per_tensor_source(op.operands[0])
    if source is None or result_element(result_type) != source[1]:
        return None
    return source[0]


def _explain_result_grid(op: Operation) -> LoweringProblem | None:
    """An average pool of a quantized input left over: its result was on another grid."""
    if (source := per_tensor_source(op.operands[0])) is None:
        return None
    return POOL_RESULT_GRID.at(
        op,
        input_grid=describe_grid(source[1]),
        result_grid=describe_grid(quantized_result_element(op)),
    )


class LegalizeAvgPool2d(LegalizePartition):
    """`avg_pool2d` partition on one grid -> `dgq.avg_pool2d`.

    The average is rounded once, onto the grid it is quantized to; that grid
    must be the input's (dg's quantizer shares it), because dghw divides
    without rescaling. ceil_mode is the result's window count.
    """

    source = dgtorch.AvgPool2dOp
    reasons = (POOL_RESULT_GRID,)

    def explain(self, op: Operation) -> LoweringProblem | None:
        return _explain_result_grid(op) if isinstance(op, dgtorch.AvgPool2dOp) else None

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.AvgPool2dOp)
        if (source := _keeps_grid(op, result_type)) is None:
            return None
        divisor: dict[str, Attribute] = {}
        if op.divisor_override is not None:
            divisor["divisor_override"] = op.divisor_override
        return dgq.AvgPool2dOp.build(
            operands=[source],
            properties={
                "kernel": op.kernel,
                "stride": op.stride,
                "pad": symmetric_pad(op.padding),
                "count_include_pad": op.count_include_pad,
                **divisor,
            },
            result_types=[result_type],
        )


def _adaptive_window(op: dgtorch.AdaptiveAvgPool2dOp) -> tuple[int, int] | None:
    """The kernel (= stride) of an adaptive pool whose input extents divide evenly, else None."""
    _, _, height, width = shape_of(op.input)
    out_h, out_w = int_array(op.output_size, "output_size", 2)
    if height == DYNAMIC_INDEX or width == DYNAMIC_INDEX or height % out_h or width % out_w:
        return None
    return height // out_h, width // out_w


def _uneven_windows(op: dgtorch.AdaptiveAvgPool2dOp) -> LoweringProblem:
    _, _, height, width = shape_of(op.input)
    out_h, out_w = int_array(op.output_size, "output_size", 2)
    return ADAPTIVE_POOL_UNEVEN.at(
        op,
        height=height,
        width=width,
        out_h=out_h,
        out_w=out_w,
        rest_h=height % out_h,
        rest_w=width % out_w,
    )


class LowerAdaptiveAvgPool2d(LegalizePartition):
    """`adaptive_avg_pool2d` partition -> `dgq.avg_pool2d` with kernel = stride = H/oh, W/ow.

    When the output size divides the input extents, torch's adaptive windows
    are exactly these non-overlapping tiles; otherwise they overlap unevenly
    and the op stays illegal.
    """

    source = dgtorch.AdaptiveAvgPool2dOp
    reasons = (ADAPTIVE_POOL_UNEVEN, POOL_RESULT_GRID)

    def explain(self, op: Operation) -> LoweringProblem | None:
        if not isinstance(op, dgtorch.AdaptiveAvgPool2dOp):
            return None
        if _adaptive_window(op) is None:
            return _uneven_windows(op)
        return _explain_result_grid(op)

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.AdaptiveAvgPool2dOp)
        window = _adaptive_window(op)
        if window is None or (source := _keeps_grid(op, result_type)) is None:
            return None
        return dgq.AvgPool2dOp.build(
            operands=[source],
            properties={
                "kernel": i64_array(window),
                "stride": i64_array(window),
                "pad": i64_array((0, 0, 0, 0)),
                "count_include_pad": BoolAttr.from_bool(True),
            },
            result_types=[result_type],
        )


def _max_pool_problem(op: dgtorch.MaxPool2dOp) -> LoweringProblem | None:
    """Why a max pool cannot be lowered (padding in any form, dilation), or None."""
    padding = int_array(op.padding, "padding", 2)
    if any(padding):
        return MAX_POOL_PADDING.at(op, padding=list(padding))
    dilation = int_array(op.dilation, "dilation", 2)
    if dilation != (1, 1):
        return MAX_POOL_DILATION.at(op, dilation=list(dilation))
    kernel, stride = int_array(op.kernel, "kernel", 2), int_array(op.stride, "stride", 2)
    _, _, *extents = shape_of(op.input)
    _, _, *windows = shape_of(op.result)
    for size, count, k, s in zip(extents, windows, kernel, stride, strict=True):
        if size != DYNAMIC_INDEX and count != window_counts(size, k, s, 0, 0)[0]:
            return MAX_POOL_CEIL_MODE.at(op)
    return None


class LegalizeMaxPool2d(LegalizeValueMovement):
    """`max_pool2d` of `dgq.dequantize(a)` -> `dgq.max_pool2d(a)`, without padding.

    Padding, a dilated window and a ceil-mode window reaching past the edge
    (padding as well) stay illegal.
    """

    source = dgtorch.MaxPool2dOp
    reasons = (MAX_POOL_PADDING, MAX_POOL_DILATION, MAX_POOL_CEIL_MODE)

    def explain(self, op: Operation) -> LoweringProblem | None:
        return _max_pool_problem(op) if isinstance(op, dgtorch.MaxPool2dOp) else None

    def build(self, op: Operation, rewriter: PatternRewriter) -> Operation | None:
        assert isinstance(op, dgtorch.MaxPool2dOp)
        if _max_pool_problem(op) is not None or (source := per_tensor_source(op.input)) is None:
            return None
        return dgq.MaxPool2dOp.build(
            operands=[source[0]],
            properties={"kernel": op.kernel, "stride": op.stride, "pad": i64_array((0,) * 4)},
            result_types=[same_grid_result(op, source[1])],
        )
