"""`convert-dgtorch-to-dgq`: from torch's float graph with q/dq ops to quantized dgq ops.

torchao's `convert_pt2e` leaves every quantized activation as a
`quantize_per_tensor` -> `dequantize_per_tensor` pair, every weight and bias as
an integer constant feeding `dequantize_per_channel`, and every partition
(conv, linear, add, optionally followed by relu) as float ops between the
dequantizes of its inputs and the one quantize of its output. This pass moves
the quantization parameters into the types (`!dgq.uniform`) and collapses each
partition into the single dgq op that computes it:

    dgq.quantize(relu(conv2d(dgq.dequantize(x), dgq.dequantize(w), ...)))
        -> dgq.conv2d(x, w, ...) {fused_activation = "relu"}

Ops with a fixed rule for their result grid are partitions too: average
pools keep their input's grid, softmax and sigmoid produce the fixed grid
(scale 1/256, zero point -128). Ops that only move or pick stored values
(max pool, pad, concat, nearest resize, reshapes) move to the quantized side
as they are, `op(dgq.dequantize(a)) -> dgq.dequantize(dgq.op(a))`, and the
quantize after them folds away.

Some ops exist only folded into a neighbour: a zero `F.pad` into the conv2d or
avg_pool2d after it (`FoldPadIntoConv2d`, `FoldPadIntoAvgPool2d`), a batch norm
into the linear before it (`FoldBatchNormIntoLinear`), a `permute(x, [0, 2, 3,
1])` into the flatten after it (`dg.Flatten`, `LegalizeChannelsLastFlatten`).

Graph inputs keep their `dgq.quantize` and graph outputs their
`dgq.dequantize`. Any dgtorch op left afterwards (a standalone relu, a dilated
convolution, ...), and any `dgq.pad` that folded into nothing, fails the pass
with a diagnostic at the op's location.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BoolAttr,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
    f32,
    f64,
    i64,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from dg.dialects import dgq, dgtorch
from dg.dialects.common import int_array, static_numel, window_counts
from dg.lowering.diagnostics import check_legality_with
from dg.lowering.legalize_logic import LOGIC_LEGALIZATIONS
from dg.lowering.pad_folding import PAD_FOLDS, explain_leftover_pad, unfoldable_pad_problem, where

PASS_NAME = "convert-dgtorch-to-dgq"


# -- quantization parameters ----------------------------------------------------------


def _storage_type(value_type: Attribute) -> IntegerType | None:
    if isinstance(value_type, TensorType) and isinstance(value_type.element_type, IntegerType):
        return value_type.element_type
    return None


def _range_fits(op: dgtorch.QuantizeOpBase, storage: IntegerType) -> bool:
    width = storage.width.data
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    return lo <= op.quant_min.value.data and op.quant_max.value.data <= hi


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


def _quantized_source(value: SSAValue) -> SSAValue | None:
    """`a` when `value` is `dgq.dequantize(a)`, i.e. a float view of a quantized value."""
    if isinstance(value.owner, dgq.DequantizeOp):
        return value.owner.input
    return None


def _at(op: Operation, location: Operation) -> Operation:
    """`op`, carrying the source location of the op it was made from."""
    op.location = location.location
    return op


# -- quantize / dequantize ------------------------------------------------------------


class LegalizeQuantizePerTensor(RewritePattern):
    """`dgtorch.quantize_per_tensor` -> `dgq.quantize` to the equivalent `!dgq.uniform` type."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgtorch.QuantizePerTensorOp, rewriter: PatternRewriter) -> None:
        storage = _storage_type(op.result.type)
        if storage is None or not _range_fits(op, storage):
            return
        result_type = quantized_tensor(op.result.type, per_tensor_type(op, storage))
        quantize = dgq.QuantizeOp.build(operands=[op.input], result_types=[result_type])
        rewriter.replace(op, _at(quantize, op))


class LegalizeDequantizePerTensor(RewritePattern):
    """`dgtorch.dequantize_per_tensor` of a dgq value -> `dgq.dequantize`.

    The dequantize must restate the parameters its input is quantized with
    (torchao emits q/dq pairs with equal parameters); anything else would
    reinterpret the stored integers, which dgq cannot express.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: dgtorch.DequantizePerTensorOp, rewriter: PatternRewriter
    ) -> None:
        if not _restates_input_parameters(op):
            return
        dequantize = dgq.DequantizeOp.build(operands=[op.input], result_types=[op.result.type])
        rewriter.replace(op, _at(dequantize, op))


def _restates_input_parameters(op: dgtorch.DequantizePerTensorOp) -> bool:
    input_type = op.input.type
    if not isinstance(input_type, TensorType):
        return False
    element = input_type.element_type
    if not isinstance(element, dgq.UniformQuantizedType):
        return False
    return element == per_tensor_type(op, element.storage)


class LegalizeQuantizedConstant(RewritePattern):
    """`dgtorch.dequantize_per_*(dgtorch.constant)` -> `dgq.dequantize(dgq.constant)`.

    The integers stay as they are; the dequantize's parameters become the
    constant's element type (per axis for `dequantize_per_channel`).
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self,
        op: dgtorch.DequantizePerChannelOp | dgtorch.DequantizePerTensorOp,
        rewriter: PatternRewriter,
    ) -> None:
        constant = op.input.owner
        if not isinstance(constant, dgtorch.ConstantOp):
            return
        storage = _storage_type(constant.result.type)
        if storage is None or not _range_fits(op, storage):
            return
        if isinstance(op, dgtorch.DequantizePerChannelOp):
            element = per_channel_type(op, storage)
        else:
            element = per_tensor_type(op, storage)
        quantized = dgq.ConstantOp.build(
            properties={"value": constant.value},
            result_types=[quantized_tensor(constant.result.type, element)],
        )
        # Keep the parameter's own name: the dequantize takes the replaced op's.
        quantized.result.name_hint = constant.result.name_hint
        dequantize = dgq.DequantizeOp.build(
            operands=[quantized.result], result_types=[op.result.type]
        )
        rewriter.replace(op, [_at(quantized, constant), _at(dequantize, op)])


# -- partitions: dgq.quantize(op(dgq.dequantize(...))) -> one dgq op -------------------


class LegalizePartition(RewritePattern, ABC):
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
        if not isinstance(op, self.source) or not op.results[0].has_one_use():
            return None
        built = self.build(op, result_type, activation)
        return None if built is None else _at(built, op)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.QuantizeOp, rewriter: PatternRewriter) -> None:
        computation = op.input.owner
        if not isinstance(computation, Operation):
            return
        if (built := self.build_partition(computation, op.result.type, "none")) is not None:
            rewriter.replace(op, built)


def _quantized_operands(*values: SSAValue | None) -> list[SSAValue | None] | None:
    """The quantized sources of dequantized operands (None stays None), or None if any is not."""
    sources: list[SSAValue | None] = []
    for value in values:
        if value is None:
            sources.append(None)
        elif (source := _quantized_source(value)) is not None:
            sources.append(source)
        else:
            return None
    return sources


def _per_tensor_source(value: SSAValue) -> tuple[SSAValue, dgq.UniformQuantizedType] | None:
    """`(a, grid of a)` when `value` is `dgq.dequantize(a)` of a per-tensor quantized `a`."""
    source = _quantized_source(value)
    if source is None or not isinstance(source.type, TensorType):
        return None
    element = source.type.element_type
    if not isinstance(element, dgq.UniformQuantizedType) or element.is_per_axis:
        return None
    return source, element


def _activation(name: str) -> dict[str, Attribute]:
    return {"fused_activation": StringAttr(name)}


def _i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, values)


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return value.type.get_shape()


def _is_depthwise(op: dgtorch.Conv2dOp) -> bool:
    """groups = in_channels = out_channels: every channel convolved with its own filter."""
    groups = op.groups.value.data
    return groups == _shape(op.input)[1] == _shape(op.weight)[0]


def _conv_is_supported(op: dgtorch.Conv2dOp) -> bool:
    dense_or_depthwise = op.groups.value.data == 1 or _is_depthwise(op)
    return dense_or_depthwise and int_array(op.dilation, "dilation") == (1, 1)


class LegalizeConv2d(LegalizePartition):
    """`conv2d` partition -> `dgq.conv2d`; torch's symmetric `[ph, pw]` padding becomes
    dgq's `[top, bottom, left, right]`. Dense and depthwise (groups = in = out channels)
    convolutions are supported; other groups and dilated convolutions stay illegal."""

    source = dgtorch.Conv2dOp

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.Conv2dOp)
        if not _conv_is_supported(op):
            return None
        operands = _quantized_operands(op.input, op.weight, op.bias)
        if operands is None:
            return None
        ph, pw = int_array(op.padding, "padding")
        groups: dict[str, Attribute] = {} if op.groups.value.data == 1 else {"groups": op.groups}
        return dgq.Conv2dOp.build(
            operands=[operands[0], operands[1], operands[2]],
            properties={
                "stride": op.stride,
                "pad": _i64_array((ph, ph, pw, pw)),
                **groups,
                **_activation(activation),
            },
            result_types=[result_type],
        )


class LegalizeLinear(LegalizePartition):
    """`linear` partition -> `dgq.linear`."""

    source = dgtorch.LinearOp

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.LinearOp)
        operands = _quantized_operands(op.input, op.weight, op.bias)
        if operands is None:
            return None
        return dgq.LinearOp.build(
            operands=[operands[0], operands[1], operands[2]],
            properties=_activation(activation),
            result_types=[result_type],
        )


class LegalizeAdd(LegalizePartition):
    """`add` of two dequantized activations -> `dgq.add`."""

    source = dgtorch.AddOp

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.AddOp)
        operands = _quantized_operands(op.lhs, op.rhs)
        if operands is None:
            return None
        return dgq.AddOp.build(
            operands=operands, properties=_activation(activation), result_types=[result_type]
        )


PARTITIONS: tuple[LegalizePartition, ...] = (LegalizeConv2d(), LegalizeLinear(), LegalizeAdd())
"""The partition patterns, in the order they are tried; `FuseReluTail` builds through them."""


@dataclass(frozen=True)
class FuseReluTail(RewritePattern):
    """`dgq.quantize(relu(conv2d | linear | add))` -> the dgq op with `fused_activation = relu`.

    relu is only supported as such a tail: anywhere else it stays illegal.
    """

    partitions: tuple[LegalizePartition, ...] = PARTITIONS

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.QuantizeOp, rewriter: PatternRewriter) -> None:
        relu = op.input.owner
        if not isinstance(relu, dgtorch.ReluOp) or not relu.result.has_one_use():
            return
        computation = relu.input.owner
        if not isinstance(computation, Operation):
            return
        for partition in self.partitions:
            built = partition.build_partition(computation, op.result.type, "relu")
            if built is not None:
                rewriter.replace(op, built)
                return


# -- partitions whose op sets the result grid -------------------------------------------


def _result_element(result_type: Attribute) -> dgq.UniformQuantizedType | None:
    if not isinstance(result_type, TensorType):
        return None
    element = result_type.element_type
    if not isinstance(element, dgq.UniformQuantizedType) or element.is_per_axis:
        return None
    return element


def _keeps_grid(op: Operation, result_type: Attribute) -> SSAValue | None:
    """The quantized input of a one-input partition whose result keeps the input's grid."""
    source = _per_tensor_source(op.operands[0])
    if source is None or _result_element(result_type) != source[1]:
        return None
    return source[0]


def _symmetric_pad(padding: DenseArrayBase) -> DenseArrayBase:
    """torch's `[ph, pw]` as dgq's `[top, bottom, left, right]`."""
    ph, pw = int_array(padding, "padding", 2)
    return _i64_array((ph, ph, pw, pw))


class LegalizeAvgPool2d(LegalizePartition):
    """`avg_pool2d` partition on one grid -> `dgq.avg_pool2d`.

    The average is rounded once, onto the grid it is quantized to; that grid
    must be the input's (dg's quantizer shares it), because dghw divides
    without rescaling. ceil_mode is the result's window count.
    """

    source = dgtorch.AvgPool2dOp

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.AvgPool2dOp)
        if (source := _keeps_grid(op, result_type)) is None:
            return None
        divisor: dict[str, Attribute] = {}
        if op.divisor_override is not None:
            divisor["divisor_override"] = op.divisor_override
        return dgq.AvgPool2dOp.build(
            operands=[source],
            properties={
                "kernel": op.kernel,
                "stride": op.stride,
                "pad": _symmetric_pad(op.padding),
                "count_include_pad": op.count_include_pad,
                **divisor,
            },
            result_types=[result_type],
        )


def _adaptive_window(op: dgtorch.AdaptiveAvgPool2dOp) -> tuple[int, int] | None:
    """The kernel (= stride) of an adaptive pool whose input extents divide evenly, else None."""
    _, _, height, width = _shape(op.input)
    out_h, out_w = int_array(op.output_size, "output_size", 2)
    if height == DYNAMIC_INDEX or width == DYNAMIC_INDEX or height % out_h or width % out_w:
        return None
    return height // out_h, width // out_w


class LowerAdaptiveAvgPool2d(LegalizePartition):
    """`adaptive_avg_pool2d` partition -> `dgq.avg_pool2d` with kernel = stride = H/oh, W/ow.

    When the output size divides the input extents, torch's adaptive windows
    are exactly these non-overlapping tiles; otherwise they overlap unevenly
    and the op stays illegal.
    """

    source = dgtorch.AdaptiveAvgPool2dOp

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.AdaptiveAvgPool2dOp)
        window = _adaptive_window(op)
        if window is None or (source := _keeps_grid(op, result_type)) is None:
            return None
        return dgq.AvgPool2dOp.build(
            operands=[source],
            properties={
                "kernel": _i64_array(window),
                "stride": _i64_array(window),
                "pad": _i64_array((0, 0, 0, 0)),
                "count_include_pad": BoolAttr.from_bool(True),
            },
            result_types=[result_type],
        )


def is_fixed_grid(element: dgq.UniformQuantizedType | None) -> bool:
    """Whether `element` is the fixed i8 grid of softmax and sigmoid (dgq's verifier's rule)."""
    return (
        element is not None
        and element.storage.width.data == 8
        and element.limits == (-128, 127)
        and element.scale == dgq.FIXED_GRID_SCALE
        and element.zero_point == dgq.FIXED_GRID_ZERO_POINT
    )


class LegalizeSoftmax(LegalizePartition):
    """`softmax` partition quantized to the fixed grid -> `dgq.softmax` (non-negative axis)."""

    source = dgtorch.SoftmaxOp

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.SoftmaxOp)
        source = _per_tensor_source(op.input)
        if source is None or not is_fixed_grid(_result_element(result_type)):
            return None
        axis = op.dim.value.data % len(_shape(op.input))
        return dgq.SoftmaxOp.build(
            operands=[source[0]],
            properties={"axis": IntegerAttr(axis, i64)},
            result_types=[result_type],
        )


class LegalizeSigmoid(LegalizePartition):
    """`sigmoid` partition quantized to the fixed grid -> `dgq.sigmoid`."""

    source = dgtorch.SigmoidOp

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.SigmoidOp)
        source = _per_tensor_source(op.input)
        if source is None or not is_fixed_grid(_result_element(result_type)):
            return None
        return dgq.SigmoidOp.build(operands=[source[0]], result_types=[result_type])


class LegalizeMulConstant(LegalizePartition):
    """`mul` of a dequantized activation by a dequantized constant -> `dgq.mul_constant`."""

    source = dgtorch.MulOp

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.MulOp)
        if activation != "none":
            return None
        activation_source = _per_tensor_source(op.lhs)
        constant_source = _per_tensor_source(op.rhs)
        if activation_source is None or constant_source is None:
            return None
        if not _is_per_tensor_constant(op.rhs):
            return None
        return dgq.MulConstantOp.build(
            operands=[activation_source[0], constant_source[0]], result_types=[result_type]
        )


def _matmul(op: dgtorch.MatmulOp, result_type: Attribute, factor: float) -> Operation | None:
    """`dgq.matmul` of the quantized sources of `op`'s operands, scaled by `factor`."""
    lhs, rhs = _per_tensor_source(op.lhs), _per_tensor_source(op.rhs)
    if lhs is None or rhs is None or not factor > 0:
        return None
    return dgq.MatmulOp.build(
        operands=[lhs[0], rhs[0]],
        properties={"factor": FloatAttr(factor, f64)},
        result_types=[result_type],
    )


class LegalizeMatmul(LegalizePartition):
    """`matmul` of two dequantized activations -> `dgq.matmul` (factor 1)."""

    source = dgtorch.MatmulOp

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.MatmulOp)
        return _matmul(op, result_type, 1.0) if activation == "none" else None


class FoldScaleIntoMatmul(LegalizePartition):
    """`mul_scalar(matmul(a, b), s)` quantized -> `dgq.matmul {factor = s}`.

    The score scale of attention costs nothing on the device: it becomes part
    of the matmul's requantization multiplier.
    """

    source = dgtorch.MulScalarOp

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.MulScalarOp)
        matmul = op.input.owner
        if activation != "none" or not isinstance(matmul, dgtorch.MatmulOp):
            return None
        if not matmul.result.has_one_use():
            return None
        return _matmul(matmul, result_type, op.factor.value.data)


def _is_per_tensor_constant(value: SSAValue) -> bool:
    source = _per_tensor_source(value)
    return source is not None and isinstance(source[0].owner, dgq.ConstantOp)


# -- dg.Norm (issue 4) ------------------------------------------------------------------


def _f64_array(values: np.ndarray) -> DenseArrayBase:
    return DenseArrayBase(f64, BytesAttr(np.ascontiguousarray(values, dtype="<f8").tobytes()))


class LegalizeNorm(LegalizePartition):
    """`norm` partition (a `dg.Norm` body) -> `dgq.norm` with its float weight and bias
    as per-channel `gamma` / `beta` (dghw folds them into its requantization)."""

    source = dgtorch.NormOp

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.NormOp)
        source = _per_tensor_source(op.input)
        gamma = _float_constant(op.weight)
        if activation != "none" or source is None or gamma is None:
            return None
        beta = np.zeros_like(gamma) if op.bias is None else _float_constant(op.bias)
        if beta is None:
            return None
        return dgq.NormOp.build(
            operands=[source[0]],
            properties={
                "kind": op.kind,
                "eps": FloatAttr(op.eps.value.data, f64),
                "gamma": _f64_array(gamma.reshape(-1)),
                "beta": _f64_array(beta.reshape(-1)),
            },
            result_types=[result_type],
        )


GRID_RULE_PARTITIONS: tuple[LegalizePartition, ...] = (
    LegalizeAvgPool2d(),
    LowerAdaptiveAvgPool2d(),
    LegalizeSoftmax(),
    LegalizeSigmoid(),
)
"""Partitions whose result grid follows from the op; none takes a relu tail."""


# -- ops that move stored values: op(dgq.dequantize(a)) -> dgq.dequantize(dgq.op(a)) ---


class LegalizeValueMovement(RewritePattern, ABC):
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
        rewriter.replace(op, [_at(built, op), _at(dequantize, op)])


def _same_grid_result(op: Operation, element: dgq.UniformQuantizedType) -> TensorType[Attribute]:
    return quantized_tensor(op.results[0].type, element)


class LegalizeReshape(LegalizeValueMovement):
    """`flatten`/`reshape` of `dgq.dequantize(a)` -> `dgq.dequantize(dgq.reshape(a))`."""

    source = (dgtorch.FlattenOp, dgtorch.ReshapeOp)

    def build(self, op: Operation, rewriter: PatternRewriter) -> Operation | None:
        assert isinstance(op, dgtorch.FlattenOp | dgtorch.ReshapeOp)
        if (source := _per_tensor_source(op.input)) is None:
            return None
        return dgq.ReshapeOp.build(
            operands=[source[0]], result_types=[_same_grid_result(op, source[1])]
        )


def _is_channels_last_flatten(op: dgtorch.FlattenOp | dgtorch.ReshapeOp) -> bool:
    """Whether `op` merges axes 1..3 of a rank-4 value into one (result [N, H*W*C])."""
    shape, result = _shape(op.input), _shape(op.result)
    if len(shape) != 4 or len(result) != 2:
        return False
    if isinstance(op, dgtorch.FlattenOp):
        return op.start_dim.value.data % 4 == 1 and op.end_dim.value.data % 4 == 3
    return static_numel(shape[1:]) == result[1]


def _is_channels_last_permute(op: Operation | None) -> bool:
    """Whether `op` is `permute(x, [0, 2, 3, 1])`, the NCHW -> NHWC step of `dg.Flatten`."""
    if not isinstance(op, dgtorch.PermuteOp):
        return False
    return tuple(d % 4 for d in int_array(op.dims, "dims")) == (0, 2, 3, 1)


class LegalizeChannelsLastFlatten(LegalizeValueMovement):
    """`flatten(permute(dgq.dequantize(a), [0, 2, 3, 1]))` -> `dgq.flatten_channels_last(a)`.

    This is `dg.Flatten`: features in H, W, C order, which is how an NHWC
    device holds the map, so it lowers to a plain reshape.
    """

    source = (dgtorch.FlattenOp, dgtorch.ReshapeOp)

    def build(self, op: Operation, rewriter: PatternRewriter) -> Operation | None:
        assert isinstance(op, dgtorch.FlattenOp | dgtorch.ReshapeOp)
        permute = op.input.owner
        if not _is_channels_last_permute(permute) or not _is_channels_last_flatten(op):
            return None
        assert isinstance(permute, dgtorch.PermuteOp)
        if (source := _per_tensor_source(permute.input)) is None:
            return None
        return dgq.FlattenChannelsLastOp.build(
            operands=[source[0]], result_types=[_same_grid_result(op, source[1])]
        )


def _max_pool_problem(op: dgtorch.MaxPool2dOp) -> str | None:
    """Why a max pool cannot be lowered (padding in any form, dilation), or None."""
    padding = int_array(op.padding, "padding", 2)
    if any(padding):
        return (
            f"padding {list(padding)} is not supported: max_pool2d does not support padding; "
            "use padding=0"
        )
    dilation = int_array(op.dilation, "dilation", 2)
    if dilation != (1, 1):
        return f"dilation {list(dilation)} is not supported: dilation must be 1"
    kernel, stride = int_array(op.kernel, "kernel", 2), int_array(op.stride, "stride", 2)
    _, _, *extents = _shape(op.input)
    _, _, *windows = _shape(op.result)
    for size, count, k, s in zip(extents, windows, kernel, stride, strict=True):
        if size != DYNAMIC_INDEX and count != window_counts(size, k, s, 0, 0)[0]:
            return (
                "ceil_mode=True makes the last window read past the input edge, which is "
                "padding: max_pool2d does not support padding; use ceil_mode=False"
            )
    return None


class LegalizeMaxPool2d(LegalizeValueMovement):
    """`max_pool2d` of `dgq.dequantize(a)` -> `dgq.max_pool2d(a)`, without padding.

    Padding, a dilated window and a ceil-mode window reaching past the edge
    (padding as well) stay illegal.
    """

    source = dgtorch.MaxPool2dOp

    def build(self, op: Operation, rewriter: PatternRewriter) -> Operation | None:
        assert isinstance(op, dgtorch.MaxPool2dOp)
        if _max_pool_problem(op) is not None or (source := _per_tensor_source(op.input)) is None:
            return None
        return dgq.MaxPool2dOp.build(
            operands=[source[0]],
            properties={"kernel": op.kernel, "stride": op.stride, "pad": _i64_array((0,) * 4)},
            result_types=[_same_grid_result(op, source[1])],
        )


class LegalizeResizeNearest(LegalizeValueMovement):
    """`upsample_nearest2d` of `dgq.dequantize(a)` -> `dgq.resize_nearest(a)`, same mode."""

    source = dgtorch.UpsampleNearest2dOp

    def build(self, op: Operation, rewriter: PatternRewriter) -> Operation | None:
        assert isinstance(op, dgtorch.UpsampleNearest2dOp)
        if (source := _per_tensor_source(op.input)) is None:
            return None
        return dgq.ResizeNearestOp.build(
            operands=[source[0]],
            properties={"mode": op.mode},
            result_types=[_same_grid_result(op, source[1])],
        )


class LegalizeTranspose(LegalizeValueMovement):
    """`transpose` of `dgq.dequantize(a)` -> `dgq.transpose(a)` with the swap as a permutation."""

    source = dgtorch.TransposeOp

    def build(self, op: Operation, rewriter: PatternRewriter) -> Operation | None:
        assert isinstance(op, dgtorch.TransposeOp)
        if (source := _per_tensor_source(op.input)) is None:
            return None
        rank = len(_shape(op.input))
        a, b = (axis.value.data % rank for axis in (op.dim0, op.dim1))
        perm = list(range(rank))
        perm[a], perm[b] = b, a
        return dgq.TransposeOp.build(
            operands=[source[0]],
            properties={"perm": _i64_array(perm)},
            result_types=[_same_grid_result(op, source[1])],
        )


def _slice_problem(op: dgtorch.SliceOp) -> str | None:
    if op.step.value.data != 1:
        return f"slice step {op.step.value.data} is not supported: the step must be 1"
    if dgq.value_domain(op.input) != dgq.SEQUENCE:
        return (
            "slice of a spatial feature map is not supported: dg slices sequence-domain "
            "tensors only (from a linear or matmul)"
        )
    return None


class LegalizeSlice(LegalizeValueMovement):
    """`slice` (step 1) of `dgq.dequantize(a)` -> `dgq.slice(a)`, the same range."""

    source = dgtorch.SliceOp

    def build(self, op: Operation, rewriter: PatternRewriter) -> Operation | None:
        assert isinstance(op, dgtorch.SliceOp)
        if _slice_problem(op) is not None or (source := _per_tensor_source(op.input)) is None:
            return None
        return dgq.SliceOp.build(
            operands=[source[0]],
            properties={
                "axis": IntegerAttr(op.dim.value.data % len(_shape(op.input)), i64),
                "start": op.start,
                "end": op.end,
            },
            result_types=[_same_grid_result(op, source[1])],
        )


def _pad_problem(op: dgtorch.PadOp) -> str | None:
    """Why an `F.pad` has no dgq form (dgq pads H and W of NCHW with zeros only), or None."""
    value = op.value.value.data
    if value != 0:
        return f"padding value {value} is not supported: F.pad must pad with 0"
    pad = int_array(op.pad, "pad")
    if any(p < 0 for p in pad):
        return f"negative padding {list(pad)} (cropping) is not supported"
    if len(_shape(op.input)) != 4 or any(pad[4:]):
        return "only H and W (the last two axes of an NCHW feature map) can be padded"
    return None


class LegalizePad(LegalizeValueMovement):
    """`pad` with zeros of H, W -> `dgq.pad` (torch's `[left, right, top, bottom]` becomes
    `[top, bottom, left, right]`); it must then fold into a conv2d or avg_pool2d."""

    source = dgtorch.PadOp

    def build(self, op: Operation, rewriter: PatternRewriter) -> Operation | None:
        assert isinstance(op, dgtorch.PadOp)
        if _pad_problem(op) is not None or (source := _per_tensor_source(op.input)) is None:
            return None
        left, right, top, bottom = (*int_array(op.pad, "pad"), 0, 0, 0, 0)[:4]
        return dgq.PadOp.build(
            operands=[source[0]],
            properties={"pad": _i64_array((top, bottom, left, right))},
            result_types=[_same_grid_result(op, source[1])],
        )


def _concat_grid(op: dgtorch.CatOp) -> dgq.UniformQuantizedType | None:
    """The grid to concatenate on: the inputs' shared one, else that of the one quantize after."""
    sources = [_per_tensor_source(value) for value in op.inputs]
    grids = {source[1] for source in sources if source is not None}
    if None in sources or not grids:
        return None
    if len(grids) == 1:
        return grids.pop()
    user = op.result.get_user_of_unique_use()
    return _result_element(user.result.type) if isinstance(user, dgq.QuantizeOp) else None


class LegalizeConcat(LegalizeValueMovement):
    """`cat` of dequantized values -> `dgq.concat` along the non-negative axis.

    dg's quantizer gives the inputs and the result one grid, and the device
    only copies. Inputs on other grids (hand-written IR) are requantized to
    the grid of the quantize after the cat, which is what torch computes.
    """

    source = dgtorch.CatOp

    def build(self, op: Operation, rewriter: PatternRewriter) -> Operation | None:
        assert isinstance(op, dgtorch.CatOp)
        grid = _concat_grid(op)
        if grid is None:
            return None
        inputs: list[SSAValue] = []
        for value in op.inputs:
            source = _quantized_source(value)
            assert source is not None
            if source.type != quantized_tensor(source.type, grid):
                requantize = dgq.RequantizeOp.build(
                    operands=[source], result_types=[quantized_tensor(source.type, grid)]
                )
                rewriter.insert(_at(requantize, op))
                source = requantize.result
            inputs.append(source)
        axis = op.dim.value.data % len(_shape(op.result))
        return dgq.ConcatOp.build(
            operands=[inputs],
            properties={"axis": IntegerAttr(axis, i64)},
            result_types=[_same_grid_result(op, grid)],
        )


# -- batch norm after linear ---------------------------------------------------------------


@dataclass(frozen=True)
class FoldedLinear:
    """The weight and bias of `batch_norm(linear(x, w, b))` as one linear's."""

    weight: np.ndarray
    weight_element: dgq.UniformQuantizedType
    bias: np.ndarray
    bias_element: dgq.UniformQuantizedType


def _float_constant(value: SSAValue) -> np.ndarray | None:
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


def _quantized_constant(value: SSAValue | None) -> dgq.ConstantOp | None:
    """The `dgq.constant` that `value` dequantizes, if it is one."""
    source = None if value is None else _quantized_source(value)
    owner = None if source is None else source.owner
    return owner if isinstance(owner, dgq.ConstantOp) else None


def fold_batch_norm(op: dgtorch.BatchNormOp) -> FoldedLinear | str:
    """The linear that `batch_norm(linear)` folds into, or why there is none.

    y = a * (W x + b - mean) + beta with a = gamma / sqrt(var + eps), per
    output feature c. Row c of W keeps its integers and takes the weight
    scale |a_c| * s_c, negating the integers where a_c < 0 (weights are
    symmetric); the real bias a * (b - mean) + beta is requantized to int32
    on the new bias grid, input scale * new weight scale.
    """
    linear = op.input.owner
    assert isinstance(linear, dgtorch.LinearOp)
    cannot_fold = f"cannot fold into the '{linear.name}'{where(linear)}"
    uses = linear.result.uses.get_length()
    if uses != 1:
        return (
            f"{cannot_fold}: a batch_norm folds into a linear only as its only user, but the "
            f"linear's result has {uses} uses"
        )
    if len(_shape(linear.result)) != 2:
        return (
            f"{cannot_fold}: batch_norm normalizes axis 1, the linear's output features only "
            "for a rank-2 result [batch, features]"
        )
    source, weight = _per_tensor_source(linear.input), _quantized_constant(linear.weight)
    bias = _quantized_constant(linear.bias)
    if source is None or weight is None or (linear.bias is not None and bias is None):
        return f"{cannot_fold}: its input, weight and bias must be quantized (a torchao partition)"
    gamma, beta, mean, var = (
        _float_constant(v) for v in (op.weight, op.bias, op.running_mean, op.running_var)
    )
    if gamma is None or beta is None or mean is None or var is None:
        return f"{cannot_fold}: weight, bias, running_mean and running_var must be float constants"
    factor = gamma / np.sqrt(var + op.eps.value.data)
    folded = _fold_into_weights(factor, beta, mean, source[1], weight, bias)
    return f"{cannot_fold}: {folded}" if isinstance(folded, str) else folded


def _fold_into_weights(
    factor: np.ndarray,
    beta: np.ndarray,
    mean: np.ndarray,
    input_element: dgq.UniformQuantizedType,
    weight: dgq.ConstantOp,
    bias: dgq.ConstantOp | None,
) -> FoldedLinear | str:
    element = dgq.quantized_element(weight.result.type, "weight")
    integers = dgq.constant_values(weight.value)
    channels = integers.shape[0]
    scales = np.broadcast_to(np.asarray(element.scale_values, dtype=np.float64), (channels,))
    sign = np.sign(factor).astype(np.int64)
    folded = integers.astype(np.int64) * sign[:, None]
    lo, hi = element.limits
    if folded.min(initial=0) < lo or folded.max(initial=0) > hi:
        return f"negative batch_norm factors need weights in [{-hi}, {hi}] to negate them"
    # A zero factor zeroes the row; it keeps its scale, which must stay positive.
    folded_scales = np.where(factor == 0, scales, scales * np.abs(factor))
    real_bias = np.zeros(channels)
    if bias is not None:
        bias_element = dgq.quantized_element(bias.result.type, "bias")
        bias_scales = np.asarray(bias_element.scale_values, dtype=np.float64)
        real_bias = dgq.constant_values(bias.value).astype(np.float64) * bias_scales
    bias_scales = input_element.scale * folded_scales
    folded_bias = np.rint((factor * (real_bias - mean) + beta) / bias_scales)
    if np.abs(folded_bias).max(initial=0) > np.iinfo(np.int32).max:
        return "the folded bias does not fit int32 on the grid input scale x weight scale"
    zeros = [0] * channels
    return FoldedLinear(
        folded.astype(integers.dtype),
        dgq.UniformQuantizedType(
            element.storage, folded_scales, zeros, axis=0, storage_min=lo, storage_max=hi
        ),
        folded_bias.astype(np.int32),
        dgq.UniformQuantizedType(IntegerType(32), bias_scales, zeros, axis=0),
    )


def _dequantized_parameter(
    values: np.ndarray,
    element: dgq.UniformQuantizedType,
    like: Operation,
    name: dgq.ConstantOp | None,
) -> list[Operation]:
    """`dgq.dequantize(dgq.constant)` holding `values` at the location of `like`, the
    constant named like the parameter `name` it replaces."""
    storage = IntegerType(values.dtype.itemsize * 8)
    dense = DenseIntOrFPElementsAttr(
        TensorType(storage, values.shape),
        BytesAttr(np.ascontiguousarray(values, dtype=f"<i{values.dtype.itemsize}").tobytes()),
    )
    constant = dgq.ConstantOp.build(
        properties={"value": dense}, result_types=[TensorType(element, values.shape)]
    )
    if name is not None:
        constant.result.name_hint = name.result.name_hint
    dequantize = dgq.DequantizeOp.build(
        operands=[constant.result], result_types=[TensorType(f32, values.shape)]
    )
    return [_at(constant, like), _at(dequantize, like)]


class FoldBatchNormIntoLinear(RewritePattern):
    """`batch_norm(linear(x, w, b))` -> `linear(x, w', b')` (see `fold_batch_norm`).

    The linear must have the batch norm as its only user: its own result
    would otherwise still be needed unnormalized.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgtorch.BatchNormOp, rewriter: PatternRewriter) -> None:
        linear = op.input.owner
        if not isinstance(linear, dgtorch.LinearOp):
            return
        folded = fold_batch_norm(op)
        if isinstance(folded, str):
            return
        weight = _dequantized_parameter(
            folded.weight, folded.weight_element, linear, _quantized_constant(linear.weight)
        )
        bias = _dequantized_parameter(
            folded.bias, folded.bias_element, linear, _quantized_constant(linear.bias)
        )
        new_linear = dgtorch.LinearOp.build(
            operands=[linear.input, weight[-1].results[0], bias[-1].results[0]],
            result_types=[op.result.type],
        )
        rewriter.replace(op, [*weight, *bias, _at(new_linear, linear)])


# -- requantization ------------------------------------------------------------------


class FoldDequantizeQuantize(RewritePattern):
    """`dgq.quantize(dgq.dequantize(a))` -> `a` on the same grid, else `dgq.requantize(a)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.QuantizeOp, rewriter: PatternRewriter) -> None:
        source = _quantized_source(op.input)
        if source is None:
            return
        if source.type == op.result.type:
            rewriter.replace(op, [], [source])
            return
        assert isinstance(source.type, TensorType)
        element = source.type.element_type
        if isinstance(element, dgq.UniformQuantizedType) and not element.is_per_axis:
            requantize = dgq.RequantizeOp.build(operands=[source], result_types=[op.result.type])
            rewriter.replace(op, _at(requantize, op))


# -- legality -------------------------------------------------------------------------


def _range_fits_integer_side(op: dgtorch.QuantizeOpBase) -> bool:
    """Whether [quant_min, quant_max] fits the integer operand or result of a q/dq op."""
    for value in (*op.operands, *op.results):
        if (storage := _storage_type(value.type)) is not None:
            return _range_fits(op, storage)
    return True


def _is_legal(op: Operation) -> bool:
    # A dgq.pad is only an intermediate step: it must have folded into its user.
    if isinstance(op, dgq.PadOp) or unfoldable_pad_problem(op) is not None:
        return False
    return op.dialect_name() != "dgtorch"


def _quantized_result_element(op: Operation) -> dgq.UniformQuantizedType | None:
    """The grid of the one quantize `op`'s result feeds, if it feeds exactly one."""
    user = op.results[0].get_user_of_unique_use()
    return _result_element(user.result.type) if isinstance(user, dgq.QuantizeOp) else None


def _describe_grid(element: dgq.UniformQuantizedType | None) -> str:
    if element is None:
        return "none (the result must feed exactly one quantize)"
    return f"scale {element.scale}, zero point {element.zero_point}"


def _producer(value: SSAValue) -> str:
    """What computes `value`, seen through the dequantize of an already legalized op."""
    owner = value.owner
    if isinstance(owner, dgq.DequantizeOp):
        return _producer(owner.input)
    if isinstance(owner, dgq.QuantizeOp) and isinstance(owner.input, BlockArgument):
        return "a graph input"
    return f"'{owner.name}'" if isinstance(owner, Operation) else "a graph input"


def explain_batch_norm(op: dgtorch.BatchNormOp) -> str:
    if isinstance(op.input.owner, dgtorch.LinearOp):
        folded = fold_batch_norm(op)
        return folded if isinstance(folded, str) else "no dgq equivalent"
    if isinstance(op.input.owner, dgtorch.Conv2dOp):
        return (
            "a batch_norm after a conv2d must already be folded into it: torchao folds "
            "Conv2d -> BatchNorm2d when the model is prepared (dg.prepare_qat / dg.prepare_ptq)"
        )
    return (
        f"batch_norm after {_producer(op.input)} is not supported: a batch_norm must directly "
        "follow a linear (Linear -> BatchNorm1d, folded here) or a conv2d (Conv2d -> "
        "BatchNorm2d, folded by torchao when the model is prepared)"
    )


def explain_permute(op: dgtorch.PermuteOp) -> str:
    dims = list(int_array(op.dims, "dims"))
    if _is_channels_last_permute(op):
        return (
            f"permute {dims} must be flattened right away (as dg.Flatten does): it is only "
            "supported as the NCHW -> NHWC reorder of dg.Flatten"
        )
    return (
        f"permute {dims} is not supported: the only permute accepted is the NCHW -> NHWC "
        "reorder [0, 2, 3, 1] of dg.Flatten; use dg.Flatten or torch.transpose"
    )


def _feeds_only_batch_norms(op: dgtorch.ConstantOp) -> bool:
    users = [use.operation for use in op.result.uses]
    return bool(users) and all(isinstance(user, dgtorch.BatchNormOp) for user in users)


def _feeds_only(op: dgtorch.ConstantOp, user_type: type[Operation]) -> bool:
    users = [use.operation for use in op.result.uses]
    return bool(users) and all(isinstance(user, user_type) for user in users)


def explain_illegal(op: Operation) -> str:
    """Why a dgtorch op (or an unfolded dgq.pad) is left over: the most specific reason."""
    match op:
        case dgq.PadOp() | dgq.AvgPool2dOp() if (pad := explain_leftover_pad(op)) is not None:
            return pad.message
        case dgtorch.ReluOp(input=SSAValue(owner=producer)) if any(
            isinstance(producer, p.source) for p in PARTITIONS
        ):
            assert isinstance(producer, Operation)
            return (
                f"cannot fuse into the '{producer.name}' before it, "
                "which could not be converted (see its error)"
            )
        case dgtorch.ReluOp():
            return (
                "standalone relu is not supported: relu is only supported as the fusion tail "
                "of a conv2d, linear or add whose result it alone uses"
            )
        case dgtorch.Conv2dOp() if op.groups.value.data != 1 and not _is_depthwise(op):
            return (
                f"groups = {op.groups.value.data} with {_shape(op.input)[1]} input and "
                f"{_shape(op.weight)[0]} output channels is not supported: only dense "
                "(groups = 1) or depthwise (groups = in_channels = out_channels) convolution is"
            )
        case dgtorch.Conv2dOp() if not _conv_is_supported(op):
            return (
                f"dilation {list(int_array(op.dilation, 'dilation'))} is not supported: "
                "dilation must be 1"
            )
        case dgtorch.MulScalarOp() if not isinstance(op.input.owner, dgtorch.MatmulOp):
            return (
                "a multiplication by a scalar is only supported as the score scale right after "
                "a matmul, which it folds into"
            )
        case dgtorch.MulScalarOp() if not op.factor.value.data > 0:
            return f"the score scale must be > 0, got {op.factor.value.data}"
        case dgtorch.MatmulOp() | dgtorch.MulScalarOp() if not op.results[0].has_one_use():
            return (
                "its result must feed exactly one quantize: a matmul's output must be "
                "quantized (feed a quantized op)"
            )
        case dgtorch.MulOp() if not _is_per_tensor_constant(op.rhs):
            return (
                "its second operand must be a constant tensor quantized per tensor "
                "(dequantize of a dgq.constant): the device multiplies by stored integers"
            )
        case dgtorch.MaxPool2dOp() if (problem := _max_pool_problem(op)) is not None:
            return problem
        case dgtorch.PadOp() if (problem := _pad_problem(op)) is not None:
            return problem
        case dgtorch.SliceOp() if (problem := _slice_problem(op)) is not None:
            return problem
        case dgtorch.AdaptiveAvgPool2dOp() if _adaptive_window(op) is None:
            _, _, height, width = _shape(op.input)
            out_h, out_w = int_array(op.output_size, "output_size", 2)
            return (
                f"adaptive_avg_pool2d from {height}x{width} to {out_h}x{out_w} is not "
                "supported: each input extent must be a multiple of the output size "
                f"({height} % {out_h} = {height % out_h}, {width} % {out_w} = {width % out_w}); "
                "change the input size or output_size, or use AvgPool2d"
            )
        case dgtorch.AvgPool2dOp() | dgtorch.AdaptiveAvgPool2dOp() if (
            source := _per_tensor_source(op.operands[0])
        ) is not None:
            return (
                "its result must be quantized on its input's grid (dg's quantizer shares it): "
                f"input {_describe_grid(source[1])}, "
                f"result {_describe_grid(_quantized_result_element(op))}"
            )
        case dgtorch.SoftmaxOp() | dgtorch.SigmoidOp() if (
            _per_tensor_source(op.operands[0]) is not None
        ):
            return (
                f"its result must be quantized on the fixed grid scale {dgq.FIXED_GRID_SCALE}, "
                f"zero point {dgq.FIXED_GRID_ZERO_POINT} (dg's quantizer pins it), got "
                f"{_describe_grid(_quantized_result_element(op))}"
            )
        case dgtorch.CatOp() if all(_per_tensor_source(v) is not None for v in op.inputs):
            return (
                "its inputs must share one quantization grid (dg's quantizer shares it), "
                "or its result must feed exactly one quantize"
            )
        case dgtorch.PermuteOp():
            return explain_permute(op)
        case dgtorch.BatchNormOp():
            return explain_batch_norm(op)
        case dgtorch.LinearOp() if any(
            isinstance(use.operation, dgtorch.BatchNormOp) for use in op.result.uses
        ):
            return "its result feeds a batch_norm that could not be folded into it (see its error)"
        case dgtorch.QuantizeOpBase() if not _range_fits_integer_side(op):
            return (
                f"quantization range [{op.quant_min.value.data}, {op.quant_max.value.data}] "
                "does not fit its integer type"
            )
        case dgtorch.NormOp():
            return (
                "a norm's input must be a per-tensor quantized value, its result quantized "
                "once (dg's quantizer annotates dg.Norm so), and its weight and bias float "
                "constants"
            )
        case dgtorch.ConstantOp() if _feeds_only(op, dgtorch.NormOp):
            return "a parameter of a norm that could not be legalized (see its error)"
        case dgtorch.ConstantOp() if _feeds_only_batch_norms(op):
            return "a parameter of a batch_norm that could not be folded (see its error)"
        case dgtorch.ConstantOp():
            return (
                "a constant must be an integer tensor that a dequantize consumes "
                "(a quantized parameter, as convert_pt2e folds them)"
            )
        case dgtorch.DequantizePerTensorOp():
            return (
                "its parameters differ from those its input is quantized with, "
                "or its input is not a quantized value"
            )
        case _:
            return (
                "no dgq equivalent: expected every float operand to be a dequantized value "
                "and the result to be quantized once (a torchao partition)"
            )


@dataclass(frozen=True)
class ConvertDgtorchToDgqPass(ModulePass):
    """Legalize a dgtorch module (as imported from `convert_pt2e`) into dgq."""

    name = PASS_NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    LegalizeQuantizePerTensor(),
                    LegalizeDequantizePerTensor(),
                    LegalizeQuantizedConstant(),
                    FoldBatchNormIntoLinear(),
                    *PARTITIONS,
                    FuseReluTail(),
                    *GRID_RULE_PARTITIONS,
                    LegalizeMulConstant(),
                    LegalizeNorm(),
                    LegalizeMatmul(),
                    FoldScaleIntoMatmul(),
                    LegalizeChannelsLastFlatten(),
                    LegalizeReshape(),
                    LegalizeMaxPool2d(),
                    LegalizeResizeNearest(),
                    LegalizeTranspose(),
                    LegalizeSlice(),
                    LegalizePad(),
                    LegalizeConcat(),
                    *PAD_FOLDS,
                    FoldDequantizeQuantize(),
                    *LOGIC_LEGALIZATIONS,
                ]
            )
        ).rewrite_module(op)
        check_legality_with(PASS_NAME, op, _is_legal, explain_illegal)
