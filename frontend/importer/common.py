"""Helpers the importer's op families share: arguments, traced shapes, neighbours, unary ops."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import torch
from torch.fx import Node
from xdsl.dialects.builtin import I64, Attribute, IntegerAttr, i64
from xdsl.ir import Operation, SSAValue

from dg.frontend.importer.core import DEQUANTIZE_OPS, QUANTIZE_OPS, GraphImporter, NodeProblem
from dg.frontend.importer.graph import read_attribute
from dg.frontend.ops import targets
from dg.lowering import registry


def int_attr(value: object) -> IntegerAttr[I64]:
    """An i64 integer property of `value`."""
    return IntegerAttr(int(value), i64)  # type: ignore[call-overload]


def pair(value: object, name: str) -> list[int]:
    """A two-entry argument (kernel size, stride, ...), given as one value or two."""
    values = [int(v) for v in value] if isinstance(value, (list, tuple)) else [int(value)]  # type: ignore[call-overload]
    if len(values) == 1:
        values *= 2
    if len(values) != 2:
        raise NodeProblem(f"'{name}' must have one or two entries, got {values}")
    return values


def traced_shape(arg: object) -> list[Any]:
    """The traced shape of a tensor argument (the batch axis may be symbolic).

    torchao's q/dq nodes carry no traced value; they have their operand's shape.
    """
    while isinstance(arg, Node) and "val" not in arg.meta and arg.all_input_nodes:
        arg = arg.all_input_nodes[0]
    assert isinstance(arg, Node), arg
    val = arg.meta.get("val")
    if val is None and arg.op == "get_attr":
        val = read_attribute(arg.graph.owning_module, str(arg.target))
    assert isinstance(val, torch.Tensor), arg
    return [d if isinstance(d, torch.SymInt) else int(d) for d in val.shape]


def size_text(values: Sequence[int]) -> str:
    """A size for a message: ``28x28``."""
    return "x".join(str(v) for v in values)


def as_written(value: object) -> str:
    """`value` as the user would have written it: a one-entry pair as its single value."""
    if isinstance(value, (list, tuple)) and len(set(value)) == 1:
        return repr(value[0])
    return repr(tuple(value)) if isinstance(value, list) else repr(value)


def operand_text(arg: object) -> str:
    """What a non-activation operand is, for a message (a parameter, a constant, ...)."""
    if isinstance(arg, Node) and arg.op == "get_attr":
        return f"the parameter/constant '{arg.target}'"
    if isinstance(arg, Node):
        return "a tensor that does not depend on the model's input"
    return f"the constant {arg!r}"


def is_call(node: object, targets: Collection[object]) -> bool:
    """`node` is a call of one of the ops `targets`."""
    return isinstance(node, Node) and node.op == "call_function" and node.target in targets


_PASS_THROUGH = frozenset({*QUANTIZE_OPS, *DEQUANTIZE_OPS, *targets(registry.DROPOUT)})
"""Ops that do not change what a value is for the checks: torchao's q/dq and dropout."""


def producer(arg: object) -> object:
    """The op computing `arg`, looking through q/dq and dropout."""
    while isinstance(arg, Node) and is_call(arg, _PASS_THROUGH):
        arg = arg.args[0]
    return arg


def consumers(node: Node) -> list[Node]:
    """The ops using `node`'s value, looking through q/dq and dropout."""
    found: list[Node] = []
    for user in node.users:
        if is_call(user, _PASS_THROUGH):
            found.extend(consumers(user))
        else:
            found.append(user)
    return found


def require_activation(imp: GraphImporter, arg: object, what: str) -> None:
    """`arg` must be computed from the model's input (and quantized, in a quantized graph)."""
    if not (isinstance(arg, Node) and arg in imp.batched):
        raise NodeProblem(
            f"its {what} must be an activation (computed from the model's input), not a "
            "parameter or constant",
            fix="pass a tensor the model computes from its input; for a class token "
            "(torch.cat((cls_token.expand(B, -1, -1), x), dim=1)), pool the tokens instead: "
            "x.mean(1), which dg compiles as an average pool",
        )
    imp.require_quantized_operand(arg, what)


def import_unary(
    imp: GraphImporter, node: Node, op_type: type[Operation], **props: Attribute
) -> SSAValue:
    """Import a one-activation op whose other arguments are `props`."""
    source = node.args[0]
    require_activation(imp, source, "input")
    op = op_type.create(
        operands=[imp.operand(source)], result_types=[imp.result_type(node)], properties=props
    )
    return imp.emit(node, op)
