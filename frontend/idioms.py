"""Everyday idioms rewritten, right after capture, into the rows dg already compiles.

Users write `x.mean((2, 3))` for global average pooling, and
`q, k, v = self.qkv(x).chunk(3, dim=-1)` to split a projection. Neither is a
row of the spec, but both are rows in disguise: the first is
`F.adaptive_avg_pool2d(x, 1)`, the second three slices. `rewrite_idioms`
rewrites the captured float graph before anything else reads it, so the
quantizer, the importer and every later stage see only the rows (with their
rules and their errors: a chunk of a spatial feature map gets the slice row's
error, at the user's line). Each new node keeps the source of the node it
replaces, and ``meta[WRITTEN_AS]`` names what the user wrote, for messages.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, cast

import torch
from torch.fx import GraphModule, Node

from dg.frontend.ops import targets
from dg.frontend.source import module_types
from dg.lowering import registry

aten = torch.ops.aten

WRITTEN_AS = "dg_written_as"
"""Node meta key: how the user wrote the idiom a node was rewritten from (``Tensor.chunk``)."""

SPLITTING_OPS: dict[object, str] = {
    aten.split.Tensor: "torch.split",
    aten.split_with_sizes.default: "torch.split",
    aten.chunk.default: "Tensor.chunk",
    aten.unbind.int: "Tensor.unbind",
}
"""Ops returning several parts of their input along one axis, each read by a getitem."""

_NORM_MODULE = "dg.frontend.modules.Norm"


def rewrite_idioms(gm: GraphModule) -> None:
    """Rewrite `gm`'s idioms (module docstring) into the rows they stand for, in place."""
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op != "call_function" or _inside_norm(node):
            continue
        if node.target in SPLITTING_OPS:
            _split_into_slices(gm, node)
        elif node.target is aten.select.int:
            _select_as_slice(gm, node)
        elif node.target in targets(registry.SPATIAL_MEAN):
            _mean_as_pool(gm, node)
    graph.eliminate_dead_code()
    gm.recompile()


def _inside_norm(node: Node) -> bool:
    # dg.Norm's body is one op, mean and all (frontend/importer/norm.py).
    return any(module_type == _NORM_MODULE for _, module_type in module_types(node))


def _part_bounds(node: Node, extent: int) -> list[tuple[int, int]] | None:
    """The (start, end) of every part `node` splits an axis of `extent` into."""
    if node.target is aten.unbind.int:
        return [(i, i + 1) for i in range(extent)]
    if node.target is aten.chunk.default:
        chunks = _int(node.args[1])
        size = -(-extent // chunks)
        sizes = [size] * (extent // size) + ([extent % size] if extent % size else [])
    elif node.target is aten.split.Tensor and isinstance(node.args[1], int):
        size = node.args[1]
        sizes = [size] * (extent // size) + ([extent % size] if extent % size else [])
    else:
        sizes = [_int(s) for s in cast(Sequence[Any], node.args[1])]
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return [(start, start + size) for start, size in zip(starts, sizes, strict=True)]


def _split_into_slices(gm: GraphModule, node: Node) -> None:
    source = node.args[0]
    assert isinstance(source, Node)
    shape = source.meta["val"].shape
    dim = _dim_argument(node, 2 if node.target is not aten.unbind.int else 1) % len(shape)
    if dim == 0 or isinstance(shape[dim], torch.SymInt):
        return  # the batch axis: left for the importer to report, once
    bounds = _part_bounds(node, int(shape[dim]))
    users = list(node.users)
    if bounds is None or not all(u.target is operator.getitem for u in users):
        return
    for user in users:
        start, end = bounds[_int(user.args[1])]
        with gm.graph.inserting_before(user):
            part = _call(gm, node, aten.slice.Tensor, (source, dim, start, end))
            if node.target is aten.unbind.int:
                part = _drop_axis(gm, node, part, source, dim)
        user.replace_all_uses_with(part)
        gm.graph.erase_node(user)


def _select_as_slice(gm: GraphModule, node: Node) -> None:
    """`x[:, i]` (select): the slice `x[:, i:i+1]` without its axis."""
    source, dim, index = node.args
    assert isinstance(source, Node)
    shape = source.meta["val"].shape
    dim = _int(dim) % len(shape)
    if dim == 0 or isinstance(shape[dim], torch.SymInt):
        return
    start = _int(index) % _int(shape[dim])
    with gm.graph.inserting_before(node):
        part = _call(gm, node, aten.slice.Tensor, (source, dim, start, start + 1))
        part = _drop_axis(gm, node, part, source, dim)
    node.replace_all_uses_with(part)


def _drop_axis(gm: GraphModule, origin: Node, part: Node, source: Node, dim: int) -> Node:
    """`part` reshaped without its axis `dim` (of extent 1)."""
    kept = [axis for axis in range(part.meta["val"].dim()) if axis != dim]
    shape: list[Any] = [
        _call(gm, origin, aten.sym_size.int, (source, axis))
        if isinstance(part.meta["val"].shape[axis], torch.SymInt)
        else int(part.meta["val"].shape[axis])
        for axis in kept
    ]
    return _call(gm, origin, aten.reshape.default, (part, shape))


def _mean_as_pool(gm: GraphModule, node: Node) -> None:
    """`x.mean((2, 3))` of a feature map: `F.adaptive_avg_pool2d(x, 1)` (then flattened);
    `x.mean(1)` of [B, S, D] tokens: the same pool of the [B, D, S, 1] map of its transpose."""
    source = node.args[0]
    assert isinstance(source, Node)
    rank = source.meta["val"].dim()
    written_dims = cast(Sequence[Any], node.args[1]) if len(node.args) > 1 else ()
    dims = {_int(d) % rank for d in written_dims}
    keepdim = bool(node.args[2]) if len(node.args) > 2 else bool(node.kwargs.get("keepdim"))
    if node.kwargs.get("dtype") is not None:
        return
    spatial = rank == 4 and dims == {2, 3}
    tokens = rank == 3 and dims == {1} and not isinstance(source.meta["val"].shape[1], torch.SymInt)
    if not (spatial or tokens):
        return  # not pooling: the importer reports the reduction
    with gm.graph.inserting_before(node):
        if tokens:
            source = _token_map(gm, node, source)
        pooled = _call(gm, node, aten.adaptive_avg_pool2d.default, (source, [1, 1]))
        if not keepdim or tokens:
            pooled = _call(gm, node, aten.flatten.using_ints, (pooled, 1))
        if keepdim and tokens:
            batch = _call(gm, node, aten.sym_size.int, (node.args[0], 0))
            pooled = _call(gm, node, aten.reshape.default, (pooled, [batch, 1, -1]))
    node.replace_all_uses_with(pooled)


def _token_map(gm: GraphModule, origin: Node, tokens: Node) -> Node:
    """[B, S, D] tokens as the [B, D, S, 1] feature map whose pool averages them.

    On the device the transposed map's NHWC layout is [B, S, 1, D]: the tokens'
    own order, so the pool's divisor is S and its sum that of torch's mean.
    """
    _, length, width = tokens.meta["val"].shape
    transposed = _call(gm, origin, aten.transpose.int, (tokens, 1, 2))
    batch = _call(gm, origin, aten.sym_size.int, (tokens, 0))
    return _call(gm, origin, aten.reshape.default, (transposed, [batch, width, length, 1]))


def _int(argument: object) -> int:
    """An FX argument that holds an int (a dim, an index, a size)."""
    return int(cast(Any, argument))


def _dim_argument(node: Node, position: int) -> int:
    if len(node.args) > position:
        return _int(node.args[position])
    return _int(node.kwargs.get("dim", 0))


def _call(gm: GraphModule, origin: Node, target: Callable[..., Any], args: Sequence[Any]) -> Node:
    """A call of `target` with `origin`'s source, its traced value computed from its inputs'."""
    new = gm.graph.call_function(target, tuple(args))
    for key in ("stack_trace", "nn_module_stack", "source_fn_stack", "from_node"):
        if key in origin.meta:
            new.meta[key] = origin.meta[key]
    new.meta[WRITTEN_AS] = SPLITTING_OPS.get(origin.target, _written_name(origin))
    values = torch.fx.node.map_arg(new.args, lambda n: n.meta["val"])
    new.meta["val"] = target(*values)
    return new


def _written_name(node: Node) -> str:
    if node.target is aten.select.int:
        return "x[:, i]"
    return "Tensor.mean"
