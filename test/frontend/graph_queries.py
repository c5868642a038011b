"""Small queries over FX graphs shared by the frontend tests."""

from __future__ import annotations

import inspect

import torch
from torch.fx import GraphModule, Node

import dg.frontend.quantizer  # noqa: F401  (registers the quantized_decomposed ops)

aten = torch.ops.aten
qd = torch.ops.quantized_decomposed

QUANTIZE = (qd.quantize_per_tensor.default, qd.quantize_per_tensor.tensor)
DEQUANTIZE_PER_TENSOR = (qd.dequantize_per_tensor.default, qd.dequantize_per_tensor.tensor)
QDQ = (*QUANTIZE, *DEQUANTIZE_PER_TENSOR, qd.dequantize_per_channel.default)


def calls(gm: GraphModule, *targets: object) -> list[Node]:
    """The call_function nodes of `gm` calling one of `targets`, in graph order."""
    return [n for n in gm.graph.nodes if n.op == "call_function" and n.target in targets]


def attr(gm: GraphModule, node: Node) -> torch.Tensor:
    """The tensor a get_attr node refers to."""
    assert node.op == "get_attr", node
    value = gm
    for name in str(node.target).split("."):
        value = getattr(value, name)
    return value


def only_user(node: Node) -> Node:
    users = list(node.users)
    assert len(users) == 1, f"{node} has users {users}"
    return users[0]


def line_of(function: object, snippet: str) -> int:
    """The line number (in its file) of the line of `function` that contains `snippet`."""
    lines, first = inspect.getsourcelines(function)  # type: ignore[arg-type]
    matches = [first + i for i, line in enumerate(lines) if snippet in line]
    assert len(matches) == 1, f"{snippet!r} occurs {len(matches)} times"
    return matches[0]
