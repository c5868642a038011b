"""Legalization of the integer logic layers: dgtorch logic ops straight to dghw.

Logic tensors (dg.BitShift, dg.Bitwise, dg.Compare with a constant or a second tensor,
a `Tensor.repeat` inside them) are
torch.int32 tensors that never meet a quantizer: no scale, no zero point, no
grid to fold into a type. dgq has nothing to add to them, so
`convert-dgtorch-to-dgq` maps each logic op directly to its dghw op, and
`convert-dgq-to-dghw` passes dghw ops through as they are. They also keep the
model's own layout: they are not feature maps, so nothing is transposed.
Every logic op converts as it is, so these patterns have nothing to explain.
"""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dghw, dgtorch
from dg.dialects.common import located
from dg.lowering.diagnostics import ExplainingPattern


class LegalizeBitwiseShift(ExplainingPattern):
    """`dgtorch.bitwise_shift` -> `dghw.shift` (same direction and amount)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgtorch.BitwiseShiftOp, rewriter: PatternRewriter) -> None:
        shift = dghw.ShiftOp.build(
            operands=[op.input],
            result_types=[op.result.type],
            properties={"direction": op.direction, "shift": op.shift},
        )
        rewriter.replace(op, located(shift, op))


class LegalizeBitwise(ExplainingPattern):
    """`dgtorch.bitwise` -> `dghw.bitwise` (same kind and constant)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgtorch.BitwiseOp, rewriter: PatternRewriter) -> None:
        bitwise = dghw.BitwiseOp.build(
            operands=[op.input],
            result_types=[op.result.type],
            properties={"kind": op.kind, "value": op.value},
        )
        rewriter.replace(op, located(bitwise, op))


class LegalizeCompare(ExplainingPattern):
    """`dgtorch.compare` -> `dghw.compare` (same kind and threshold; 0/1 as i32)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgtorch.CompareOp, rewriter: PatternRewriter) -> None:
        compare = dghw.CompareOp.build(
            operands=[op.input],
            result_types=[op.result.type],
            properties={"kind": op.kind, "value": op.value},
        )
        rewriter.replace(op, located(compare, op))


def _two_tensor_op(
    op_type: type[dghw.BitwiseTensorOp] | type[dghw.CompareTensorOp],
    op: dgtorch.BitwiseTensorOp | dgtorch.CompareTensorOp,
) -> Operation:
    """The dghw twin of a two-tensor logic op: the same operands, result type and kind."""
    return op_type.build(
        operands=[op.lhs, op.rhs], result_types=[op.result.type], properties={"kind": op.kind}
    )


class LegalizeBitwiseTensor(ExplainingPattern):
    """`dgtorch.bitwise_tensor` -> `dghw.bitwise_tensor` (same kind, same two operands)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgtorch.BitwiseTensorOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, located(_two_tensor_op(dghw.BitwiseTensorOp, op), op))


class LegalizeCompareTensor(ExplainingPattern):
    """`dgtorch.compare_tensor` -> `dghw.compare_tensor` (same kind; 0/1 as i32)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgtorch.CompareTensorOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, located(_two_tensor_op(dghw.CompareTensorOp, op), op))


class LegalizeRepeat(ExplainingPattern):
    """`dgtorch.repeat` -> `dghw.tile` (torch's repeats are TOSA's multiples)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgtorch.RepeatOp, rewriter: PatternRewriter) -> None:
        tile = dghw.TileOp.build(
            operands=[op.input],
            result_types=[op.result.type],
            properties={"multiples": op.repeats},
        )
        rewriter.replace(op, located(tile, op))
