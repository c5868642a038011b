"""Quantization family: torchao's quantize / dequantize ops, per tensor and per channel.

They become the `dgtorch` q/dq ops of the same name; a quantize that gives back
exactly what its dequantize read is folded away.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch.fx import Node
from xdsl.dialects.builtin import (
    Attribute,
    BytesAttr,
    DenseArrayBase,
    FloatAttr,
    TensorType,
    f64,
    i64,
)
from xdsl.ir import Operation, SSAValue

from dg.dialects import dgtorch
from dg.frontend.importer.common import (
    int_attr,
)
from dg.frontend.importer.core import (
    GraphImporter,
    Handler,
    element_type,
    handles,
)

qd = torch.ops.quantized_decomposed  # registered by importing torchao.quantization.pt2e


def _scalar(imp: GraphImporter, arg: object) -> float:
    """A per-tensor scale or zero point: a literal, or a 0-d constant in `.tensor` variants."""
    return imp.constant_tensor(arg).item() if isinstance(arg, Node) else float(arg)  # type: ignore[arg-type]


def _per_tensor_properties(imp: GraphImporter, args: dict[str, Any]) -> dict[str, Attribute]:
    return {
        "scale": FloatAttr(_scalar(imp, args["scale"]), f64),
        "zero_point": int_attr(_scalar(imp, args["zero_point"])),
        "quant_min": int_attr(args["quant_min"]),
        "quant_max": int_attr(args["quant_max"]),
    }


def _per_channel_properties(imp: GraphImporter, args: dict[str, Any]) -> dict[str, Attribute]:
    scales = imp.constant_tensor(args["scales"]).to(torch.float64).cpu().numpy()
    zps = args["zero_points"]
    zero_points = (
        np.zeros(scales.shape, np.int64)
        if zps is None
        else imp.constant_tensor(zps).to(torch.int64).cpu().numpy()
    )
    return {
        "scales": DenseArrayBase(f64, BytesAttr(scales.astype("<f8").tobytes())),
        "zero_points": DenseArrayBase(i64, BytesAttr(zero_points.astype("<i8").tobytes())),
        "axis": int_attr(args["axis"]),
        "quant_min": int_attr(args["quant_min"]),
        "quant_max": int_attr(args["quant_max"]),
    }


def _qdq_handler(
    op_type: type[Operation],
    properties: Callable[[GraphImporter, dict[str, Any]], dict[str, Attribute]],
    result_dtype: Callable[[dict[str, Any]], torch.dtype],
) -> Handler:
    def handler(imp: GraphImporter, node: Node) -> SSAValue:
        args = imp.arguments(node)
        source = imp.operand(args["input"])
        # convert_pt2e inserts these nodes without shape metadata: the result
        # has the operand's shape and the element type the op converts to.
        assert isinstance(source.type, TensorType)
        result_type = TensorType(element_type(result_dtype(args)), source.type.get_shape())
        props = properties(imp, args)
        if _round_trips(source, op_type, props, result_type):
            # quantize(dequantize(q)) with the same parameters is q itself, exactly
            # (left where an identity op, like a dropout, sat between them).
            return source.owner.input  # type: ignore[union-attr]
        op = op_type.create(operands=[source], result_types=[result_type], properties=props)
        return imp.emit(node, op)

    return handler


def _round_trips(
    source: SSAValue,
    op_type: type[Operation],
    properties: dict[str, Attribute],
    result_type: Attribute,
) -> bool:
    """`op_type(properties)` applied to `source` gives back what its dequantize read."""
    return (
        op_type is dgtorch.QuantizePerTensorOp
        and isinstance(source.owner, dgtorch.DequantizePerTensorOp)
        and source.owner.input.type == result_type
        and all(source.owner.properties.get(k) == v for k, v in properties.items())
    )


def _quantized_dtype(args: dict[str, Any]) -> torch.dtype:
    return args["dtype"]


def _dequantized_dtype(args: dict[str, Any]) -> torch.dtype:
    return args.get("out_dtype") or torch.float32


handles(qd.quantize_per_tensor.default, qd.quantize_per_tensor.tensor)(
    _qdq_handler(dgtorch.QuantizePerTensorOp, _per_tensor_properties, _quantized_dtype)
)
handles(qd.dequantize_per_tensor.default, qd.dequantize_per_tensor.tensor)(
    _qdq_handler(dgtorch.DequantizePerTensorOp, _per_tensor_properties, _dequantized_dtype)
)
handles(qd.quantize_per_channel.default)(
    _qdq_handler(dgtorch.QuantizePerChannelOp, _per_channel_properties, _quantized_dtype)
)
handles(qd.dequantize_per_channel.default)(
    _qdq_handler(dgtorch.DequantizePerChannelOp, _per_channel_properties, _dequantized_dtype)
)
