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

Graph inputs keep their `dgq.quantize` and graph outputs their
`dgq.dequantize`. Any dgtorch op left afterwards (a standalone relu, a dilated
convolution, ...) fails the pass with a diagnostic at the op's location.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from dg.dialects import dgq, dgtorch
from dg.dialects.common import int_array
from dg.lowering.diagnostics import check_legality

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


def _activation(name: str) -> dict[str, Attribute]:
    return {"fused_activation": StringAttr(name)}


def _conv_is_supported(op: dgtorch.Conv2dOp) -> bool:
    return op.groups.value.data == 1 and int_array(op.dilation, "dilation") == (1, 1)


class LegalizeConv2d(LegalizePartition):
    """`conv2d` partition -> `dgq.conv2d`; torch's symmetric `[ph, pw]` padding becomes
    dgq's `[top, bottom, left, right]`. Grouped and dilated convolutions stay illegal."""

    source = dgtorch.Conv2dOp

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.Conv2dOp)
        if not _conv_is_supported(op):
            return None
        operands = _quantized_operands(op.input, op.weight, op.bias)
        if operands is None:
            return None
        ph, pw = int_array(op.padding, "padding")
        return dgq.Conv2dOp.build(
            operands=[operands[0], operands[1], operands[2]],
            properties={
                "stride": op.stride,
                "pad": DenseArrayBase.from_list(i64, (ph, ph, pw, pw)),
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


# -- shape ops and requantization ------------------------------------------------------


class LegalizeReshape(RewritePattern):
    """`flatten`/`reshape` of `dgq.dequantize(a)` -> `dgq.dequantize(dgq.reshape(a))`.

    Reshapes keep their input's grid, so they move to the quantized side
    unchanged; a following quantize then folds away (`FoldDequantizeQuantize`).
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: dgtorch.FlattenOp | dgtorch.ReshapeOp, rewriter: PatternRewriter
    ) -> None:
        source = _quantized_source(op.input)
        if source is None:
            return
        assert isinstance(source.type, TensorType)
        element = source.type.element_type
        if not isinstance(element, dgq.UniformQuantizedType) or element.is_per_axis:
            return
        reshape = dgq.ReshapeOp.build(
            operands=[source], result_types=[quantized_tensor(op.result.type, element)]
        )
        dequantize = dgq.DequantizeOp.build(
            operands=[reshape.result], result_types=[op.result.type]
        )
        rewriter.replace(op, [_at(reshape, op), _at(dequantize, op)])


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
    return op.dialect_name() != "dgtorch"


def explain_illegal(op: Operation) -> str:
    """Why a dgtorch op is left over: the most specific reason we can tell."""
    match op:
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
        case dgtorch.Conv2dOp() if op.groups.value.data != 1:
            return (
                f"groups = {op.groups.value.data} is not supported: "
                "only dense convolution (groups = 1) is"
            )
        case dgtorch.Conv2dOp() if not _conv_is_supported(op):
            return (
                f"dilation {list(int_array(op.dilation, 'dilation'))} is not supported: "
                "dilation must be 1"
            )
        case dgtorch.QuantizeOpBase() if not _range_fits_integer_side(op):
            return (
                f"quantization range [{op.quant_min.value.data}, {op.quant_max.value.data}] "
                "does not fit its integer type"
            )
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
                    *PARTITIONS,
                    FuseReluTail(),
                    LegalizeReshape(),
                    FoldDequantizeQuantize(),
                ]
            )
        ).rewrite_module(op)
        check_legality(PASS_NAME, op, _is_legal, explain_illegal)
