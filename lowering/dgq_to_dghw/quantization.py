"""The quantization family: graph inputs and outputs, and requantize.

The function boundary keeps the model's own layout: arguments (the values
entering through `dgq.quantize`) become integer tensors in torch layout carrying
`{dghw.scale, dghw.zero_point}` argument attributes, and are transposed to
NHWC inside; results (leaving through `dgq.dequantize`) are transposed back and
returned as integers with the same result attributes. Quantize and dequantize
exist on the device only there.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    TensorType,
    f64,
    i32,
)
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dghw, dgq
from dg.dialects.dgq import UniformQuantizedType
from dg.lowering.dgq_to_dghw.common import (
    RESCALE_FACTOR,
    Emitter,
    device_shape,
    lowered,
    output_clamp,
    storage_tensor,
)
from dg.lowering.diagnostics import ExplainingPattern, LoweringProblem, Reason

QUANTIZE_INTERMEDIATE = Reason(
    "dghw-quantize-intermediate-value",
    "only graph inputs can be quantized: this quantizes an intermediate float value, which the "
    "device never holds",
)
QUANTIZE_SHARED_INPUT = Reason(
    "dghw-graph-input-quantized-twice", "a graph input must feed exactly one dgq.quantize"
)
QUANTIZE_NARROW_RANGE = Reason(
    "dghw-graph-input-narrow-range",
    "graph inputs must be quantized to the whole range of their storage type (the host clamps "
    "to it)",
)
DEQUANTIZE_INTERMEDIATE = Reason(
    "dghw-dequantize-intermediate-value",
    "only graph outputs can be dequantized: its result must feed func.return only",
)


def _entry_function(value: SSAValue) -> func.FuncOp | None:
    """The function whose entry-block argument `value` is, if it is one."""
    if not isinstance(value, BlockArgument):
        return None
    parent = value.block.parent_op()
    if not isinstance(parent, func.FuncOp) or value.block is not parent.body.blocks.first:
        return None
    return parent


def _uses_full_storage_range(element: UniformQuantizedType) -> bool:
    width = element.storage.width.data
    return element.limits == (-(1 << (width - 1)), (1 << (width - 1)) - 1)


def _graph_input_problem(op: dgq.QuantizeOp) -> Reason | None:
    """Why `op` is not the one quantization of a graph input that the host does, or None."""
    if _entry_function(op.input) is None:
        return QUANTIZE_INTERMEDIATE
    if not op.input.has_one_use():
        return QUANTIZE_SHARED_INPUT
    # The host clamps to the whole storage type; a narrower range would need a clamp here.
    if not _uses_full_storage_range(dgq.per_tensor_element(op.result.type, "result")):
        return QUANTIZE_NARROW_RANGE
    return None


def _with_quantization(attrs: DictionaryAttr, element: UniformQuantizedType) -> DictionaryAttr:
    return DictionaryAttr(
        {
            **attrs.data,
            dghw.SCALE_ATTR: FloatAttr(element.scale, f64),
            dghw.ZERO_POINT_ATTR: IntegerAttr(element.zero_point, i32),
        }
    )


def _set_boundary_attrs(
    function: func.FuncOp, which: str, index: int, count: int, element: UniformQuantizedType
) -> None:
    """Record the host-side quantization of argument or result `index` (`which` names the list)."""
    current = function.properties.get(which)
    attrs = list(current.data) if isinstance(current, ArrayAttr) else []
    attrs += [DictionaryAttr({})] * (count - len(attrs))
    attrs[index] = _with_quantization(attrs[index], element)
    function.properties[which] = ArrayAttr(attrs)


class LowerGraphInput(ExplainingPattern):
    """`dgq.quantize(%arg)` -> `%arg` becomes the quantized i8 tensor itself.

    The host quantizes (it knows scale and zero point from the argument
    attributes); the device transposes rank-4 inputs to NHWC.
    """

    reasons = (QUANTIZE_INTERMEDIATE, QUANTIZE_SHARED_INPUT, QUANTIZE_NARROW_RANGE)

    def explain(self, op: Operation) -> LoweringProblem | None:
        if not isinstance(op, dgq.QuantizeOp):
            return None
        reason = _graph_input_problem(op)
        return None if reason is None else reason.at(op)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.QuantizeOp, rewriter: PatternRewriter) -> None:
        element = dgq.per_tensor_element(op.result.type, "result")
        function = _entry_function(op.input)
        if function is None or _graph_input_problem(op) is not None:
            return
        assert isinstance(op.input, BlockArgument) and isinstance(op.result.type, TensorType)
        index = op.input.index
        shape = op.result.type.get_shape()
        argument = rewriter.replace_value_with_new_type(op.input, storage_tensor(element, shape))
        function.update_function_type()
        _set_boundary_attrs(function, "arg_attrs", index, len(function.args), element)
        rewriter.notify_op_modified(function)
        emitter = Emitter(op, rewriter)
        emitter.replace_source(emitter.to_device_layout(argument, len(shape)))


class LowerGraphOutput(ExplainingPattern):
    """`func.return(dgq.dequantize(%v))` -> return the i8 value, in torch layout.

    The host dequantizes with the result attributes `dghw.scale`/`dghw.zero_point`.
    A dequantize of a lowered value stays only when its result feeds more than
    `func.return`.
    """

    reasons = (DEQUANTIZE_INTERMEDIATE,)

    def explain(self, op: Operation) -> LoweringProblem | None:
        if isinstance(op, dgq.DequantizeOp) and lowered(op.input) is not None:
            return DEQUANTIZE_INTERMEDIATE.at(op)
        return None

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.DequantizeOp, rewriter: PatternRewriter) -> None:
        source = lowered(op.input)
        function = op.parent_op()
        if source is None or not isinstance(function, func.FuncOp) or not op.result.uses:
            return
        uses = list(op.result.uses)
        returns = [use for use in uses if isinstance(use.operation, func.ReturnOp)]
        if len(returns) != len(uses):
            return
        emitter = Emitter(op, rewriter)
        value = emitter.to_torch_layout(source.value, len(source.shape))
        rewriter.replace(op, [], [value])
        function.update_function_type()
        outputs = len(function.function_type.outputs)
        for use in returns:
            _set_boundary_attrs(function, "res_attrs", use.index, outputs, source.element)
        rewriter.notify_op_modified(function)


class LowerRequantize(ExplainingPattern):
    """`dgq.requantize` -> one per-tensor `dghw.rescale` from the input to the result grid."""

    reasons = (RESCALE_FACTOR,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.RequantizeOp, rewriter: PatternRewriter) -> None:
        source = lowered(op.input)
        if source is None:
            return
        result = dgq.per_tensor_element(op.result.type, "result")
        emitter = Emitter(op, rewriter)
        emitter.replace_source(
            emitter.rescale(
                source.value,
                storage_tensor(result, device_shape(source.shape)),
                source.element.scale / result.scale,
                input_zp=source.element.zero_point,
                output_zp=result.zero_point,
                clamp=output_clamp(result, "none"),
            )
        )
