"""Norm family: a `dg.Norm` body (mean, sub, rsqrt, ...), imported as one `dgtorch.norm`."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.fx import GraphModule, Node
from xdsl.dialects.builtin import (
    FloatAttr,
    StringAttr,
    f64,
)
from xdsl.ir import SSAValue

from dg.dialects import dgq, dgtorch
from dg.dialects.common import (
    MAX_NORM_EXTENT,
    NORM_FEATURE_RANKS,
    shape_of,
)
from dg.frontend.errors import Problem
from dg.frontend.importer.common import (
    is_call,
    producer,
    require_activation,
)
from dg.frontend.importer.core import (
    DEQUANTIZE_OPS,
    QUANTIZE_OPS,
    GraphImporter,
    NodeProblem,
    handles,
    imports_module_body,
)
from dg.frontend.modules import norm_path
from dg.frontend.ops import targets
from dg.frontend.source import source_info
from dg.lowering import registry

aten = torch.ops.aten


_QDQ_OPS = QUANTIZE_OPS | DEQUANTIZE_OPS


@dataclass(frozen=True)
class NormBody:
    """The ops one `dg.Norm` runs (torchao's q/dq around it excluded), read from the graph."""

    path: str
    nodes: tuple[Node, ...]
    activations: tuple[Node, ...]
    """Values from outside the body that it reads (one input, maybe dequantized twice)."""
    outputs: tuple[Node, ...]
    """Body values used outside it: exactly one, the normalized result."""
    weight: Node | None
    bias: Node | None
    eps: float | None
    kind: str

    @staticmethod
    def of(gm: GraphModule, path: str) -> NormBody:
        nodes = [
            n
            for n in gm.graph.nodes
            if n.op == "call_function" and not is_call(n, _QDQ_OPS) and norm_path(n) == path
        ]
        inside = set(nodes)
        reads = dict.fromkeys(a for n in nodes for a in n.all_input_nodes if a not in inside)
        # `... * self.weight + self.bias`: the parameters are what a mul / an add reads.
        parameters = {n.target: a for n in nodes for a in n.all_input_nodes if a.op == "get_attr"}
        eps = [
            float(a)
            for n in nodes
            if n.target in targets(registry.ADD)
            for a in n.args
            if isinstance(a, (int, float))
        ]
        return NormBody(
            path,
            tuple(nodes),
            tuple(a for a in reads if a.op != "get_attr"),
            tuple(n for n in nodes if any(u not in inside for u in n.users)),
            parameters.get(aten.mul.Tensor),
            parameters.get(aten.add.Tensor),
            eps[0] if len(eps) == 1 else None,
            "layer" if any(n.target == aten.sub.Tensor for n in nodes) else "rms",
        )

    def source(self, quantized: bool) -> Node | None:
        """The one tensor the norm normalizes (a dequantize of it, in a quantized graph)."""
        sources = {producer(a) if quantized else a for a in self.activations}
        return self.activations[0] if len(sources) == 1 else None


NORM_FIX = (
    "apply dg.Norm to a [B, D] or [B, S, D] sequence tensor (after a Linear, matmul or "
    "flatten), and use its result only as a whole"
)


@imports_module_body
def _import_norm_body(imp: GraphImporter, node: Node) -> bool:
    """Import a `dg.Norm` as one `dgtorch.norm`, at the last op of its body; skip the others.

    Its ops (mean, sub, mul, add of eps, rsqrt, ...) are legal only here: the
    device computes the whole normalization as one integer op. False for a node
    outside every norm's body (torchao's q/dq around it are outside).
    """
    path = norm_path(node)
    if path is None or is_call(node, _QDQ_OPS):
        return False
    body: NormBody | None = imp.module_bodies.get(path)
    if body is None:
        body = imp.module_bodies[path] = NormBody.of(imp.gm, path)
        source = body.source(imp.quantized)
        if body.outputs != body.nodes[-1:] or source is None or None in (body.weight, body.eps):
            _report_norm(
                imp,
                node,
                body,
                "its body must read one tensor and return one (the module as dg defines it)",
                NORM_FIX,
            )
            imp.failed.update(body.nodes)  # nothing after it can be imported
            return True
    if node is not body.nodes[-1]:
        return True  # no value of its own: only the norm's result is used
    try:
        imp.values[node] = _norm(imp, node, body)
    except NodeProblem as problem:
        _report_norm(imp, node, body, problem.reason, problem.fix)
        imp.stand_in(node)
    return True


def _report_norm(imp: GraphImporter, node: Node, body: NormBody, reason: str, fix: str | None):
    info = source_info(node)
    imp.problems.append(Problem("dg.Norm", reason, info.location, body.path, fix))


def _norm(imp: GraphImporter, node: Node, body: NormBody) -> SSAValue:
    source = body.source(imp.quantized)
    assert source is not None and body.weight is not None and body.eps is not None
    require_activation(imp, source, "input")
    operand = imp.operand(source)
    extents = shape_of(operand)
    shape = "[" + ", ".join(["B", *map(str, extents[1:])]) + "]"
    if dgq.value_domain(operand) != dgq.SEQUENCE:
        raise NodeProblem(
            f"normalizes the last axis of sequence tensors only, and its input {shape} is a "
            "spatial feature map (from a conv, pool, resize or pad, or an "
            "NCHW image), whose last axis is its width",
            fix="flatten the map first (dg.Flatten(), or x.flatten(2).transpose(1, 2) for "
            "[B, H*W, C]), or use nn.BatchNorm2d after a Conv2d for feature maps",
        )
    if len(extents) - 1 not in NORM_FEATURE_RANKS or not 1 <= extents[-1] <= MAX_NORM_EXTENT:
        raise NodeProblem(
            f"normalizes the last axis of [B, D] or [B, S, D] tensors with D <= "
            f"{MAX_NORM_EXTENT}, and its input is {shape}",
            fix=NORM_FIX,
        )
    bias = [imp.operand(body.bias)] if body.kind == "layer" and body.bias is not None else []
    operands = [operand, imp.operand(body.weight), bias]
    op = dgtorch.NormOp(
        operands=operands,
        properties={"kind": StringAttr(body.kind), "eps": FloatAttr(body.eps, f64)},
        result_types=[imp.result_type(node)],
    )
    return imp.emit(node, op)


_NORM_NEIGHBOURS = frozenset(
    {
        aten.sub.Tensor,
        aten.rsqrt.default,
        aten.sqrt.default,
        aten.div.Tensor,
        aten.var.correction,
        aten.std.correction,
        aten.mean.dim,
        aten.add.Tensor,
        aten.mul.Tensor,
        aten.pow.Tensor_Scalar,
    }
)
"""The ops a hand-written norm computes around its reductions."""


@handles(*targets(registry.NORM_BUILDING_BLOCKS, registry.REDUCTIONS))
def _reduction(imp: GraphImporter, node: Node) -> SSAValue:
    """A reduction or root outside dg.Norm: the norm row's fix only where it is part of a norm."""
    if node.target in targets(registry.REDUCTIONS) or not _looks_like_norm(node):
        raise NodeProblem(registry.REDUCTIONS.reason, registry.REDUCTIONS.fix)
    raise NodeProblem(registry.NORM_BUILDING_BLOCKS.reason, registry.NORM_BUILDING_BLOCKS.fix)


def _looks_like_norm(node: Node) -> bool:
    """A root, or a reduction over the last axis keeping it, next to a norm's other ops."""
    if node.target in targets(registry.NORM_BUILDING_BLOCKS) and "sqrt" in str(node.target):
        return True
    if node.target is aten.sum.default or node.target is aten.mean.default:
        return False
    rank = len(node.args[0].meta["val"].shape) if isinstance(node.args[0], Node) else 0
    dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    keepdim = node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)
    last_axis = isinstance(dims, (list, tuple)) and [int(d) % rank for d in dims] == [rank - 1]
    neighbours = [*node.users, *node.all_input_nodes]
    return (
        bool(keepdim)
        and last_axis
        and any(n.op == "call_function" and n.target in _NORM_NEIGHBOURS for n in neighbours)
    )
