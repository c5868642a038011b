"""Builders of small dghw modules for the runtime tests: one function, ops made in Python."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
    f64,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from dg.dialects import dghw
from dg.dialects.dghw import SCALE_ATTR, ZERO_POINT_ATTR

T = TypeVar("T")

BATCH = DYNAMIC_INDEX


def tensor(bits: int, *shape: int) -> TensorType[Attribute]:
    return TensorType(IntegerType(bits), shape)


def batched(bits: int, shape: Sequence[int]) -> TensorType[Attribute]:
    """The type of a value with runtime batch extent and static item `shape[1:]`."""
    return tensor(bits, BATCH, *shape[1:])


def constant(array: np.ndarray) -> dghw.ConstantOp:
    bits = array.dtype.itemsize * 8
    t = tensor(bits, *array.shape)
    return dghw.ConstantOp(
        DenseIntOrFPElementsAttr(t, BytesAttr(array.astype(f"<i{bits // 8}").tobytes()))
    )


def i32_attr(value: int) -> IntegerAttr:
    return IntegerAttr(value, i32)


def i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [int(v) for v in values])


def i32_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i32, [int(v) for v in values])


def qparams_attr(scale: float, zero_point: int) -> DictionaryAttr:
    return DictionaryAttr(
        {SCALE_ATTR: FloatAttr(scale, f64), ZERO_POINT_ATTR: i32_attr(zero_point)}
    )


def function_module(
    arg_types: Sequence[Attribute],
    build: Callable[[Sequence[SSAValue]], Sequence[Operation]],
    results: Callable[[Sequence[Operation]], Sequence[SSAValue]] | None = None,
    arg_qparams: Sequence[tuple[float, int]] | None = None,
    result_qparams: Sequence[tuple[float, int]] | None = None,
) -> ModuleOp:
    """`builtin.module { func.func @main(args) { build(args)...; return results } }`, verified.

    By default the function returns the last op's result.
    """
    block = Block(arg_types=arg_types)
    ops = list(build(block.args))
    block.add_ops(ops)
    returned = list(results(ops)) if results is not None else [ops[-1].results[0]]
    block.add_op(func.ReturnOp(*returned))
    main = func.FuncOp("main", ([*arg_types], [v.type for v in returned]), Region(block))
    if arg_qparams is not None:
        main.arg_attrs = ArrayAttr([qparams_attr(*q) for q in arg_qparams])
    if result_qparams is not None:
        main.res_attrs = ArrayAttr([qparams_attr(*q) for q in result_qparams])
    module = ModuleOp([main])
    module.verify()
    return module


def conv2d(x, w, b, result_type, stride, pad, input_zp, weight_zp) -> dghw.Conv2dOp:
    return dghw.Conv2dOp(
        operands=[x, w, b],
        result_types=[result_type],
        properties={
            "stride": i64_array(stride),
            "pad": i64_array(pad),
            "input_zp": i32_attr(input_zp),
            "weight_zp": i32_attr(weight_zp),
        },
    )


def fully_connected(x, w, b, result_type, input_zp, weight_zp) -> dghw.FullyConnectedOp:
    return dghw.FullyConnectedOp(
        operands=[x, w, b],
        result_types=[result_type],
        properties={"input_zp": i32_attr(input_zp), "weight_zp": i32_attr(weight_zp)},
    )


def rescale(x, result_type, multiplier, shift, input_zp, output_zp, clamp_min, clamp_max):
    return dghw.RescaleOp(
        operands=[x],
        result_types=[result_type],
        properties={
            "multiplier": i32_array(multiplier),
            "shift": i32_array(shift),
            "input_zp": i32_attr(input_zp),
            "output_zp": i32_attr(output_zp),
            "clamp_min": i32_attr(clamp_min),
            "clamp_max": i32_attr(clamp_max),
        },
    )


def add(lhs, rhs) -> dghw.AddOp:
    return dghw.AddOp(operands=[lhs, rhs], result_types=[lhs.type])


def reshape(x, result_type) -> dghw.ReshapeOp:
    return dghw.ReshapeOp(operands=[x], result_types=[result_type])


def transpose(x, result_type, perm) -> dghw.TransposeOp:
    return dghw.TransposeOp(
        operands=[x], result_types=[result_type], properties={"perm": i64_array(perm)}
    )


def depthwise_conv2d(x, w, b, result_type, stride, pad, input_zp, weight_zp):
    return dghw.DepthwiseConv2dOp(
        operands=[x, w, b],
        result_types=[result_type],
        properties={
            "stride": i64_array(stride),
            "pad": i64_array(pad),
            "input_zp": i32_attr(input_zp),
            "weight_zp": i32_attr(weight_zp),
        },
    )


def max_pool2d(x, result_type, kernel, stride) -> dghw.MaxPool2dOp:
    return dghw.MaxPool2dOp(
        operands=[x],
        result_types=[result_type],
        properties={"kernel": i64_array(kernel), "stride": i64_array(stride)},
    )


def avg_pool2d(
    x, result_type, kernel, stride, pad, count_include_pad, divisor_override, input_zp, output_zp
) -> dghw.AvgPool2dOp:
    properties: dict[str, Attribute] = {
        "kernel": i64_array(kernel),
        "stride": i64_array(stride),
        "pad": i64_array(pad),
        "count_include_pad": IntegerAttr.from_bool(count_include_pad),
        "input_zp": i32_attr(input_zp),
        "output_zp": i32_attr(output_zp),
    }
    if divisor_override is not None:
        properties["divisor_override"] = IntegerAttr(divisor_override, i64)
    return dghw.AvgPool2dOp(operands=[x], result_types=[result_type], properties=properties)


def table(x, entries: Sequence[int]) -> dghw.TableOp:
    return dghw.TableOp(
        operands=[x],
        result_types=[x.type],
        properties={"table": DenseArrayBase.from_list(i8, [int(v) for v in entries])},
    )


def softmax(x, exp_table: Sequence[int], axis: int) -> dghw.SoftmaxOp:
    return dghw.SoftmaxOp(
        operands=[x],
        result_types=[x.type],
        properties={"exp_table": i32_array(exp_table), "axis": IntegerAttr(axis, i64)},
    )


def concat(inputs, result_type, axis: int) -> dghw.ConcatOp:
    return dghw.ConcatOp(
        operands=[list(inputs)],
        result_types=[result_type],
        properties={"axis": IntegerAttr(axis, i64)},
    )


def resize_nearest(x, result_type, mode: str) -> dghw.ResizeNearestOp:
    return dghw.ResizeNearestOp(
        operands=[x], result_types=[result_type], properties={"mode": StringAttr(mode)}
    )


def slice_op(x, result_type, axis: int, start: int, end: int) -> dghw.SliceOp:
    return dghw.SliceOp(
        operands=[x],
        result_types=[result_type],
        properties={
            "axis": IntegerAttr(axis, i64),
            "start": IntegerAttr(start, i64),
            "end": IntegerAttr(end, i64),
        },
    )


def linear_module(weight: np.ndarray, bias: np.ndarray) -> str:
    """dghw text of one int8 Linear with per-tensor requantization: the weight as hex bytes."""
    n, k = weight.shape
    x, w, b = f"tensor<?x{k}xi8>", f"tensor<{n}x{k}xi8>", f"tensor<{n}xi32>"
    acc, y = f"tensor<?x{n}xi32>", f"tensor<?x{n}xi8>"
    rescale = (
        "multiplier = array<i32: 1174432951>, shift = array<i32: 40>, input_zp = 0 : i32, "
        "output_zp = -3 : i32, clamp_min = -128 : i32, clamp_max = 127 : i32"
    )
    return "\n".join(
        [
            "builtin.module {",
            f"  func.func @main(%0: {x} {{dghw.scale = 0.02 : f64, dghw.zero_point = 1 : i32}})"
            f" -> ({y} {{dghw.scale = 0.5 : f64, dghw.zero_point = -3 : i32}}) {{",
            f'    %1 = dghw.constant {{value = dense<"0x{weight.tobytes().hex()}"> : {w}}} : {w}',
            f"    %2 = dghw.constant {{value = dense<{bias.tolist()}> : {b}}} : {b}",
            "    %3 = dghw.fully_connected %0, %1, %2 {input_zp = 1 : i32, weight_zp = 0 : i32}"
            f" : ({x}, {w}, {b}) -> {acc}",
            f"    %4 = dghw.rescale %3 {{{rescale}}} : {acc} -> {y}",
            f"    func.return %4 : {y}",
            "  }",
            "}",
        ]
    )


def traced_peak(step: Callable[[], T]) -> tuple[T, int]:
    """`step()`, and the most memory Python and numpy held during it beyond what they held
    before (tracemalloc: every bytes, str and array allocation)."""
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    try:
        result = step()
        return result, tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
