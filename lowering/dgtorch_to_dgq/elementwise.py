"""Elementwise: add of two quantized activations, mul of one by a quantized constant.

Each is a partition: `dgq.quantize(op(dgq.dequantize(a), dgq.dequantize(b)))`
becomes the one dgq op (an add can take a relu tail, see `FuseReluTail`).
"""

from __future__ import annotations

from xdsl.ir import Attribute, Operation, SSAValue

from dg.dialects import dgq, dgtorch
from dg.lowering.dgtorch_to_dgq.common import (
    LegalizePartition,
    fused_activation,
    per_tensor_source,
    quantized_operands,
)
from dg.lowering.diagnostics import LoweringProblem, Reason

MUL_CONSTANT_OPERAND = Reason(
    "mul-constant-operand",
    "its second operand must be a constant tensor quantized per tensor "
    "(dequantize of a dgq.constant): the device multiplies by stored integers",
)


class LegalizeAdd(LegalizePartition):
    """`add` of two dequantized activations -> `dgq.add`."""

    source = dgtorch.AddOp

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.AddOp)
        operands = quantized_operands(op.lhs, op.rhs)
        if operands is None:
            return None
        return dgq.AddOp.build(
            operands=operands, properties=fused_activation(activation), result_types=[result_type]
        )


def _is_per_tensor_constant(value: SSAValue) -> bool:
    source = per_tensor_source(value)
    return source is not None and isinstance(source[0].owner, dgq.ConstantOp)


class LegalizeMulConstant(LegalizePartition):
    """`mul` of a dequantized activation by a dequantized constant -> `dgq.mul_constant`."""

    source = dgtorch.MulOp
    reasons = (MUL_CONSTANT_OPERAND,)

    def explain(self, op: Operation) -> LoweringProblem | None:
        if isinstance(op, dgtorch.MulOp) and not _is_per_tensor_constant(op.rhs):
            return MUL_CONSTANT_OPERAND.at(op)
        return None

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.MulOp)
        if activation != "none":
            return None
        activation_source = per_tensor_source(op.lhs)
        constant_source = per_tensor_source(op.rhs)
        if activation_source is None or constant_source is None:
            return None
        if not _is_per_tensor_constant(op.rhs):
            return None
        return dgq.MulConstantOp.build(
            operands=[activation_source[0], constant_source[0]], result_types=[result_type]
        )
