"""Quantization: torch's q/dq ops and quantized constants become dgq types.

`quantize_per_tensor` and `dequantize_per_tensor` become `dgq.quantize` and
`dgq.dequantize` with the parameters moved into `!dgq.uniform` types; an
integer constant feeding a dequantize becomes a `dgq.constant` of that type;
a quantize right after a dequantize folds away or becomes a requantize.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Attribute, Operation
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dgq, dgtorch
from dg.dialects.common import located
from dg.lowering.dgtorch_to_dgq.common import (
    per_channel_type,
    per_tensor_type,
    quantized_source,
    quantized_tensor,
)
from dg.lowering.diagnostics import ExplainingPattern, LoweringProblem, Reason

QUANTIZATION_RANGE = Reason(
    "quantization-range", "quantization range [{low}, {high}] does not fit its integer type"
)
DEQUANTIZE_PARAMETERS = Reason(
    "dequantize-parameters",
    "its parameters differ from those its input is quantized with, "
    "or its input is not a quantized value",
)
UNQUANTIZED_CONSTANT = Reason(
    "unquantized-constant",
    "a constant must be an integer tensor that a dequantize consumes "
    "(a quantized parameter, as convert_pt2e folds them)",
)


def _storage_type(value_type: Attribute) -> IntegerType | None:
    if isinstance(value_type, TensorType) and isinstance(value_type.element_type, IntegerType):
        return value_type.element_type
    return None


def _range_fits(op: dgtorch.QuantizeOpBase, storage: IntegerType) -> bool:
    width = storage.width.data
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    return lo <= op.quant_min.value.data and op.quant_max.value.data <= hi


def _range_problem(op: Operation) -> LoweringProblem | None:
    """For a q/dq op whose [quant_min, quant_max] does not fit its integer operand or result."""
    if not isinstance(op, dgtorch.QuantizeOpBase):
        return None
    for value in (*op.operands, *op.results):
        if (storage := _storage_type(value.type)) is not None:
            if _range_fits(op, storage):
                return None
            return QUANTIZATION_RANGE.at(
                op, low=op.quant_min.value.data, high=op.quant_max.value.data
            )
    return None


class LegalizeQuantizePerTensor(ExplainingPattern):
    """`dgtorch.quantize_per_tensor` -> `dgq.quantize` to the equivalent `!dgq.uniform` type.

    It explains every q/dq op (also those other patterns convert, and
    `quantize_per_channel`, which none does) whose range does not fit its integers.
    """

    reasons = (QUANTIZATION_RANGE,)

    def explain(self, op: Operation) -> LoweringProblem | None:
        return _range_problem(op)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgtorch.QuantizePerTensorOp, rewriter: PatternRewriter) -> None:
        storage = _storage_type(op.result.type)
        if storage is None or not _range_fits(op, storage):
            return
        result_type = quantized_tensor(op.result.type, per_tensor_type(op, storage))
        quantize = dgq.QuantizeOp.build(operands=[op.input], result_types=[result_type])
        rewriter.replace(op, located(quantize, op))


def _restates_input_parameters(op: dgtorch.DequantizePerTensorOp) -> bool:
    input_type = op.input.type
    if not isinstance(input_type, TensorType):
        return False
    element = input_type.element_type
    if not isinstance(element, dgq.UniformQuantizedType):
        return False
    return element == per_tensor_type(op, element.storage)


class LegalizeDequantizePerTensor(ExplainingPattern):
    """`dgtorch.dequantize_per_tensor` of a dgq value -> `dgq.dequantize`.

    The dequantize must restate the parameters its input is quantized with
    (torchao emits q/dq pairs with equal parameters); anything else would
    reinterpret the stored integers, which dgq cannot express.
    """

    reasons = (DEQUANTIZE_PARAMETERS,)

    def explain(self, op: Operation) -> LoweringProblem | None:
        if isinstance(op, dgtorch.DequantizePerTensorOp):
            return DEQUANTIZE_PARAMETERS.at(op)
        return None

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: dgtorch.DequantizePerTensorOp, rewriter: PatternRewriter
    ) -> None:
        if not _restates_input_parameters(op):
            return
        dequantize = dgq.DequantizeOp.build(operands=[op.input], result_types=[op.result.type])
        rewriter.replace(op, located(dequantize, op))


class LegalizeQuantizedConstant(ExplainingPattern):
    """`dgtorch.dequantize_per_*(dgtorch.constant)` -> `dgq.dequantize(dgq.constant)`.

    The integers stay as they are; the dequantize's parameters become the
    constant's element type (per axis for `dequantize_per_channel`). It
    explains any constant left over (the folds that read constants of their
    own explain theirs first).
    """

    reasons = (UNQUANTIZED_CONSTANT,)

    def explain(self, op: Operation) -> LoweringProblem | None:
        return UNQUANTIZED_CONSTANT.at(op) if isinstance(op, dgtorch.ConstantOp) else None

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
        rewriter.replace(op, [located(quantized, constant), located(dequantize, op)])


class FoldDequantizeQuantize(ExplainingPattern):
    """`dgq.quantize(dgq.dequantize(a))` -> `a` on the same grid, else `dgq.requantize(a)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.QuantizeOp, rewriter: PatternRewriter) -> None:
        source = quantized_source(op.input)
        if source is None:
            return
        if source.type == op.result.type:
            rewriter.replace(op, [], [source])
            return
        assert isinstance(source.type, TensorType)
        element = source.type.element_type
        if isinstance(element, dgq.UniformQuantizedType) and not element.is_per_axis:
            requantize = dgq.RequantizeOp.build(operands=[source], result_types=[op.result.type])
            rewriter.replace(op, located(requantize, op))
