"""Sequence family: matmul, softmax and the attention score scale (a mul or div by a
number right after a matmul).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch.fx import Node
from xdsl.dialects.builtin import (
    FloatAttr,
    f64,
)
from xdsl.ir import SSAValue

from dg.dialects import dgtorch
from dg.dialects.common import (
    shape_of,
)
from dg.frontend.importer.common import (
    import_unary,
    int_attr,
    is_call,
    operand_text,
)
from dg.frontend.importer.core import (
    QUANTIZE_OPS,
    GraphImporter,
    NodeProblem,
    handles,
)
from dg.frontend.ops import MATMUL_OPS, SCORE_SCALE_OPS, targets
from dg.lowering import registry

aten = torch.ops.aten


SCORE_SCALE_FIX = (
    "scale the scores by a Python number: (q @ k.transpose(-2, -1)) * 0.35 or / math.sqrt(d)"
)


def import_score_scale(imp: GraphImporter, node: Node, scores: Node, factor: float) -> SSAValue:
    """`scores * factor`: the attention score scale, folded into the matmul later."""
    require_quantized_output(imp, node)
    op = dgtorch.MulScalarOp(
        operands=[imp.operand(scores)],
        properties={"factor": FloatAttr(factor, f64)},
        result_types=[imp.result_type(node)],
    )
    return imp.emit(node, op)


def require_quantized_output(imp: GraphImporter, node: Node) -> None:
    """A matmul (with its score scale) must feed a quantize: its output lives on a grid."""
    if imp.quantized and not all(is_call(user, QUANTIZE_OPS) for user in node.users):
        raise NodeProblem(
            "the output of a matmul must feed a quantized op, but it is used unquantized",
            fix="use the matmul's result in a supported op (softmax, matmul, Linear, add), "
            "quantized with dg.prepare_qat / dg.prepare_ptq",
        )


def _number(arg: object) -> float | None:
    return float(arg) if isinstance(arg, (int, float)) and not isinstance(arg, bool) else None


@handles(aten.div.Tensor)
def _div(imp: GraphImporter, node: Node) -> SSAValue:
    lhs, rhs = node.args[:2]
    divisor = _number(rhs)
    if not is_call(lhs, MATMUL_OPS):
        raise NodeProblem(
            "division is only supported as the score scale right after a matmul",
            fix="fold the constant factor into the weights of the neighbouring Conv2d or Linear",
        )
    if divisor is None or divisor == 0:
        raise NodeProblem(
            f"the score scale after a matmul must be a non-zero scalar constant, got "
            f"{operand_text(rhs)}",
            fix=SCORE_SCALE_FIX,
        )
    assert isinstance(lhs, Node)
    return import_score_scale(imp, node, lhs, 1.0 / divisor)


def import_mul_score_scale(imp: GraphImporter, node: Node) -> SSAValue | None:
    """A `mul` of a matmul by a number, as the score scale; None for any other `mul`."""
    lhs, rhs = node.args[:2]
    activations = [a for a in (lhs, rhs) if isinstance(a, Node) and a in imp.batched]
    scores = [a for a in (lhs, rhs) if isinstance(a, Node) and is_call(a, MATMUL_OPS)]
    others = [a for a in (lhs, rhs) if not scores or a is not scores[0]]
    if len(scores) != 1 or _is_constant_tensor(imp, others):
        return None
    (other,) = others
    factor = _number(other)
    if factor is None:
        raise NodeProblem(
            "the score scale after a matmul must be a scalar constant, got "
            f"{'an activation' if other in activations else operand_text(other)}",
            fix=SCORE_SCALE_FIX,
        )
    return import_score_scale(imp, node, scores[0], factor)


def _is_constant_tensor(imp: GraphImporter, others: Sequence[object]) -> bool:
    """`others` is one tensor of the model that is not an activation (a buffer, a table).

    A matmul times such a tensor is the mul-by-constant row, not a score scale:
    the quantizer leaves the matmul's output on its own grid there (only a Python
    number folds into the matmul), so the float graph checked by prepare has the
    mul right after the matmul, and the frozen graph has a dequantize between them.
    """
    if len(others) != 1 or not isinstance(others[0], Node) or others[0] in imp.batched:
        return False
    value = others[0].meta.get("val")
    return not (isinstance(value, torch.Tensor) and value.dim() == 0)


@handles(*MATMUL_OPS)
def _matmul(imp: GraphImporter, node: Node) -> SSAValue:
    if node.target is aten.mm.default:
        raise NodeProblem(registry.MM_REASON, registry.MM_FIX)
    lhs, rhs = node.args[:2]
    for name, operand in (("first", lhs), ("second", rhs)):
        if not (isinstance(operand, Node) and operand in imp.batched):
            raise NodeProblem(
                f"only activation x activation is supported, but the {name} operand is "
                f"{operand_text(operand)}",
                fix="multiply by a weight matrix with nn.Linear",
            )
    lhs_value, rhs_value = imp.operand(lhs), imp.operand(rhs)
    shapes = [list(shape_of(v)[1:]) for v in (lhs_value, rhs_value)]
    if any(len(s) not in (2, 3) for s in shapes) or len(shapes[0]) != len(shapes[1]):
        raise NodeProblem(
            f"feature rank 2-3 per operand (the same for both) is supported, got {shapes[0]} "
            f"and {shapes[1]} after the batch axis",
            fix="reshape the operands to [B, S, D] or [B, H, S, D] first",
        )
    imp.require_quantized_operand(lhs, "first operand")
    imp.require_quantized_operand(rhs, "second operand")
    scaled = len(node.users) == 1 and is_call(next(iter(node.users)), SCORE_SCALE_OPS)
    if not scaled:
        require_quantized_output(imp, node)
    op = dgtorch.MatmulOp(operands=[lhs_value, rhs_value], result_types=[imp.result_type(node)])
    return imp.emit(node, op)


@handles(*targets(registry.SOFTMAX))
def _softmax(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    if args.get("dtype") is not None or args.get("half_to_float"):
        raise NodeProblem("softmax may not change the dtype", arguments="dtype=...")
    return import_unary(imp, node, dgtorch.SoftmaxOp, dim=int_attr(args["dim"]))
