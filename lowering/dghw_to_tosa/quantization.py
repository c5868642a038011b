"""`convert-dghw-to-tosa`, quantization family: the function signature at a fixed
batch, constants and rescales."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects import tosa as xtosa
from xdsl.dialects.builtin import FunctionType, IntegerAttr, i32
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from dg.dialects import dghw
from dg.dialects import tosa as tosa1
from dg.lowering.dghw_to_tosa.common import (
    DghwToTosaPattern,
    TosaBuilder,
    element_of,
    static_type,
)


class SpecializeBatch(RewritePattern):
    """`func.func` with a dynamic batch axis -> the same function at batch `batch`."""

    def __init__(self, batch: int):
        self.batch = batch

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        inputs = [static_type(t, self.batch) for t in op.function_type.inputs]
        outputs = [static_type(t, self.batch) for t in op.function_type.outputs]
        new_type = FunctionType.from_lists(inputs, outputs)
        if new_type == op.function_type:
            return
        for argument, t in zip(op.body.block.args, inputs, strict=True):
            if argument.type != t:
                rewriter.replace_value_with_new_type(argument, t)
        op.function_type = new_type
        rewriter.notify_op_modified(op)


class ConstantToTosa(DghwToTosaPattern):
    """`dghw.constant` -> `tosa.const` with the same bytes."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.ConstantOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, [], [self.builder(op, rewriter).emit(xtosa.ConstOp(op.value))])


class RescaleToTosa(DghwToTosaPattern):
    """`dghw.rescale` -> `tosa.rescale` (SINGLE_ROUND), then a clamp if it is narrower."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.RescaleOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        result_type = b.result_type()
        out = b.rescale(
            op.input,
            op.multiplier.get_values(),
            op.shift.get_values(),
            (op.input_zp.value.data, op.output_zp.value.data),
            result_type,
        )
        bounds = (op.clamp_min.value.data, op.clamp_max.value.data)
        if bounds != dghw.type_limits(result_type):
            out = self.clamp(b, out, *bounds)
        rewriter.replace(op, [], [out])

    @staticmethod
    def clamp(b: TosaBuilder, value: SSAValue, lo: int, hi: int) -> SSAValue:
        """CLAMP for i8; MINIMUM and MAXIMUM for i32 (the integer profile's CLAMP is i8/i16)."""
        element = element_of(value)
        if element.width.data == 32:
            upper = b.binary(tosa1.MinimumOp, value, b.splat(hi, value), i32)
            return b.binary(tosa1.MaximumOp, upper, b.splat(lo, value), i32)
        return b.emit(
            xtosa.ClampOp.build(
                operands=[value],
                result_types=[value.type],
                properties={
                    "min_val": IntegerAttr(lo, element),
                    "max_val": IntegerAttr(hi, element),
                },
            )
        )
