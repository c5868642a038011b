"""`convert-dghw-to-tosa`, elementwise family: add, and mul by a constant."""

from __future__ import annotations

from xdsl.dialects import tosa as xtosa
from xdsl.dialects.builtin import i8
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dghw
from dg.lowering.dghw_to_tosa.common import DghwToTosaPattern


class AddToTosa(DghwToTosaPattern):
    """`dghw.add` -> `tosa.add` (i32)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.AddOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        add = xtosa.AddOp.build(operands=[op.lhs, op.rhs], result_types=[b.result_type()])
        rewriter.replace(op, [], [b.emit(add)])


class MulToTosa(DghwToTosaPattern):
    """`dghw.mul` -> RESCALE both operands to centred i32, then `tosa.mul` with shift 0."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.MulOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        mul = xtosa.MulOp.build(
            operands=[
                b.centred_i32(op.input, op.input_zp.value.data),
                b.centred_i32(op.constant, op.constant_zp.value.data),
                b.scalar(0, i8),
            ],
            result_types=[b.result_type()],
        )
        rewriter.replace(op, [], [b.emit(mul)])
