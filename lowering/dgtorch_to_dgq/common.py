"""What the op families of `convert-dgtorch-to-dgq` share.

The two shapes a conversion takes (`LegalizePartition`: a quantized
partition collapses into one dgq op; `LegalizeValueMovement`: an op that
only moves stored values moves to the quantized side), the `!dgq.uniform`
types torch's q/dq ops describe, and the helpers that read grids off the
dequantizes and quantizes around an op.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    DenseArrayBase,
    Float32Type,
    Float64Type,
    IntegerType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dgq, dgtorch
from dg.dialects.common import i64_array, int_array, located
from dg.lowering.diagnostics import ExplainingPattern, LoweringProblem, Reason

FIXED_GRID_RESULT = Reason(
    "fixed-grid-result",
    f"its result must be quantized on the fixed grid scale {dgq.FIXED_GRID_SCALE}, "
    f"zero point {dgq.FIXED_GRID_ZERO_POINT} (dg's quantizer pins it), got {{grid}}",
)
"""Softmax and sigmoid (`LegalizeSoftmax`, `LegalizeSigmoid`) quantized on another grid."""


# -- quantization parameters ----------------------------------------------------------


def per_tensor_type(op: dgtorch.PerTensorOpBase, storage: IntegerType) -> dgq.UniformQuantizedType:
    """The `!dgq.uniform` element type described by a torch per-tensor q/dq op."""
    return dgq.UniformQuantizedType(
        storage,
        [op.scale.value.data],
        [op.zero_point.value.data],
        storage_min=op.quant_min.value.data,
        storage_max=op.quant_max.value.data,
    )


def per_channel_type(
    op: dgtorch.PerChannelOpBase, storage: IntegerType
) -> dgq.UniformQuantizedType:
    """The per-axis `!dgq.uniform` element type described by `dequantize_per_channel`."""
    return dgq.UniformQuantizedType(
        storage,
        op.scales.get_values(),
        op.zero_points.get_values(),
        axis=op.axis.value.data,
        storage_min=op.quant_min.value.data,
        storage_max=op.quant_max.value.data,
    )


def quantized_tensor(like: Attribute, element: Attribute) -> TensorType[Attribute]:
    """A tensor with the shape of `like` and the given element type."""
    assert isinstance(like, TensorType)
    return TensorType(element, like.get_shape())


# -- grids read off the dequantizes and quantizes around an op -------------------------


def quantized_source(value: SSAValue) -> SSAValue | None:
    """`a` when `value` is `dgq.dequantize(a)`, i.e. a float view of a quantized value."""
    if isinstance(value.owner, dgq.DequantizeOp):
        return value.owner.input
    return None


def quantized_operands(*values: SSAValue | None) -> list[SSAValue | None] | None:
    """The quantized sources of dequantized operands (None stays None), or None if any is not."""
    sources: list[SSAValue | None] = []
    for value in values:
        if value is None:
            sources.append(None)
        elif (source := quantized_source(value)) is not None:
            sources.append(source)
        else:
            return None
    return sources


def per_tensor_source(value: SSAValue) -> tuple[SSAValue, dgq.UniformQuantizedType] | None:
    """`(a, grid of a)` when `value` is `dgq.dequantize(a)` of a per-tensor quantized `a`."""
    source = quantized_source(value)
    if source is None or not isinstance(source.type, TensorType):
        return None
    element = source.type.element_type
    if not isinstance(element, dgq.UniformQuantizedType) or element.is_per_axis:
        return None
    return source, element


def result_element(result_type: Attribute) -> dgq.UniformQuantizedType | None:
    """The per-tensor grid of a quantized tensor type, or None."""
    if not isinstance(result_type, TensorType):
        return None
    element = result_type.element_type
    if not isinstance(element, dgq.UniformQuantizedType) or element.is_per_axis:
        return None
    return element


def quantized_result_element(op: Operation) -> dgq.UniformQuantizedType | None:
    """The grid of the one quantize `op`'s result feeds, if it feeds exactly one."""
    user = op.results[0].get_user_of_unique_use()
    return result_element(user.result.type) if isinstance(user, dgq.QuantizeOp) else None


def describe_grid(element: dgq.UniformQuantizedType | None) -> str:
    """A grid as the diagnostics name it."""
    if element is None:
        return "none (the result must feed exactly one quantize)"
    return f"scale {element.scale}, zero point {element.zero_point}"


def is_fixed_grid(element: dgq.UniformQuantizedType | None) -> bool:
    """Whether `element` is the fixed i8 grid of softmax and sigmoid (dgq's verifier's rule)."""
    return (
        element is not None
        and element.storage.width.data == 8
        and element.limits == (-128, 127)
        and element.scale == dgq.FIXED_GRID_SCALE
        and element.zero_point == dgq.FIXED_GRID_ZERO_POINT
    )


def fixed_grid_source(op: Operation, result_type: Attribute) -> SSAValue | None:
    """The quantized input of a one-input partition whose result is on the fixed grid."""
    source = per_tensor_source(op.operands[0])
    if source is None or not is_fixed_grid(result_element(result_type)):
        return None
    return source[0]


def explain_fixed_grid(op: Operation) -> LoweringProblem | None:
    """A fixed-grid op of a quantized input left over: its result was not on the fixed grid."""
    if per_tensor_source(op.operands[0]) is None:
        return None
    return FIXED_GRID_RESULT.at(op, grid=describe_grid(quantized_result_element(op)))


# -- constants and properties ------------------------------------------------------------


def float_constant(value: SSAValue) -> np.ndarray | None:
    """The values of a float32/float64 `dgtorch.constant` as float64, read from its bytes."""
    constant = value.owner
    if not isinstance(constant, dgtorch.ConstantOp):
        return None
    element = constant.value.get_element_type()
    if not isinstance(element, Float32Type | Float64Type):
        return None
    dtype = np.dtype(f"<f{element.bitwidth // 8}")
    values = np.frombuffer(constant.value.data.data, dtype=dtype)
    return values.astype(np.float64).reshape(constant.value.get_shape())


def feeds_only(op: dgtorch.ConstantOp, user_type: type[Operation]) -> bool:
    """Whether the constant has users and all of them are `user_type` ops."""
    users = [use.operation for use in op.result.uses]
    return bool(users) and all(isinstance(user, user_type) for user in users)


def fused_activation(name: str) -> dict[str, Attribute]:
    """The `fused_activation` property of a dgq op."""
    return {"fused_activation": StringAttr(name)}


def symmetric_pad(padding: DenseArrayBase) -> DenseArrayBase:
    """torch's `[ph, pw]` as dgq's `[top, bottom, left, right]`."""
    ph, pw = int_array(padding, "padding", 2)
    return i64_array((ph, ph, pw, pw))


# -- partitions: dgq.quantize(op(dgq.dequantize(...))) -> one dgq op -------------------


class LegalizePartition(ExplainingPattern, ABC):
    """Base of the patterns that collapse a quantized partition into one dgq op.

    A partition is a float dgtorch op (`source`) whose operands are all
    dequantized quantized values and whose single use is the `dgq.quantize`
    of its result. Subclasses say how to build the dgq op; `FuseReluTail`
    reuses them for partitions ending in relu.
    """

    source: ClassVar[type[Operation]]

    @abstractmethod
    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        """The dgq op computing `op` quantized to `result_type`, or None if unsupported."""

    def build_partition(
        self, op: Operation, result_type: Attribute, activation: str
    ) -> Operation | None:
        """`build`, for a `source` op whose result the quantize (or relu tail) alone uses."""
        if not isinstance(op, self.source) or not op.results[0].has_one_use():
            return None
        built = self.build(op, result_type, activation)
        return None if built is None else located(built, op)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.QuantizeOp, rewriter: PatternRewriter) -> None:
        computation = op.input.owner
        if not isinstance(computation, Operation):
            return
        if (built := self.build_partition(computation, op.result.type, "none")) is not None:
            rewriter.replace(op, built)


# -- ops that move stored values: op(dgq.dequantize(a)) -> dgq.dequantize(dgq.op(a)) ---


class LegalizeValueMovement(ExplainingPattern, ABC):
    """Base of the patterns for ops that only move or pick stored values.

    Such an op commutes with dequantize, so it moves to the quantized side
    unchanged and keeps its input's grid; the quantize after it then folds
    away (`FoldDequantizeQuantize`). Should the quantizer have chosen another
    grid, that quantize becomes a `dgq.requantize`, which is exact as well:
    requantizing is elementwise and monotone (so it commutes with max), and
    maps real 0 (padding) to real 0.
    """

    source: ClassVar[type[Operation] | tuple[type[Operation], ...]]

    @abstractmethod
    def build(self, op: Operation, rewriter: PatternRewriter) -> Operation | None:
        """The dgq op computing `op` on its input's grid (inserting helpers), or None."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, self.source):
            return
        built = self.build(op, rewriter)
        if built is None:
            return
        dequantize = dgq.DequantizeOp.build(
            operands=[built.results[0]], result_types=[op.results[0].type]
        )
        rewriter.replace(op, [located(built, op), located(dequantize, op)])


def same_grid_result(op: Operation, element: dgq.UniformQuantizedType) -> TensorType[Attribute]:
    """`op`'s result type, quantized on `element` (its input's grid)."""
    return quantized_tensor(op.results[0].type, element)
