"""Logic family: the integer ops of `dg.LogicLayer`s (bit shift, bitwise, compare and its
`.to(torch.int32)`, repeat).
"""

from __future__ import annotations

import torch
from torch.fx import Node
from xdsl.dialects.builtin import (
    StringAttr,
    TensorType,
    i8,
    i32,
)
from xdsl.ir import SSAValue

from dg.dialects import dgtorch
from dg.dialects.common import (
    i64_array,
    shape_of,
)
from dg.frontend.importer.common import (
    int_attr,
    is_call,
    operand_text,
)
from dg.frontend.importer.core import (
    GraphImporter,
    NodeProblem,
    handles,
)
from dg.frontend.importer.graph import is_skipped
from dg.frontend.logic import inside_logic_layer
from dg.frontend.ops import targets
from dg.lowering import registry

aten = torch.ops.aten


LOGIC_INPUT_FIX = (
    "feed logic layers an int32 model input or another logic layer's output; they do not "
    "take float or quantized tensors"
)

REPEAT_OUTSIDE_LOGIC_FIX = (
    "remove the repeat from the quantized model; on int32 tensors, call it inside the forward "
    "of a logic layer (a subclass of dg.LogicLayer)"
)


def _logic_operand(imp: GraphImporter, arg: object) -> SSAValue:
    """The value of a logic layer's input, which must be an int32 or int8 tensor."""
    value = imp.operand(arg)
    value_type = value.type
    if not (isinstance(value_type, TensorType) and value_type.element_type in (i32, i8)):
        raise NodeProblem(
            f"logic layers take int32 or int8 tensors, got {value_type}", LOGIC_INPUT_FIX
        )
    return value


def _int_constant(arg: object, what: str) -> int:
    if isinstance(arg, bool) or not isinstance(arg, int):
        got = "a tensor" if isinstance(arg, Node) else repr(arg)
        raise NodeProblem(
            f"the {what} must be a Python int constant, got {got}",
            "use a constant int (dg.BitShift(shift, direction) / dg.Bitwise(kind, value))",
        )
    return arg


_SHIFT_DIRECTIONS: dict[object, str] = {
    **dict.fromkeys(
        (
            aten.__lshift__.Scalar,
            aten.bitwise_left_shift.Tensor_Scalar,
            aten.__lshift__.Tensor,
            aten.bitwise_left_shift.Tensor,
        ),
        "left",
    ),
    **dict.fromkeys(
        (
            aten.__rshift__.Scalar,
            aten.bitwise_right_shift.Tensor_Scalar,
            aten.__rshift__.Tensor,
            aten.bitwise_right_shift.Tensor,
        ),
        "right",
    ),
}


@handles(*targets(registry.BIT_SHIFT))
def _bitwise_shift(imp: GraphImporter, node: Node) -> SSAValue:
    source = _logic_operand(imp, node.args[0])
    shift = _int_constant(node.args[1], "shift amount")
    op = dgtorch.BitwiseShiftOp.create(
        operands=[source],
        result_types=[imp.result_type(node)],
        properties={
            "direction": StringAttr(_SHIFT_DIRECTIONS[node.target]),
            "shift": int_attr(shift),
        },
    )
    return imp.emit(node, op)


_BITWISE_KINDS: dict[object, str] = {
    **dict.fromkeys((aten.bitwise_and.Scalar, aten.__and__.Scalar), "and"),
    **dict.fromkeys((aten.bitwise_and.Tensor, aten.__and__.Tensor), "and"),
    **dict.fromkeys((aten.bitwise_or.Scalar, aten.__or__.Scalar), "or"),
    **dict.fromkeys((aten.bitwise_or.Tensor, aten.__or__.Tensor), "or"),
    **dict.fromkeys((aten.bitwise_xor.Scalar, aten.__xor__.Scalar), "xor"),
    **dict.fromkeys((aten.bitwise_xor.Tensor, aten.__xor__.Tensor), "xor"),
}


LOGIC_OPERANDS_FIX = (
    "compute both operands from the model's int32 inputs; for a constant second operand "
    "write it as a Python int (x & 5, (x > 3).to(torch.int32)) or use dg.Bitwise(kind, value) "
    "/ dg.Compare(kind, threshold)"
)

LOGIC_BROADCAST_FIX = (
    "give both operands the same shape: tile the smaller one inside the logic layer's forward, "
    "e.g. x & y.repeat(1, 4) (Tensor.repeat is accepted in a dg.LogicLayer subclass)"
)


def _logic_operands(imp: GraphImporter, node: Node) -> tuple[SSAValue, SSAValue]:
    """The two tensor operands of a logic op: computed from the model's inputs (a constant
    tensor has the constant forms), logic tensors of one dtype, and one shape (dg does not
    broadcast them)."""
    lhs_arg, rhs_arg = node.args[0], node.args[1]
    for name, arg in (("first", lhs_arg), ("second", rhs_arg)):
        if not (isinstance(arg, Node) and arg in imp.batched):
            raise NodeProblem(
                f"a logic op on two tensors takes tensors computed from the model's inputs, "
                f"but the {name} operand is {operand_text(arg)}",
                LOGIC_OPERANDS_FIX,
            )
    # One dtype follows: the model's integer inputs are int32, and nothing converts them.
    lhs, rhs = _logic_operand(imp, lhs_arg), _logic_operand(imp, rhs_arg)
    if shape_of(lhs) != shape_of(rhs):
        raise NodeProblem(
            f"operands must have the same shape (no broadcasting), got {list(shape_of(lhs)[1:])} "
            f"and {list(shape_of(rhs)[1:])} after the batch axis",
            LOGIC_BROADCAST_FIX,
        )
    return lhs, rhs


@handles(*targets(registry.BITWISE))
def _bitwise(imp: GraphImporter, node: Node) -> SSAValue:
    source = _logic_operand(imp, node.args[0])
    value = _int_constant(node.args[1], "bitwise constant")
    op = dgtorch.BitwiseOp.create(
        operands=[source],
        result_types=[imp.result_type(node)],
        properties={"kind": StringAttr(_BITWISE_KINDS[node.target]), "value": int_attr(value)},
    )
    return imp.emit(node, op)


@handles(*targets(registry.BITWISE_TENSORS))
def _bitwise_tensors(imp: GraphImporter, node: Node) -> SSAValue:
    lhs, rhs = _logic_operands(imp, node)
    op = dgtorch.BitwiseTensorOp.create(
        operands=[lhs, rhs],
        result_types=[imp.result_type(node)],
        properties={"kind": StringAttr(_BITWISE_KINDS[node.target])},
    )
    return imp.emit(node, op)


_COMPARE_KINDS: dict[object, str] = {
    aten.gt.Scalar: "gt",
    aten.ge.Scalar: "ge",
    aten.lt.Scalar: "lt",
    aten.le.Scalar: "le",
    aten.eq.Scalar: "eq",
    aten.ne.Scalar: "ne",
}

_COMPARE_TENSORS_KINDS: dict[object, str] = {
    aten.gt.Tensor: "gt",
    aten.ge.Tensor: "ge",
    aten.lt.Tensor: "lt",
    aten.le.Tensor: "le",
    aten.eq.Tensor: "eq",
    aten.ne.Tensor: "ne",
}

COMPARE_FIX = "convert the comparison to 0/1 right away: (x > c).to(torch.int32), or dg.Compare"


def _is_int32_conversion(node: Node) -> bool:
    return node.target is aten.to.dtype and node.args[1:2] == (torch.int32,)


def _require_int32_conversion(node: Node) -> None:
    """dg has no bool tensors: every use of a comparison must be its `.to(torch.int32)`."""
    users = [user for user in node.users if not is_skipped(user)]
    if not users or not all(_is_int32_conversion(user) for user in users):
        raise NodeProblem("its bool result must be converted to int32 right away", COMPARE_FIX)


@handles(*_COMPARE_KINDS)
def _compare(imp: GraphImporter, node: Node) -> SSAValue:
    """A comparison and its `.to(torch.int32)`, as one i32 0/1 op (dg has no bool tensors)."""
    source = _logic_operand(imp, node.args[0])
    value = _int_constant(node.args[1], "comparison threshold")
    _require_int32_conversion(node)
    op = dgtorch.CompareOp.create(
        operands=[source],
        result_types=[TensorType(i32, shape_of(source))],
        properties={"kind": StringAttr(_COMPARE_KINDS[node.target]), "value": int_attr(value)},
    )
    return imp.emit(node, op)


@handles(*targets(registry.COMPARE_TENSORS))
def _compare_tensors(imp: GraphImporter, node: Node) -> SSAValue:
    """A comparison of two tensors and its `.to(torch.int32)`, as one i32 0/1 op."""
    lhs, rhs = _logic_operands(imp, node)
    _require_int32_conversion(node)
    op = dgtorch.CompareTensorOp.create(
        operands=[lhs, rhs],
        result_types=[TensorType(i32, shape_of(lhs))],
        properties={"kind": StringAttr(_COMPARE_TENSORS_KINDS[node.target])},
    )
    return imp.emit(node, op)


@handles(aten.to.dtype)
def _to_dtype(imp: GraphImporter, node: Node) -> SSAValue:
    """`.to(torch.int32)` of a comparison: the compare op already gives 0/1 as i32."""
    source = node.args[0]
    comparisons = _COMPARE_KINDS.keys() | _COMPARE_TENSORS_KINDS.keys()
    if not (is_call(source, comparisons) and _is_int32_conversion(node)):
        raise NodeProblem(
            "dtype conversions are supported only as the int32 result of a comparison",
            "remove the conversion; logic layers take int32 tensors, quantized layers float32",
        )
    return imp.operand(source)


@handles(*targets(registry.LOGIC_REPEAT))
def _repeat(imp: GraphImporter, node: Node) -> SSAValue:
    if not inside_logic_layer(node):
        raise NodeProblem(registry.REPEAT.reason, REPEAT_OUTSIDE_LOGIC_FIX)
    source = _logic_operand(imp, node.args[0])
    written = node.args[1]
    repeats = [r for r in written if isinstance(r, int)] if isinstance(written, list) else []
    if len(repeats) != len(shape_of(source)):
        raise NodeProblem(
            f"repeats must be constant ints, one per input axis ({len(shape_of(source))}), "
            f"got {written!r}",
            "pass one repeat count per axis, the batch axis first (1)",
        )
    if repeats[0] != 1:
        raise NodeProblem(
            "cannot repeat along the batch axis (axis 0): the device runs every sample alike",
            "repeat the feature axes only, e.g. x.repeat(1, 2)",
        )
    op = dgtorch.RepeatOp.create(
        operands=[source],
        result_types=[imp.result_type(node)],
        properties={"repeats": i64_array(repeats)},
    )
    return imp.emit(node, op)
