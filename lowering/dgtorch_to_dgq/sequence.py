"""Sequence: matmul, softmax, and the attention score scale folded into its matmul.

A matmul of two quantized activations is a partition, as is a softmax
quantized on the fixed grid (scale 1/256, zero point -128). The scale of
attention scores, `mul_scalar(matmul(q, k), s)`, becomes the matmul's
`factor`: part of its requantization multiplier, free on the device.
"""

from __future__ import annotations

from xdsl.dialects.builtin import FloatAttr, IntegerAttr, f64, i64
from xdsl.ir import Attribute, Operation

from dg.dialects import dgq, dgtorch
from dg.dialects.common import shape_of
from dg.lowering.dgtorch_to_dgq.common import (
    FIXED_GRID_RESULT,
    LegalizePartition,
    explain_fixed_grid,
    fixed_grid_source,
    per_tensor_source,
)
from dg.lowering.diagnostics import LoweringProblem, Reason

MATMUL_RESULT_UNQUANTIZED = Reason(
    "matmul-result-unquantized",
    "its result must feed exactly one quantize: a matmul's output must be "
    "quantized (feed a quantized op)",
)
SCALE_WITHOUT_MATMUL = Reason(
    "scale-without-matmul",
    "a multiplication by a scalar is only supported as the score scale right after "
    "a matmul, which it folds into",
)
SCALE_NOT_POSITIVE = Reason("score-scale-not-positive", "the score scale must be > 0, got {factor}")


class LegalizeSoftmax(LegalizePartition):
    """`softmax` partition quantized to the fixed grid -> `dgq.softmax` (non-negative axis)."""

    source = dgtorch.SoftmaxOp
    reasons = (FIXED_GRID_RESULT,)

    def explain(self, op: Operation) -> LoweringProblem | None:
        return explain_fixed_grid(op) if isinstance(op, dgtorch.SoftmaxOp) else None

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.SoftmaxOp)
        if (source := fixed_grid_source(op, result_type)) is None:
            return None
        axis = op.dim.value.data % len(shape_of(op.input))
        return dgq.SoftmaxOp.build(
            operands=[source],
            properties={"axis": IntegerAttr(axis, i64)},
            result_types=[result_type],
        )


def _matmul(op: dgtorch.MatmulOp, result_type: Attribute, factor: float) -> Operation | None:
    """`dgq.matmul` of the quantized sources of `op`'s operands, scaled by `factor`."""
    lhs, rhs = per_tensor_source(op.lhs), per_tensor_source(op.rhs)
    if lhs is None or rhs is None:
        return None
    return dgq.MatmulOp.build(
        operands=[lhs[0], rhs[0]],
        properties={"factor": FloatAttr(factor, f64)},
        result_types=[result_type],
    )


def _unquantized_result(op: Operation) -> LoweringProblem | None:
    """For a matmul (or its score scale) whose result does not feed exactly one op."""
    return None if op.results[0].has_one_use() else MATMUL_RESULT_UNQUANTIZED.at(op)


class LegalizeMatmul(LegalizePartition):
    """`matmul` of two dequantized activations -> `dgq.matmul` (factor 1)."""

    source = dgtorch.MatmulOp
    reasons = (MATMUL_RESULT_UNQUANTIZED,)

    def explain(self, op: Operation) -> LoweringProblem | None:
        return _unquantized_result(op) if isinstance(op, dgtorch.MatmulOp) else None

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.MatmulOp)
        return _matmul(op, result_type, 1.0) if activation == "none" else None


def _scale_problem(op: dgtorch.MulScalarOp) -> LoweringProblem | None:
    """Why a `mul_scalar` is no score scale: it follows no matmul, or its factor is not > 0."""
    if not isinstance(op.input.owner, dgtorch.MatmulOp):
        return SCALE_WITHOUT_MATMUL.at(op)
    if not op.factor.value.data > 0:
        return SCALE_NOT_POSITIVE.at(op, factor=op.factor.value.data)
    return None


class FoldScaleIntoMatmul(LegalizePartition):
    """`mul_scalar(matmul(a, b), s)` quantized -> `dgq.matmul {factor = s}`.

    The score scale of attention costs nothing on the device: it becomes part
    of the matmul's requantization multiplier.
    """

    source = dgtorch.MulScalarOp
    reasons = (SCALE_WITHOUT_MATMUL, SCALE_NOT_POSITIVE, MATMUL_RESULT_UNQUANTIZED)

    def explain(self, op: Operation) -> LoweringProblem | None:
        if not isinstance(op, dgtorch.MulScalarOp):
            return None
        return _scale_problem(op) or _unquantized_result(op)

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.MulScalarOp)
        if activation != "none" or _scale_problem(op) is not None:
            return None
        matmul = op.input.owner
        assert isinstance(matmul, dgtorch.MatmulOp)
        if not matmul.result.has_one_use():
            return None
        return _matmul(matmul, result_type, op.factor.value.data)
