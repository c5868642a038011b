"""`convert-dghw-to-tosa`, logic family: bit shifts, bitwise ops and comparisons,
with a constant or of two tensors, and the tile of a repeat."""

from __future__ import annotations

from xdsl.dialects.builtin import BoolAttr, i1, i32
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dghw
from dg.dialects import tosa as tosa1
from dg.lowering.dghw_to_tosa.common import DghwToTosaPattern, TosaBuilder


class ShiftToTosa(DghwToTosaPattern):
    """`dghw.shift` -> `tosa.logical_left_shift` / `tosa.arithmetic_right_shift` (round false)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.ShiftOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        operands = [op.input, b.splat(op.shift.value.data, op.input)]
        if op.direction.data == "left":
            shift = tosa1.LogicalLeftShiftOp.build(
                operands=operands, result_types=[b.result_type()]
            )
        else:
            shift = tosa1.ArithmeticRightShiftOp.build(
                operands=operands,
                result_types=[b.result_type()],
                properties={"round": BoolAttr.from_bool(False)},
            )
        rewriter.replace(op, [], [b.emit(shift)])


BITWISE_OPS: dict[str, type[IRDLOperation]] = {
    "and": tosa1.BitwiseAndOp,
    "or": tosa1.BitwiseOrOp,
    "xor": tosa1.BitwiseXorOp,
}


class BitwiseToTosa(DghwToTosaPattern):
    """`dghw.bitwise` -> `tosa.bitwise_and` / `_or` / `_xor` with the constant broadcast."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.BitwiseOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        bitwise = BITWISE_OPS[op.kind.data].build(
            operands=[op.input, b.splat(op.value.value.data, op.input)],
            result_types=[b.result_type()],
        )
        rewriter.replace(op, [], [b.emit(bitwise)])


COMPARISONS: dict[str, tuple[type[IRDLOperation], bool, bool]] = {
    "gt": (tosa1.GreaterOp, False, False),
    "lt": (tosa1.GreaterOp, True, False),
    "ge": (tosa1.GreaterEqualOp, False, False),
    "le": (tosa1.GreaterEqualOp, True, False),
    "eq": (tosa1.EqualOp, False, False),
    "ne": (tosa1.EqualOp, False, True),
}
"""Per `dghw.compare` kind: the TOSA comparison, whether operands swap, whether it is negated."""


class CompareToTosa(DghwToTosaPattern):
    """`dghw.compare` -> GREATER / GREATER_EQUAL / EQUAL (swapped, or LOGICAL_NOT), CAST to i32."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.CompareOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        threshold = b.splat(op.value.value.data, op.input)
        rewriter.replace(op, [], [compare_to_tosa(b, op.kind.data, op.input, threshold)])


def compare_to_tosa(b: TosaBuilder, kind: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    """`lhs kind rhs` as i32 0/1: the TOSA comparison (operands swapped, or negated), CAST."""
    comparison, swapped, negated = COMPARISONS[kind]
    if swapped:
        lhs, rhs = rhs, lhs
    truth = b.binary(comparison, lhs, rhs, i1)
    if negated:
        truth = b.emit(tosa1.LogicalNotOp.build(operands=[truth], result_types=[truth.type]))
    return b.cast(truth, i32)


class BitwiseTensorToTosa(DghwToTosaPattern):
    """`dghw.bitwise_tensor` -> `tosa.bitwise_and` / `_or` / `_xor` of the two operands
    (equal shapes: nothing to broadcast)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.BitwiseTensorOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        bitwise = BITWISE_OPS[op.kind.data].build(
            operands=[op.lhs, op.rhs], result_types=[b.result_type()]
        )
        rewriter.replace(op, [], [b.emit(bitwise)])


class CompareTensorToTosa(DghwToTosaPattern):
    """`dghw.compare_tensor` -> GREATER / GREATER_EQUAL / EQUAL of the two operands
    (swapped, or LOGICAL_NOT), CAST to i32."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.CompareTensorOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        rewriter.replace(op, [], [compare_to_tosa(b, op.kind.data, op.lhs, op.rhs)])


class TileToTosa(DghwToTosaPattern):
    """`dghw.tile` -> `tosa.tile` with the same multiples."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.TileOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        tile = tosa1.TileOp.build(
            operands=[op.input, b.shape(op.multiples.get_values())],
            result_types=[b.result_type()],
        )
        rewriter.replace(op, [], [b.emit(tile)])
