"""Layout family: ops that move or select values without computing new ones.

flatten, reshape, permute, transpose, alias, slice, pad, cat, nearest resize
(other modes rejected), dropout (identity at inference) and getitem.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch.fx import Node
from xdsl.dialects.builtin import (
    FloatAttr,
    StringAttr,
    f64,
)
from xdsl.ir import SSAValue

from dg.dialects import dgq, dgtorch
from dg.dialects.common import (
    TRANSPOSE_FEATURE_RANKS,
    i64_array,
)
from dg.frontend.idioms import WRITTEN_AS
from dg.frontend.importer.common import (
    as_written,
    consumers,
    import_unary,
    int_attr,
    is_call,
    require_activation,
    size_text,
    traced_shape,
)
from dg.frontend.importer.core import (
    UNKNOWN_OP_REASON,
    GraphImporter,
    NodeProblem,
    handles,
)
from dg.frontend.modules import inside_flatten
from dg.frontend.ops import overload, targets
from dg.frontend.source import written_subscript
from dg.lowering import registry

aten = torch.ops.aten


@handles(*targets(registry.FLATTEN))
def _flatten(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    op = dgtorch.FlattenOp(
        operands=[imp.operand(args["input"])],
        result_types=[imp.result_type(node)],
        properties={
            "start_dim": int_attr(args["start_dim"]),
            "end_dim": int_attr(args["end_dim"]),
        },
    )
    return imp.emit(node, op)


@handles(*targets(registry.RESHAPE))
def _reshape(imp: GraphImporter, node: Node) -> SSAValue:
    # The target shape may mention symbolic sizes; the result type (from the
    # traced shape, batch axis dynamic) says all there is to say.
    op = dgtorch.ReshapeOp(
        operands=[imp.operand(node.args[0])], result_types=[imp.result_type(node)]
    )
    return imp.emit(node, op)


CHANNELS_LAST = [0, 2, 3, 1]
"""The NCHW -> NHWC permutation of `dg.Flatten`."""


@handles(aten.permute.default)
def _permute(imp: GraphImporter, node: Node) -> SSAValue:
    dims = [int(d) for d in node.args[1]]  # type: ignore[union-attr, arg-type]
    channels_last = dims == CHANNELS_LAST and len(traced_shape(node.args[0])) == 4
    if not (inside_flatten(node) and channels_last):
        raise NodeProblem(
            registry.PERMUTE.reason, registry.PERMUTE.fix, arguments=", ".join(map(str, dims))
        )
    return import_unary(imp, node, dgtorch.PermuteOp, dims=i64_array(dims))


@handles(*targets(registry.TRANSPOSE))
def _transpose(imp: GraphImporter, node: Node) -> SSAValue:
    source = node.args[0]
    rank = len(traced_shape(source))
    dim0, dim1 = (int(d) for d in node.args[1:3])  # type: ignore[arg-type]
    arguments = f"{dim0}, {dim1}"
    axes = {dim0 % rank, dim1 % rank}
    if len(axes) == 1:
        return imp.operand(source)  # swapping an axis with itself changes nothing
    if 0 in axes:
        raise NodeProblem(
            f"cannot move the batch axis (axis 0); the spec: {registry.TRANSPOSE.notes}",
            fix="swap two feature axes, e.g. x.transpose(-2, -1); keep axis 0 the batch axis",
            arguments=arguments,
        )
    if rank - 1 not in TRANSPOSE_FEATURE_RANKS:
        raise NodeProblem(
            f"is supported at feature rank 2-3 only (rank without the batch axis), and this "
            f"input has feature rank {rank - 1}; the spec: {registry.TRANSPOSE.notes}",
            fix="reshape to at most three feature axes first (e.g. merge two axes with "
            "x.flatten(1, 2)), or use dg.Flatten() to flatten a feature map",
            arguments=arguments,
        )
    return import_unary(imp, node, dgtorch.TransposeOp, dim0=int_attr(dim0), dim1=int_attr(dim1))


SLICE_FIX = "slice the sequence tensor (after a Linear or matmul), along a feature axis, step 1"


@handles(aten.alias.default)
def _alias(imp: GraphImporter, node: Node) -> SSAValue:
    # The same values (a slice of a whole axis): no op on the device.
    return imp.operand(node.args[0])


@handles(aten.slice.Tensor)
def _slice(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    source = args["input"]
    shape = traced_shape(source)
    dim = int(args["dim"]) % len(shape)
    start, end, step = args["start"], args["end"], int(args["step"])
    shown_end = None if end is None or end >= sys.maxsize else end
    arguments = f"dim={args['dim']}, start={start}, end={shown_end}, step={step}"
    try:
        return _import_slice(imp, node, source, (dim, start, end, step), arguments)
    except NodeProblem as problem:
        problem.written = node.meta.get(WRITTEN_AS) or written_subscript(
            node, dim, (start, end, step), len(shape)
        )
        raise


def _import_slice(
    imp: GraphImporter,
    node: Node,
    source: object,
    bounds: tuple[int, Any, Any, int],
    arguments: str,
) -> SSAValue:
    shape = traced_shape(source)
    dim, start, end, step = bounds
    if dim == 0:
        if (start or 0) == 0 and (end is None or end >= sys.maxsize) and step == 1:
            return imp.operand(source)  # x[:, ...] keeps the whole batch
        raise NodeProblem(
            f"cannot slice the batch axis (axis 0); the spec: {registry.SLICE.notes}",
            fix=SLICE_FIX + "; the device runs every sample of a batch alike",
            arguments=arguments,
        )
    picked = range(shape[dim])[slice(start, end, step)]
    if step != 1:
        raise NodeProblem(
            f"has step {step}, and the device slices contiguous ranges only; the spec: "
            f"{registry.SLICE.notes}",
            fix="use step 1 (a contiguous range, x[:, a:b])",
            arguments=arguments,
        )
    if len(picked) == shape[dim]:
        return imp.operand(source)  # the whole axis: nothing to do
    if not picked:
        raise NodeProblem("selects no element", fix="slice a non-empty range", arguments=arguments)
    operand = imp.operand(source)
    if dgq.value_domain(operand) != dgq.SEQUENCE:
        raise NodeProblem(
            "slices a spatial feature map (its input comes from a conv, pool, resize or pad, "
            f"or is an NCHW image); the spec: {registry.SLICE.notes}",
            fix="slice sequence-domain tensors only: flatten the map first (dg.Flatten(), or "
            "x.flatten(2).transpose(1, 2) for [B, H*W, C]), or crop with a conv's stride/padding",
            arguments=arguments,
        )
    require_activation(imp, source, "input")
    op = dgtorch.SliceOp(
        operands=[operand],
        result_types=[imp.result_type(node)],
        properties={
            "dim": int_attr(dim),
            "start": int_attr(picked.start),
            "end": int_attr(picked.start + len(picked)),
            "step": int_attr(step),
        },
    )
    return imp.emit(node, op)


@handles(*targets(registry.DROPOUT))
def _dropout(imp: GraphImporter, node: Node) -> SSAValue:
    # Identity at inference, whatever mode the graph was traced in: a frozen
    # model is for inference, and dg.freeze_quantization removes dropout.
    return imp.operand(node.args[0])


PAD_CONSUMERS = targets(registry.CONV2D, registry.AVG_POOL2D)
"""The ops an F.pad may immediately precede: their padding absorbs it."""


@handles(*targets(registry.PAD))
def _pad(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    pad = [int(p) for p in args["pad"]]
    mode = args.get("mode", "constant")
    value = args.get("value") or 0.0
    if mode != "constant":
        raise NodeProblem(
            f"only zero padding is supported, got mode='{mode}'", arguments=f"mode='{mode}'"
        )
    if value != 0:
        raise NodeProblem(
            f"{registry.PAD.op}: only zero padding folds into the next layer, got value={value:g}",
            fix="pad with value=0",
            arguments=f"value={value:g}",
        )
    users = consumers(node)
    if any(is_call(u, targets(registry.MAX_POOL2D)) for u in users):
        raise NodeProblem(
            f"nn.MaxPool2d: {registry.MAX_POOL2D.notes}",
            "remove the F.pad before the max pool (max pooling cannot pad)",
        )
    if not users or not all(is_call(u, PAD_CONSUMERS) for u in users):
        raise NodeProblem(registry.STANDALONE_PAD.reason, registry.STANDALONE_PAD.fix)
    if len(traced_shape(args["input"])) != 4 or len(pad) > 4 or any(p < 0 for p in pad):
        raise NodeProblem(
            "only padding of the spatial axes (H, W) of a feature map by non-negative amounts "
            f"is supported, got pad={tuple(pad)}",
            arguments=f"pad={tuple(pad)}",
        )
    return import_unary(
        imp, node, dgtorch.PadOp, pad=i64_array(pad), value=FloatAttr(float(value), f64)
    )


@handles(*targets(registry.CAT))
def _cat(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    tensors = list(args["tensors"])
    rank = len(traced_shape(tensors[0]))
    dim = int(args["dim"])
    if dim % rank == 0:
        raise NodeProblem(
            f"cannot concatenate along the batch axis (dim={dim}); the spec: {registry.CAT.notes}",
            fix="concatenate along a feature axis (dim=1 for the channels of a feature map)",
            arguments=f"dim={dim}",
        )
    for index, tensor in enumerate(tensors):
        require_activation(imp, tensor, f"input {index}")
    op = dgtorch.CatOp(
        operands=[[imp.operand(t) for t in tensors]],
        result_types=[imp.result_type(node)],
        properties={"dim": int_attr(dim)},
    )
    return imp.emit(node, op)


NEAREST_MODES = {
    aten.upsample_nearest2d.vec: "nearest",
    aten.upsample_nearest2d.default: "nearest",
    aten._upsample_nearest_exact2d.vec: "nearest-exact",
    aten._upsample_nearest_exact2d.default: "nearest-exact",
}
assert set(NEAREST_MODES) == set(targets(registry.INTERPOLATE))


@handles(*targets(registry.INTERPOLATE))
def _upsample_nearest(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    spatial_in = traced_shape(node.args[0])[2:]
    spatial_out = traced_shape(node)[2:]
    # torch picks source pixels by the scale factor when one is given; the
    # device by the sizes. They agree exactly when the factor gives the size.
    scales = [args.get(k) for k in ("scale_factors", "scales_h", "scales_w")]
    factors = scales[0] or [s for s in scales[1:] if s is not None]
    if factors and any(
        n * f != o for n, f, o in zip(spatial_in, _pair_floats(factors), spatial_out, strict=True)
    ):
        raise NodeProblem(
            f"scale_factor={as_written(factors)} does not give a whole output size for the "
            f"{size_text(spatial_in)} input",
            fix=f"pass size=({', '.join(map(str, spatial_out))}) instead of scale_factor",
            arguments=f"scale_factor={as_written(factors)}",
        )
    mode = NEAREST_MODES[node.target]  # type: ignore[index]
    for size_in, size_out in zip(spatial_in, spatial_out, strict=True):
        if not _torch_picks_exact_sources(size_in, size_out, mode):
            raise NodeProblem(
                f"resizing {size_in} to {size_out} picks source pixels by float32 rounding "
                "that the device's exact integer rule does not reproduce",
                fix="resize by a whole-number factor (or its inverse)",
            )
    return import_unary(imp, node, dgtorch.UpsampleNearest2dOp, mode=StringAttr(mode))


def _torch_picks_exact_sources(size_in: int, size_out: int, mode: str) -> bool:
    """Whether torch's nearest resize reads the sources of docs/dghw.md's integer rule.

    torch computes source indices in float32 and can round differently for
    ratios such as 26 -> 22; resizing an index ramp shows which it reads.
    """
    ramp = torch.arange(size_in, dtype=torch.float32).view(1, 1, size_in, 1)
    picked = torch.nn.functional.interpolate(ramp, size=(size_out, 1), mode=mode).flatten()
    offset = 0.5 if mode == "nearest-exact" else 0.0
    exact = np.minimum(np.floor((np.arange(size_out) + offset) * size_in / size_out), size_in - 1)
    return bool(np.array_equal(picked.numpy(), exact.astype(np.float32)))


def _pair_floats(values: Sequence[float]) -> list[float]:
    return [float(v) for v in values] * (2 if len(values) == 1 else 1)


@handles(*(overload(name) for name in registry.INTERPOLATE_OTHER_MODES))
def _upsample_other(imp: GraphImporter, node: Node) -> SSAValue:
    mode = registry.INTERPOLATE_OTHER_MODES[str(node.target)]
    raise NodeProblem(
        f"{registry.INTERPOLATE.notes}; got mode='{mode}'",
        fix='use mode="nearest" or mode="nearest-exact"',
        arguments=f"mode='{mode.split()[0]}'",
    )


@handles(operator.getitem)
def _getitem(imp: GraphImporter, node: Node) -> SSAValue:
    # `_native_batch_norm_legit_no_training` returns (output, mean, rstd).
    source, index = node.args
    if source in imp.parts:
        return imp.parts[source][index]  # type: ignore[index, call-overload]
    if is_call(source, targets(registry.BATCH_NORM)) and index == 0:
        return imp.operand(source)
    raise NodeProblem(UNKNOWN_OP_REASON)


@handles(*targets(registry.SEQUENCE_SPLITS))
def _split(imp: GraphImporter, node: Node) -> SSAValue:
    # dg.prepare_* rewrites these into slices (`dg.frontend.idioms`) wherever the split
    # axis is not axis 0 and has a fixed extent: one reaching the importer splits axis 0.
    shape = traced_shape(node.args[0])
    batch = next((axis for axis, d in enumerate(shape) if isinstance(d, torch.SymInt)), 0)
    if batch != 0:  # e.g. qkv.permute(2, 0, 3, 1, 4).unbind(0): a permute moved the batch
        raise NodeProblem(
            f"splits axis 0 of a tensor whose batch axis an earlier op moved to axis {batch}; "
            "dg keeps the batch axis first, every op runs each sample alike",
            fix="split before moving axes: the projection's output along its last axis, e.g. "
            "q, k, v = self.qkv(x).chunk(3, dim=-1), or use dg.SelfAttention",
        )
    raise NodeProblem(
        f"cannot split the batch axis (axis 0); the spec: {registry.SLICE.notes}",
        fix=SLICE_FIX + "; the device runs every sample of a batch alike",
    )
