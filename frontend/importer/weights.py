"""Weights family: Conv2d (dense and depthwise, padding="same"), Linear, and the
batch norm that folds into the one it follows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from torch.fx import Node
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    TensorType,
    f32,
    f64,
)
from xdsl.ir import SSAValue

from dg.dialects import dgtorch
from dg.dialects.common import (
    i64_array,
    is_depthwise,
    shape_of,
)
from dg.frontend.importer.common import (
    as_written,
    consumers,
    int_attr,
    is_call,
    pair,
    producer,
    traced_shape,
)
from dg.frontend.importer.core import (
    GraphImporter,
    NodeProblem,
    handles,
)
from dg.frontend.ops import targets
from dg.frontend.source import describe_op, source_info
from dg.lowering import registry


def _weight_op_operands(imp: GraphImporter, args: dict[str, Any]) -> list[Any]:
    imp.require_quantized_operand(args["input"], "input")
    imp.require_quantized_operand(args["weight"], "weight")
    operands: list[Any] = [imp.operand(args["input"]), imp.operand(args["weight"])]
    if args["bias"] is None:
        operands.append([])
    else:
        imp.require_quantized_operand(args["bias"], "bias")
        operands.append([imp.operand(args["bias"])])
    return operands


@handles(*targets(registry.CONV2D))
def _conv2d(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    dilation = pair(args["dilation"], "dilation")
    groups = int(args["groups"])
    out_channels, in_per_group = traced_shape(args["weight"])[:2]
    in_channels = in_per_group * groups
    if groups != 1 and not is_depthwise(groups, in_channels, out_channels):
        raise NodeProblem(
            f"{registry.CONV2D.notes}; got groups={groups} with {in_channels} input and "
            f"{out_channels} output channels",
            fix="use groups=1 (dense), or groups=in_channels=out_channels (depthwise; follow it "
            "with a 1x1 Conv2d to change the channel count)",
            arguments=f"groups={groups}",
        )
    if dilation != [1, 1]:
        raise NodeProblem(
            registry.DILATED_CONV2D.reason,
            registry.DILATED_CONV2D.fix,
            arguments=f"dilation={as_written(args['dilation'])}",
        )
    operands = _weight_op_operands(imp, args)
    padding = args["padding"]
    if padding == "same":
        # torch pads k - 1 in total (stride and dilation are 1), the odd one
        # at the bottom/right: as an explicit pad, it folds into the conv.
        operands[0], padding = _same_padding(imp, node, operands[0], args["weight"]), 0
    elif padding == "valid":
        padding = 0
    op = dgtorch.Conv2dOp(
        operands=operands,
        result_types=[imp.result_type(node)],
        properties={
            "stride": i64_array(pair(args["stride"], "stride")),
            "padding": i64_array(pair(padding, "padding")),
            "dilation": i64_array(dilation),
            "groups": int_attr(groups),
        },
    )
    return imp.emit(node, op)


def _same_padding(imp: GraphImporter, node: Node, source: SSAValue, weight: object) -> SSAValue:
    """`source` zero-padded as torch's ``padding="same"`` pads a stride-1 conv's input."""
    kernel_h, kernel_w = traced_shape(weight)[2:]
    pad: list[int] = []
    for k in (kernel_w, kernel_h):  # torch order: last axis first
        pad += [(k - 1) // 2, k - 1 - (k - 1) // 2]
    if not any(pad):
        return source
    batch, channels, height, width = shape_of(source)
    padded = TensorType(f32, [batch, channels, height + kernel_h - 1, width + kernel_w - 1])
    op = dgtorch.PadOp(
        operands=[source],
        result_types=[padded],
        properties={"pad": i64_array(pad), "value": FloatAttr(0.0, f64)},
    )
    return imp.emit(node, op)


@handles(*targets(registry.LINEAR))
def _linear(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    op = dgtorch.LinearOp(
        operands=_weight_op_operands(imp, args), result_types=[imp.result_type(node)]
    )
    return imp.emit(node, op)


@handles(*targets(registry.BATCH_NORM))
def _batch_norm(imp: GraphImporter, node: Node) -> SSAValue:
    args = imp.arguments(node)
    _check_batch_norm_source(imp, args["input"])
    channels = traced_shape(args["input"])[1]
    if args["running_mean"] is None or args["running_var"] is None:
        raise NodeProblem(
            "needs running statistics to fold (track_running_stats=False is not supported)"
        )
    params = [
        _batch_norm_param(imp, node, args[name], channels, default)
        for name, default in (
            ("weight", 1.0),
            ("bias", 0.0),
            ("running_mean", None),
            ("running_var", None),
        )
    ]
    source = imp.operand(args["input"])
    op = dgtorch.BatchNormOp(
        operands=[source, *params],
        # torchao's switch to eval mode re-creates batch norm nodes with the
        # traced (static) batch size: the result has the input's type.
        result_types=[source.type],
        properties={"eps": FloatAttr(float(args["eps"]), f64)},
    )
    return imp.emit(node, op)


def _check_batch_norm_source(imp: GraphImporter, source_arg: object) -> None:
    """A batch norm folds into the Linear (dg.export) or Conv2d (freeze) it directly follows.

    Either must have no other user. In a frozen model a Conv2d's batch norm is
    already folded: one that is left could not be. Before quantization (a
    float model) Conv2d -> batch norm is fine: quantization will fold it.
    """
    source = producer(source_arg)
    if not is_call(source, WEIGHT_OPS):
        raise NodeProblem(
            f"{registry.BATCH_NORM.notes}; a BatchNorm that follows anything else cannot fold, "
            f"and this one follows {_name_of(source)}",
            fix=registry.BATCH_NORM.fix,
        )
    assert isinstance(source, Node)
    users = consumers(source)
    if len(users) != 1:
        raise NodeProblem(
            f"{registry.BATCH_NORM.notes}; but the {_name_of(source)} it follows has "
            f"{len(users)} users",
            fix=f"let the BatchNorm be the only user of the {_name_of(source)}",
        )
    if source.target in targets(registry.LINEAR) and len(traced_shape(source)) != 2:
        raise NodeProblem(
            "BatchNorm normalizes axis 1, but the "
            f"{_name_of(source)} computes the last axis of a rank-{len(traced_shape(source))} "
            "tensor: it folds only into a Linear on [batch, features]",
            fix="normalize [batch, features] tensors only, or drop the BatchNorm",
        )
    if imp.quantized and source.target in targets(registry.CONV2D):
        raise NodeProblem(
            f"{registry.BATCH_NORM.notes}; this one follows the {_name_of(source)} but was not "
            "folded by freeze_quantization",
            fix="quantize with dg.prepare_qat / dg.prepare_ptq and dg.freeze_quantization",
        )


WEIGHT_OPS = targets(registry.CONV2D, registry.LINEAR)


def _name_of(node: object) -> str:
    """An op for a message about another op: ``nn.Linear 'fc1' (model.py:12)``."""
    if not (isinstance(node, Node) and node.op == "call_function"):
        return "the model's input"
    name = describe_op(node, registry.spellings_of(node.target))
    info = source_info(node)
    if info.module_path:
        name += f" '{info.module_path}'"
    if info.location:
        name += f" at {info.location}"
    return name


def _batch_norm_param(
    imp: GraphImporter, node: Node, arg: object, channels: int, default: float | None
) -> SSAValue:
    if arg is not None:
        return imp.operand(arg)
    # affine=False: the identity scale and shift.
    assert default is not None
    array = np.full(channels, default, dtype="<f4")
    value = DenseIntOrFPElementsAttr(TensorType(f32, [channels]), BytesAttr(array.tobytes()))
    return imp.emit(node, dgtorch.ConstantOp(value))
