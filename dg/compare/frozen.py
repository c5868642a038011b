"""The torch side of a comparison: the frozen model's quantization points, the float values."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.fx
from torch.fx import GraphModule, Node
from torchao.quantization.pt2e import FakeQuantizeBase, ObserverBase
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from dg.frontend.modules import NORM_MODULE_TYPE
from dg.frontend.prepare import PER_TENSOR_QUANTIZE, prepare_ptq
from dg.frontend.quantizer import DgQuantizer
from dg.frontend.source import SourceInfo, source_info


@dataclass(frozen=True)
class QuantizationPoint:
    """One activation quantize node of the frozen model and the int8 tensor it produced."""

    node_name: str
    observed: str
    """Name of the node whose value is quantized (the float model's observers see it too)."""
    placeholder: int | None
    """Index of the graph input it quantizes, if it quantizes one."""
    values: np.ndarray
    scale: float
    zero_point: int
    file: str
    line: int
    module_path: str
    op: str
    inputs: tuple[str, ...] = ()
    """Names of the quantize nodes whose values this layer reads (through their dequantizes):
    the layer's place in the graph, which pairs it with a device value (`DeviceValues.match`)."""


def quantization_points(
    frozen: GraphModule, inputs: Sequence[torch.Tensor]
) -> list[QuantizationPoint]:
    """Every activation quantize node of `frozen`, with its value on `inputs`, in graph order."""
    nodes = [
        n for n in frozen.graph.nodes if n.op == "call_function" and n.target in PER_TENSOR_QUANTIZE
    ]
    wanted = {*nodes, *(a for n in nodes for a in n.args[1:3] if hasattr(a, "op"))}
    values = run_capturing(frozen, inputs, wanted)
    placeholders = [n for n in frozen.graph.nodes if n.op == "placeholder"]
    points = []
    for node in nodes:
        observed = node.args[0]
        placeholder = placeholders.index(observed) if observed in placeholders else None
        # A graph input's quantize has no line of the user's: torch.export
        # records its own input guard's frame there.
        info = source_info(node) if placeholder is None else SourceInfo()
        points.append(
            QuantizationPoint(
                node_name=node.name,
                observed=observed.name,
                placeholder=placeholder,
                values=values[node].numpy(),
                scale=float(_scalar(node.args[1], values)),
                zero_point=int(_scalar(node.args[2], values)),
                file=info.file,
                line=info.line,
                module_path=info.module_path,
                op=producing_ops(observed),
                inputs=quantized_inputs(observed, set(nodes)),
            )
        )
    return points


def quantized_inputs(node: Node, quantizes: set[Node]) -> tuple[str, ...]:
    """The quantize nodes among `quantizes` that `node` reads, through any other nodes.

    Reading a tensor's size (`x.reshape(B, S, D)` with `B, S, _ = x.shape` under a
    dynamic batch: a `sym_size` node) reads no values: that path is not followed.
    """
    found: dict[str, None] = {}
    seen: set[Node] = set()
    frontier = list(node.all_input_nodes)
    while frontier:
        n = frontier.pop()
        if n in seen or is_symbolic(n):
            continue
        seen.add(n)
        if n in quantizes:
            found[n.name] = None
        else:
            frontier.extend(n.all_input_nodes)
    return tuple(found)


def is_symbolic(node: Node) -> bool:
    """Whether `node` computes a size (a SymInt), not a tensor."""
    return isinstance(node.meta.get("val"), torch.SymInt)


def _scalar(arg: object, values: dict[Any, Any]) -> float:
    """A quantize node's scale or zero point: a literal, or a tensor node's value."""
    value = values[arg] if arg in values else arg
    return float(value.item() if hasattr(value, "item") else value)  # type: ignore[arg-type]


def run_capturing(
    gm: GraphModule, inputs: Sequence[torch.Tensor], wanted: set[Any]
) -> dict[Any, Any]:
    """Run `gm` node by node (`torch.fx.Interpreter`); the values of the `wanted` nodes."""
    captured: dict[Any, Any] = {}

    class Capture(torch.fx.Interpreter):
        def run_node(self, n: Node) -> Any:
            result = super().run_node(n)
            if n in wanted:
                captured[n] = result.detach() if isinstance(result, torch.Tensor) else result
            return result

    with torch.no_grad():
        Capture(gm).run(*inputs)
    return captured


def producing_ops(node: Node) -> str:
    """The ops between the previous dequantizes and `node`, e.g. ``conv2d+relu``."""
    names: list[str] = []
    while node.op == "call_function" and "quantize" not in str(node.target):
        # A dg.Norm's body (sub, mul, mean, rsqrt, ...) is one layer, one device op.
        name = "norm" if in_norm(node) else str(getattr(node.target, "__name__", node.target))
        if not (name == "norm" and names[-1:] == ["norm"]):
            names.append(name.split(".")[0])
        inputs = node.all_input_nodes
        if not inputs:
            break
        node = inputs[0]
    return "+".join(reversed(names)) if names else "input"


def in_norm(node: Node) -> bool:
    """Whether `node` runs inside a `dg.Norm`."""
    stack = node.meta.get("nn_module_stack") or {}
    return any(
        (t if isinstance(t, str) else f"{t.__module__}.{t.__qualname__}") == NORM_MODULE_TYPE
        for _, t in stack.values()
    )


def float_values(model: torch.nn.Module, inputs: Sequence[torch.Tensor]) -> dict[str, np.ndarray]:
    """The float value at every activation observer of `model` prepared by dg, by observed node.

    `model` is the float `nn.Module`, or its torch.export capture (a `GraphModule`,
    in eval mode), which is prepared as it is.
    """
    if isinstance(model, GraphModule):  # already captured (e.g. a loaded .float.pt2)
        prepared = prepare_pt2e(copy.deepcopy(model), DgQuantizer(is_qat=False))
    else:
        prepared = prepare_ptq(model, tuple(inputs))
    observers = [
        n
        for n in prepared.graph.nodes
        if n.op == "call_module"
        and isinstance(prepared.get_submodule(n.target), (ObserverBase, FakeQuantizeBase))
        and n.args[0].op != "get_attr"
    ]
    values = run_capturing(prepared, inputs, set(observers))
    return {n.args[0].name: values[n].numpy() for n in observers}


def pair_float_values(
    points: Sequence[QuantizationPoint], floats: dict[str, np.ndarray]
) -> list[np.ndarray | None]:
    """The float value of each point: the observer of the same node, else the next unused
    observer of the same shape in graph order (QAT's conv-BN folding renames nodes)."""
    paired: list[np.ndarray | None] = [floats.get(point.observed) for point in points]
    used = {point.observed for point in points if point.observed in floats}
    remaining = [name for name in floats if name not in used]
    for i, point in enumerate(points):
        if paired[i] is not None:
            continue
        name = next((n for n in remaining if floats[n].shape == point.values.shape), None)
        if name is not None:
            paired[i] = floats[name]
            remaining = remaining[remaining.index(name) + 1 :]
    return paired
