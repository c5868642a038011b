"""Elementwise family: add of two activations, mul of an activation by a constant tensor."""

from __future__ import annotations

import torch
from torch.fx import Node
from xdsl.ir import SSAValue

from dg.dialects import dgtorch
from dg.dialects.common import (
    shape_of,
)
from dg.frontend.importer.common import (
    operand_text,
)
from dg.frontend.importer.core import (
    GraphImporter,
    NodeProblem,
    handles,
)
from dg.frontend.importer.sequence import import_mul_score_scale
from dg.frontend.ops import targets
from dg.lowering import registry


@handles(*targets(registry.ADD))
def _add(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    lhs, rhs = args["input"], args["other"]
    for name, operand in (("first", lhs), ("second", rhs)):
        if not (isinstance(operand, Node) and operand in imp.batched):
            raise NodeProblem(
                f"{registry.ADD.notes}, but the {name} operand is {operand_text(operand)}",
                fix="add two tensors computed by the model: fold a constant offset per channel "
                "or feature into the bias of the preceding Conv2d or Linear; for a learned "
                "position embedding (x + pos_embed), let dg.SelfAttention(rope=True) give the "
                "attention the positions",
            )
    if args["alpha"] != 1:
        alpha = f"alpha={args['alpha']}"
        raise NodeProblem(f"only alpha=1 is supported, got {alpha}", arguments=alpha)
    lhs_value, rhs_value = imp.operand(lhs), imp.operand(rhs)
    lhs_shape, rhs_shape = shape_of(lhs_value)[1:], shape_of(rhs_value)[1:]
    if lhs_shape != rhs_shape:
        raise NodeProblem(
            f"operands must have the same shape (no broadcasting), got {list(lhs_shape)} and "
            f"{list(rhs_shape)} after the batch axis"
        )
    imp.require_quantized_operand(lhs, "first operand")
    imp.require_quantized_operand(rhs, "second operand")
    op = dgtorch.AddOp(operands=[lhs_value, rhs_value], result_types=[imp.result_type(node)])
    return imp.emit(node, op)


@handles(*targets(registry.BARE_MUL))
def _mul(imp: GraphImporter, node: Node) -> SSAValue:
    lhs, rhs = node.args[:2]
    scaled = import_mul_score_scale(imp, node)
    if scaled is not None:
        return scaled
    activations = [a for a in (lhs, rhs) if isinstance(a, Node) and a in imp.batched]
    if not all(isinstance(a, Node) for a in (lhs, rhs)):
        raise NodeProblem(registry.BARE_MUL.reason, registry.BARE_MUL.fix)
    if len(activations) == 2:
        raise NodeProblem(
            f"multiplying two activations is not supported: {registry.MUL_CONST_TENSOR.notes}",
            fix=MUL_ACTIVATIONS_FIX,
        )
    if not activations:
        raise NodeProblem(registry.MUL_CONST_TENSOR.reason)
    (activation,) = activations
    constant = rhs if activation is lhs else lhs
    assert isinstance(constant, Node)
    constant_val = constant.meta.get("val")
    if isinstance(constant_val, torch.Tensor) and constant_val.dim() == 0:
        raise NodeProblem(registry.BARE_MUL.reason, registry.BARE_MUL.fix)
    imp.require_quantized_operand(activation, "activation operand")
    imp.require_quantized_operand(constant, "constant operand")
    activation_value, constant_value = imp.operand(activation), imp.operand(constant)
    result_type = imp.result_type(node)
    if result_type.get_shape() != shape_of(activation_value):
        raise NodeProblem(
            f"the constant (shape {list(shape_of(constant_value))}) must broadcast to the "
            f"activation (shape {list(shape_of(activation_value)[1:])} after the batch axis) "
            "without enlarging it",
            fix="give the constant the activation's shape, or extent 1 on the axes it repeats",
        )
    op = dgtorch.MulOp(operands=[activation_value, constant_value], result_types=[result_type])
    return imp.emit(node, op)


MUL_ACTIVATIONS_FIX = (
    "multiply the activation by a constant tensor (a buffer of the model, e.g. RoPE's cos/sin "
    "tables), or compute the product with torch.matmul or a Linear layer"
)
