"""`convert-dgq-to-dghw`: from quantized dgq ops to the dg accelerator's integer ops.

dgq says *what* each op computes on real values; dghw says *how* in integers:
feature maps become NHWC, conv weights OHWI, and every change of
quantization grid becomes an explicit `dghw.rescale` (TOSA multiplier/shift).

The lowering walks forward. Each pattern replaces one dgq op by dghw ops and
hands its result on as

    %v = builtin.unrealized_conversion_cast %dghw_value : <dghw type> to <dgq type>

so a consumer reads the dghw value (in device layout) from the cast's input
and the quantization parameters from the cast's result type. Rank-4 values
are always NHWC on the device; every other rank keeps torch's layout. Casts
that end up unused are erased; a used one means its consumer was not lowered,
which fails the pass.

The function boundary keeps the model's own layout: arguments (the values
entering through `dgq.quantize`) become i8 tensors in torch layout carrying
`{dghw.scale, dghw.zero_point}` argument attributes, and are transposed to
NHWC inside; results (leaving through `dgq.dequantize`) are transposed back and
returned as i8 with the same result attributes.

Flatten before Linear: `dgq.reshape` follows torch's row-major order over NCHW,
so on the device it becomes `transpose(NHWC -> NCHW)` + `reshape`. When that
reshape flattens C, H, W straight into a fully connected layer,
`FoldFlattenReorderIntoFullyConnected` instead permutes the weight's columns
at compile time from CHW to HWC order and drops the transpose: the device
reads the NHWC feature map as it lies in memory. `FoldTransposeOfTranspose`
likewise removes layout round trips (NHWC and straight back). `dg.Flatten`
(`dgq.flatten_channels_last`) asks for the HWC order outright: it is a plain
reshape of the NHWC map, and a Linear after it uses its weight as it is.

Ops on one shared grid (max pool, concat, resize, flatten) only move stored
integers and need no rescale; average pools divide by an integer (TOSA's
reciprocal_scale); softmax and sigmoid read tables that this lowering
computes from the input grid, onto the fixed output grid.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
    UnrealizedConversionCastOp,
    f64,
    i8,
    i32,
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

from dg.dialects import dghw, dgq
from dg.dialects.common import int_array, tensor_type
from dg.dialects.dgq import UniformQuantizedType, constant_values
from dg.dialects.fixed_point import QuantMathError, quantize_multiplier
from dg.lowering.diagnostics import check_legality_with, raise_at
from dg.lowering.pad_folding import PAD_FOLDS, explain_leftover_pad

PASS_NAME = "convert-dgq-to-dghw"

TO_NHWC = (0, 2, 3, 1)
TO_NCHW = (0, 3, 1, 2)
"""Transpose permutations between torch's and the device's rank-4 layouts."""

ADD_GRID_BITS = 20
"""`dgq.add` sums on a grid 2^20 times finer than twice its larger input scale
(TFLite's scheme): fine enough that rounding the inputs onto it costs nothing
measurable, coarse enough that two rescaled i8 values still add within int32."""


# -- values already lowered -------------------------------------------------------------


@dataclass(frozen=True)
class Lowered:
    """A dgq value that has been lowered: its dghw value and its quantization."""

    value: SSAValue
    """The dghw value, NHWC for rank 4, torch layout otherwise."""
    element: UniformQuantizedType
    shape: tuple[int, ...]
    """The torch-layout shape."""


def lowered(value: SSAValue) -> Lowered | None:
    """The lowered form of a dgq value, if its producer has been lowered already."""
    cast = value.owner
    if not isinstance(cast, UnrealizedConversionCastOp) or len(cast.inputs) != 1:
        return None
    value_type = value.type
    if not isinstance(value_type, TensorType):
        return None
    element = value_type.element_type
    if not isinstance(element, UniformQuantizedType) or element.is_per_axis:
        return None
    return Lowered(cast.inputs[0], element, value_type.get_shape())


def device_shape(shape: Sequence[int]) -> tuple[int, ...]:
    """The device-layout shape of a torch-layout shape (NCHW -> NHWC for rank 4)."""
    return tuple(shape[p] for p in TO_NHWC) if len(shape) == 4 else tuple(shape)


def device_axis(axis: int, rank: int) -> int:
    """The device axis holding torch axis `axis` (NCHW axis 1, channels, is NHWC axis 3)."""
    return TO_NCHW[axis] if rank == 4 else axis


def device_result(op: Operation) -> TensorType[IntegerType]:
    """The storage tensor, in device layout, of a dgq op's per-tensor quantized result."""
    result = op.results[0]
    assert isinstance(result.type, TensorType)
    element = dgq.per_tensor_element(result.type, "result")
    return storage_tensor(element, device_shape(result.type.get_shape()))


def integer_tensor(width: int, shape: Sequence[int]) -> TensorType[IntegerType]:
    return TensorType(IntegerType(width), shape)


def storage_tensor(element: UniformQuantizedType, shape: Sequence[int]) -> TensorType[IntegerType]:
    return TensorType(element.storage, shape)


def output_clamp(element: UniformQuantizedType, activation: str) -> tuple[int, int]:
    """The clamp of a rescale onto `element`'s grid; relu clips at the real value 0."""
    lo, hi = element.limits
    if activation == "relu":
        lo = max(lo, element.zero_point)
    return lo, hi


def _uses_full_storage_range(element: UniformQuantizedType) -> bool:
    width = element.storage.width.data
    return element.limits == (-(1 << (width - 1)), (1 << (width - 1)) - 1)


# -- emitting dghw ops -------------------------------------------------------------------


class Emitter:
    """Inserts the dghw ops that replace one dgq op, before it and at its location."""

    def __init__(self, source: Operation, rewriter: PatternRewriter):
        self.source = source
        self.rewriter = rewriter

    def emit(self, op: Operation) -> SSAValue:
        op.location = self.source.location
        self.rewriter.insert(op)
        return op.results[0]

    def constant(self, array: np.ndarray) -> SSAValue:
        """A `dghw.constant` holding `array`'s bytes (int8 or int32)."""
        width = array.dtype.itemsize * 8
        value = DenseIntOrFPElementsAttr(
            integer_tensor(width, array.shape),
            BytesAttr(np.ascontiguousarray(array, dtype=f"<i{array.dtype.itemsize}").tobytes()),
        )
        return self.emit(dghw.ConstantOp(value))

    def transpose(self, value: SSAValue, perm: Sequence[int]) -> SSAValue:
        assert isinstance(value.type, TensorType)
        shape = value.type.get_shape()
        result_type = TensorType(value.type.element_type, [shape[p] for p in perm])
        return self.emit(
            dghw.TransposeOp.build(
                operands=[value],
                properties={"perm": DenseArrayBase.from_list(i64, perm)},
                result_types=[result_type],
            )
        )

    def reshape(self, value: SSAValue, shape: Sequence[int]) -> SSAValue:
        assert isinstance(value.type, TensorType)
        result_type = TensorType(value.type.element_type, shape)
        return self.emit(dghw.ReshapeOp.build(operands=[value], result_types=[result_type]))

    def to_torch_layout(self, value: SSAValue, rank: int) -> SSAValue:
        return self.transpose(value, TO_NCHW) if rank == 4 else value

    def to_device_layout(self, value: SSAValue, rank: int) -> SSAValue:
        return self.transpose(value, TO_NHWC) if rank == 4 else value

    def rescale(
        self,
        value: SSAValue,
        result_type: Attribute,
        factors: float | np.ndarray,
        *,
        input_zp: int,
        output_zp: int,
        clamp: tuple[int, int],
    ) -> SSAValue:
        """`dghw.rescale` by real `factors` (one, or one per channel of the last axis)."""
        try:
            multiplier, shift = quantize_multiplier(np.atleast_1d(factors))
        except QuantMathError as error:
            raise_at(PASS_NAME, self.source, str(error))
        return self.emit(
            dghw.RescaleOp.build(
                operands=[value],
                properties={
                    "multiplier": _i32_array(multiplier),
                    "shift": _i32_array(shift),
                    "input_zp": IntegerAttr(input_zp, i32),
                    "output_zp": IntegerAttr(output_zp, i32),
                    "clamp_min": IntegerAttr(clamp[0], i32),
                    "clamp_max": IntegerAttr(clamp[1], i32),
                },
                result_types=[result_type],
            )
        )

    def replace_source(self, value: SSAValue) -> None:
        """Replace the dgq op by `value`, cast back to the dgq type its users expect."""
        cast = UnrealizedConversionCastOp.get([value], [self.source.results[0].type])
        cast.location = self.source.location
        self.rewriter.replace(self.source, cast)


def _i32_array(values: np.ndarray) -> DenseArrayBase:
    return DenseArrayBase(i32, BytesAttr(np.ascontiguousarray(values, dtype="<i4").tobytes()))


def _i8_array(values: np.ndarray) -> DenseArrayBase:
    return DenseArrayBase(i8, BytesAttr(np.ascontiguousarray(values, dtype="<i1").tobytes()))


# -- function boundary -------------------------------------------------------------------


def _entry_function(value: SSAValue) -> func.FuncOp | None:
    """The function whose entry-block argument `value` is, if it is one."""
    if not isinstance(value, BlockArgument):
        return None
    parent = value.block.parent_op()
    if not isinstance(parent, func.FuncOp) or value.block is not parent.body.blocks.first:
        return None
    return parent


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


class LowerGraphInput(RewritePattern):
    """`dgq.quantize(%arg)` -> `%arg` becomes the quantized i8 tensor itself.

    The host quantizes (it knows scale and zero point from the argument
    attributes); the device transposes rank-4 inputs to NHWC.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.QuantizeOp, rewriter: PatternRewriter) -> None:
        function = _entry_function(op.input)
        element = dgq.per_tensor_element(op.result.type, "result")
        if function is None or not op.input.has_one_use():
            return
        # The host clamps to the whole storage type; a narrower range would need a clamp here.
        if not _uses_full_storage_range(element):
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


class LowerGraphOutput(RewritePattern):
    """`func.return(dgq.dequantize(%v))` -> return the i8 value, in torch layout.

    The host dequantizes with the result attributes `dghw.scale`/`dghw.zero_point`.
    """

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
        for use in returns:
            _set_boundary_attrs(
                function,
                "res_attrs",
                use.index,
                len(function.function_type.outputs),
                source.element,
            )
        rewriter.notify_op_modified(function)


# -- weight ops ----------------------------------------------------------------------


def _constant(value: SSAValue | None) -> dgq.ConstantOp | None:
    return value.owner if value is not None and isinstance(value.owner, dgq.ConstantOp) else None


def _weight_scales(weight: dgq.ConstantOp, channels: int) -> np.ndarray:
    """One weight scale per output channel (a per-tensor scale is broadcast)."""
    element = dgq.quantized_element(weight.result.type, "weight")
    return np.broadcast_to(np.asarray(element.scale_values, dtype=np.float64), (channels,))


def _bias_values(bias: SSAValue | None, channels: int) -> np.ndarray | None:
    """The i32 bias, zeros when absent; None when the bias is not a constant."""
    if bias is None:
        return np.zeros(channels, dtype=np.int32)
    constant = _constant(bias)
    return None if constant is None else constant_values(constant.value)


def _weight_op_parts(
    op: dgq.Conv2dOp | dgq.LinearOp,
) -> tuple[Lowered, np.ndarray, np.ndarray, np.ndarray, UniformQuantizedType] | None:
    """Lowered input, int weights, int bias, weight scales and result quantization."""
    source = lowered(op.input)
    weight = _constant(op.weight)
    if source is None or weight is None:
        return None
    weights = constant_values(weight.value)
    channels = weights.shape[0]
    bias = _bias_values(op.bias, channels)
    if bias is None:
        return None
    result = dgq.per_tensor_element(op.result.type, "result")
    return source, weights, bias, _weight_scales(weight, channels), result


def _accumulator_rescale(
    emitter: Emitter,
    accumulator: SSAValue,
    source: Lowered,
    weight_scales: np.ndarray,
    result: UniformQuantizedType,
    activation: str,
) -> SSAValue:
    """i32 accumulators (grid input scale x weight scale[c]) -> the result's i8 grid."""
    assert isinstance(accumulator.type, TensorType)
    return emitter.rescale(
        accumulator,
        storage_tensor(result, accumulator.type.get_shape()),
        source.element.scale * weight_scales / result.scale,
        input_zp=0,
        output_zp=result.zero_point,
        clamp=output_clamp(result, activation),
    )


def _accumulate_properties(source: Lowered) -> dict[str, Attribute]:
    # dgq weights are symmetric (zero point 0), checked by its verifier.
    return {
        "input_zp": IntegerAttr(source.element.zero_point, i32),
        "weight_zp": IntegerAttr(0, i32),
    }


def _is_depthwise(op: dgq.Conv2dOp) -> bool:
    return op.groups is not None and op.groups.value.data != 1


class LowerConv2d(RewritePattern):
    """`dgq.conv2d` -> `dghw.conv2d` (NHWC, OHWI weight, i32 bias) + per-channel rescale.

    A depthwise convolution (groups = channels, OIHW weight [C, 1, kh, kw])
    becomes `dghw.depthwise_conv2d` with its weight as [kh, kw, C].
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.Conv2dOp, rewriter: PatternRewriter) -> None:
        parts = _weight_op_parts(op)
        if parts is None:
            return
        source, weights, bias, weight_scales, result = parts
        assert isinstance(op.result.type, TensorType)
        emitter = Emitter(op, rewriter)
        if _is_depthwise(op):
            conv, device_weights = dghw.DepthwiseConv2dOp, weights[:, 0].transpose(1, 2, 0)
        else:
            conv, device_weights = dghw.Conv2dOp, weights.transpose(0, 2, 3, 1)
        accumulator = emitter.emit(
            conv.build(
                operands=[
                    source.value,
                    emitter.constant(device_weights),
                    emitter.constant(bias),
                ],
                properties={"stride": op.stride, "pad": op.pad, **_accumulate_properties(source)},
                result_types=[integer_tensor(32, device_shape(op.result.type.get_shape()))],
            )
        )
        emitter.replace_source(
            _accumulator_rescale(
                emitter, accumulator, source, weight_scales, result, op.fused_activation.data
            )
        )


class LowerLinear(RewritePattern):
    """`dgq.linear` -> `dghw.fully_connected` + per-channel rescale.

    Linear acts on torch's last axis, so a rank-4 input is brought back to
    NCHW for it and the result returned to NHWC.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.LinearOp, rewriter: PatternRewriter) -> None:
        parts = _weight_op_parts(op)
        if parts is None:
            return
        source, weights, bias, weight_scales, result = parts
        assert isinstance(op.result.type, TensorType)
        shape = op.result.type.get_shape()
        emitter = Emitter(op, rewriter)
        accumulator = emitter.emit(
            dghw.FullyConnectedOp.build(
                operands=[
                    emitter.to_torch_layout(source.value, len(source.shape)),
                    emitter.constant(weights),
                    emitter.constant(bias),
                ],
                properties=_accumulate_properties(source),
                result_types=[integer_tensor(32, shape)],
            )
        )
        rescaled = _accumulator_rescale(
            emitter, accumulator, source, weight_scales, result, op.fused_activation.data
        )
        emitter.replace_source(emitter.to_device_layout(rescaled, len(shape)))


# -- activations ---------------------------------------------------------------------


class LowerAdd(RewritePattern):
    """`dgq.add` -> rescale both operands to i32 on a common fine grid, `dghw.add`, rescale.

    The common grid has scale 2 * max(lhs scale, rhs scale) / 2^20 (TFLite):
    i8 operands land on it within 2^-19 of their own step, so the only
    rounding that matters is the final one onto the output grid.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.AddOp, rewriter: PatternRewriter) -> None:
        lhs, rhs = lowered(op.lhs), lowered(op.rhs)
        if lhs is None or rhs is None:
            return
        result = dgq.per_tensor_element(op.result.type, "result")
        common_scale = 2 * max(lhs.element.scale, rhs.element.scale) / 2**ADD_GRID_BITS
        shape = device_shape(lhs.shape)
        wide = integer_tensor(32, shape)
        emitter = Emitter(op, rewriter)
        i32_min, i32_max = -(1 << 31), (1 << 31) - 1

        def to_common_grid(operand: Lowered) -> SSAValue:
            return emitter.rescale(
                operand.value,
                wide,
                operand.element.scale / common_scale,
                input_zp=operand.element.zero_point,
                output_zp=0,
                clamp=(i32_min, i32_max),
            )

        total = emitter.emit(
            dghw.AddOp.build(
                operands=[to_common_grid(lhs), to_common_grid(rhs)], result_types=[wide]
            )
        )
        emitter.replace_source(
            emitter.rescale(
                total,
                storage_tensor(result, shape),
                common_scale / result.scale,
                input_zp=0,
                output_zp=result.zero_point,
                clamp=output_clamp(result, op.fused_activation.data),
            )
        )


def device_constant_layout(values: np.ndarray, rank: int) -> np.ndarray:
    """A constant that broadcasts to a rank-`rank` torch-layout value, in device layout.

    Leading 1s give it the value's rank (numpy broadcasting aligns trailing
    axes); a rank-4 constant is then transposed to NHWC like the value.
    """
    values = values.reshape((1,) * (rank - values.ndim) + values.shape)
    return values.transpose(TO_NHWC) if rank == 4 else values


class LowerMulConstant(RewritePattern):
    """`dgq.mul_constant` -> `dghw.mul` (exact i32 product of centred integers) + rescale.

    The product of (x - x_zp) and (c - c_zp) lies on the grid scale_x * scale_c;
    one rescale takes it to the result grid.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.MulConstantOp, rewriter: PatternRewriter) -> None:
        source, constant = _lowered_i8(op.input), _constant(op.constant)
        if source is None or constant is None:
            return
        factor = dgq.per_tensor_element(constant.result.type, "constant")
        if factor.storage.width.data != 8:
            return
        result = dgq.per_tensor_element(op.result.type, "result")
        shape = device_shape(source.shape)
        emitter = Emitter(op, rewriter)
        values = device_constant_layout(constant_values(constant.value), len(shape))
        product = emitter.emit(
            dghw.MulOp.build(
                operands=[source.value, emitter.constant(values)],
                properties={
                    "input_zp": IntegerAttr(source.element.zero_point, i32),
                    "constant_zp": IntegerAttr(factor.zero_point, i32),
                },
                result_types=[integer_tensor(32, shape)],
            )
        )
        emitter.replace_source(
            emitter.rescale(
                product,
                storage_tensor(result, shape),
                source.element.scale * factor.scale / result.scale,
                input_zp=0,
                output_zp=result.zero_point,
                clamp=output_clamp(result, "none"),
            )
        )


class LowerMatmul(RewritePattern):
    """`dgq.matmul` -> `dghw.matmul` (exact i32 sums of centred products) + one rescale.

    The rescale factor is scale_lhs * scale_rhs * factor / scale_out: the score
    scale rides on the requantization multiplier. Rank-4 operands are taken
    back to torch layout around the product (matrix axes last).
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.MatmulOp, rewriter: PatternRewriter) -> None:
        lhs, rhs = _lowered_i8(op.lhs), _lowered_i8(op.rhs)
        if lhs is None or rhs is None:
            return
        result = dgq.per_tensor_element(op.result.type, "result")
        assert isinstance(op.result.type, TensorType)
        shape = op.result.type.get_shape()
        emitter = Emitter(op, rewriter)
        product = emitter.emit(
            dghw.MatmulOp.build(
                operands=[
                    emitter.to_torch_layout(lhs.value, len(lhs.shape)),
                    emitter.to_torch_layout(rhs.value, len(rhs.shape)),
                ],
                properties={
                    "lhs_zp": IntegerAttr(lhs.element.zero_point, i32),
                    "rhs_zp": IntegerAttr(rhs.element.zero_point, i32),
                },
                result_types=[integer_tensor(32, shape)],
            )
        )
        requantized = emitter.rescale(
            product,
            storage_tensor(result, shape),
            lhs.element.scale * rhs.element.scale * op.factor.value.data / result.scale,
            input_zp=0,
            output_zp=result.zero_point,
            clamp=output_clamp(result, "none"),
        )
        emitter.replace_source(emitter.to_device_layout(requantized, len(shape)))


class LowerRequantize(RewritePattern):
    """`dgq.requantize` -> one per-tensor `dghw.rescale` from the input to the result grid."""

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


class LowerReshape(RewritePattern):
    """`dgq.reshape` (torch row-major order) -> `dghw.reshape` on the torch-layout value.

    A rank-4 NHWC input is transposed back to NCHW first, so the elements are
    taken in torch's order; a rank-4 result goes to NHWC again.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.ReshapeOp, rewriter: PatternRewriter) -> None:
        source = lowered(op.input)
        if source is None:
            return
        assert isinstance(op.result.type, TensorType)
        shape = op.result.type.get_shape()
        emitter = Emitter(op, rewriter)
        torch_order = emitter.to_torch_layout(source.value, len(source.shape))
        reshaped = emitter.reshape(torch_order, shape)
        emitter.replace_source(emitter.to_device_layout(reshaped, len(shape)))


# -- pooling, tables and data movement ------------------------------------------------


class LowerMaxPool2d(RewritePattern):
    """`dgq.max_pool2d` -> `dghw.max_pool2d` on the NHWC map; one grid, so no rescale."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.MaxPool2dOp, rewriter: PatternRewriter) -> None:
        source = lowered(op.input)
        if source is None:
            return
        emitter = Emitter(op, rewriter)
        pool = dghw.MaxPool2dOp.build(
            operands=[source.value],
            properties={"kernel": op.kernel, "stride": op.stride},
            result_types=[device_result(op)],
        )
        emitter.replace_source(emitter.emit(pool))


class LowerAvgPool2d(RewritePattern):
    """`dgq.avg_pool2d` -> `dghw.avg_pool2d`: sums of x - zp, divided by TOSA's
    reciprocal_scale of each position's divisor, back onto the shared grid."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.AvgPool2dOp, rewriter: PatternRewriter) -> None:
        source = lowered(op.input)
        if source is None:
            return
        zero_point = IntegerAttr(source.element.zero_point, i32)
        divisor: dict[str, Attribute] = {}
        if op.divisor_override is not None:
            divisor["divisor_override"] = op.divisor_override
        emitter = Emitter(op, rewriter)
        pool = dghw.AvgPool2dOp.build(
            operands=[source.value],
            properties={
                "kernel": op.kernel,
                "stride": op.stride,
                "pad": op.pad,
                "count_include_pad": op.count_include_pad,
                **divisor,
                "input_zp": zero_point,
                "output_zp": zero_point,
            },
            result_types=[device_result(op)],
        )
        emitter.replace_source(emitter.emit(pool))


TABLE_INDICES = np.arange(-128, 128, dtype=np.int64)
"""Every i8 value, in the order a 256-entry dghw table is indexed (table[x + 128])."""


def _lowered_i8(value: SSAValue) -> Lowered | None:
    """`lowered(value)` when its storage is i8, the only input width a dghw table takes."""
    source = lowered(value)
    return source if source is not None and source.element.storage.width.data == 8 else None


MAX_SOFTMAX_EXP_BITS = 30


def softmax_exp_bits(axis_extent: int) -> int:
    """Fraction bits F of the exp table: as many as keep the row sum below 2^31.

    Every entry is <= 2^F, so a row of N entries sums to <= N * 2^F < 2^31 when
    F = 31 - bit_length(N); more bits make e / sum more precise (docs/dghw.md).
    """
    return min(MAX_SOFTMAX_EXP_BITS, 31 - int(axis_extent).bit_length())


def softmax_exp_table(input_scale: float, axis_extent: int) -> np.ndarray:
    """exp_table[k] = round(2^F exp(-k s_in)) for the 256 differences k = max - x."""
    k = np.arange(dghw.TABLE_LENGTH, dtype=np.float64)
    bits = softmax_exp_bits(axis_extent)
    return np.rint(np.ldexp(np.exp(-k * input_scale), bits)).astype(np.int32)


def sigmoid_table(source: UniformQuantizedType, result: UniformQuantizedType) -> np.ndarray:
    """table[x + 128] = the result-grid integer of sigmoid(real(x)), rounded as torch does."""
    real = (TABLE_INDICES - source.zero_point) * source.scale
    quantized = np.rint(1.0 / (1.0 + np.exp(-real)) / result.scale) + result.zero_point
    lo, hi = result.limits
    return np.clip(quantized, lo, hi).astype(np.int8)


class LowerSoftmax(RewritePattern):
    """`dgq.softmax` -> `dghw.softmax` along the device axis, with the exp table of the
    input grid (the zero point cancels in x - max(x))."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.SoftmaxOp, rewriter: PatternRewriter) -> None:
        source = _lowered_i8(op.input)
        if source is None:
            return
        axis = device_axis(op.axis.value.data, len(source.shape))
        emitter = Emitter(op, rewriter)
        softmax = dghw.SoftmaxOp.build(
            operands=[source.value],
            properties={
                "exp_table": _i32_array(
                    softmax_exp_table(source.element.scale, source.shape[op.axis.value.data])
                ),
                "axis": IntegerAttr(axis, i64),
            },
            result_types=[device_result(op)],
        )
        emitter.replace_source(emitter.emit(softmax))


class LowerSigmoid(RewritePattern):
    """`dgq.sigmoid` -> `dghw.table` holding sigmoid of each of the 256 input values."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.SigmoidOp, rewriter: PatternRewriter) -> None:
        source = _lowered_i8(op.input)
        if source is None:
            return
        result = dgq.per_tensor_element(op.result.type, "result")
        emitter = Emitter(op, rewriter)
        table = dghw.TableOp.build(
            operands=[source.value],
            properties={"table": _i8_array(sigmoid_table(source.element, result))},
            result_types=[device_result(op)],
        )
        emitter.replace_source(emitter.emit(table))


class LowerConcat(RewritePattern):
    """`dgq.concat` -> `dghw.concat` along the device axis; one grid, so no rescale."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.ConcatOp, rewriter: PatternRewriter) -> None:
        sources = [lowered(value) for value in op.inputs]
        if any(source is None for source in sources):
            return
        values = [source.value for source in sources if source is not None]
        rank = len(tensor_type(op.result.type, "result").get_shape())
        emitter = Emitter(op, rewriter)
        concat = dghw.ConcatOp.build(
            operands=[values],
            properties={"axis": IntegerAttr(device_axis(op.axis.value.data, rank), i64)},
            result_types=[device_result(op)],
        )
        emitter.replace_source(emitter.emit(concat))


class LowerTranspose(RewritePattern):
    """`dgq.transpose` -> `dghw.transpose` with the permutation composed with the layouts.

    A rank-4 value is NHWC on the device, so device axis i of the result is
    torch axis TO_NHWC[i], which comes from torch input axis perm[TO_NHWC[i]],
    which lies at device axis `device_axis` of it. One grid: no rescale.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.TransposeOp, rewriter: PatternRewriter) -> None:
        source = lowered(op.input)
        if source is None:
            return
        perm = int_array(op.perm, "perm")
        rank = len(perm)
        torch_axes = TO_NHWC if rank == 4 else tuple(range(rank))
        device_perm = [device_axis(perm[axis], rank) for axis in torch_axes]
        emitter = Emitter(op, rewriter)
        emitter.replace_source(emitter.transpose(source.value, device_perm))


class LowerSlice(RewritePattern):
    """`dgq.slice` -> `dghw.slice` along the device axis; one grid, so no rescale."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.SliceOp, rewriter: PatternRewriter) -> None:
        source = lowered(op.input)
        if source is None:
            return
        rank = len(source.shape)
        emitter = Emitter(op, rewriter)
        sliced = dghw.SliceOp.build(
            operands=[source.value],
            properties={
                "axis": IntegerAttr(device_axis(op.axis.value.data, rank), i64),
                "start": op.start,
                "end": op.end,
            },
            result_types=[device_result(op)],
        )
        emitter.replace_source(emitter.emit(sliced))


class LowerResizeNearest(RewritePattern):
    """`dgq.resize_nearest` -> `dghw.resize_nearest` on the NHWC map, same mode."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.ResizeNearestOp, rewriter: PatternRewriter) -> None:
        source = lowered(op.input)
        if source is None:
            return
        emitter = Emitter(op, rewriter)
        resize = dghw.ResizeNearestOp.build(
            operands=[source.value],
            properties={"mode": op.mode},
            result_types=[device_result(op)],
        )
        emitter.replace_source(emitter.emit(resize))


class LowerFlattenChannelsLast(RewritePattern):
    """`dgq.flatten_channels_last` -> `dghw.reshape` of the NHWC map as it lies in memory.

    `dg.Flatten` orders features (h, w, c), which is the device's own order:
    no transpose, and no reordering of the weights of a Linear after it.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.FlattenChannelsLastOp, rewriter: PatternRewriter) -> None:
        source = lowered(op.input)
        if source is None:
            return
        emitter = Emitter(op, rewriter)
        emitter.replace_source(emitter.reshape(source.value, device_result(op).get_shape()))


# -- device-layout optimization ------------------------------------------------------


class FoldTransposeOfTranspose(RewritePattern):
    """`transpose(transpose(x, p), q)` -> `transpose(x, p[q])`, or `x` when that is the identity.

    Layout changes at op boundaries often meet their inverse (a rank-4 graph
    input going to NHWC and straight back for a flatten); this removes the pair.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.TransposeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, dghw.TransposeOp):
            return
        inner_perm, outer_perm = int_array(inner.perm, "perm"), int_array(op.perm, "perm")
        combined = tuple(inner_perm[axis] for axis in outer_perm)
        if combined == tuple(range(len(combined))):
            rewriter.replace(op, [], [inner.input])
            return
        folded = dghw.TransposeOp.build(
            operands=[inner.input],
            properties={"perm": DenseArrayBase.from_list(i64, combined)},
            result_types=[op.result.type],
        )
        folded.location = op.location
        rewriter.replace(op, folded)


class FoldFlattenReorderIntoFullyConnected(RewritePattern):
    """`fully_connected(reshape(transpose NHWC->NCHW (x)))` -> `fully_connected(reshape(x))`.

    The reshape flattens C, H, W into the feature axis, so feature k of the
    torch order is (c, h, w) with k = (c*H + h)*W + w. Reordering the weight's
    columns to HWC order gives the same sums on the untransposed NHWC data.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.FullyConnectedOp, rewriter: PatternRewriter) -> None:
        reshape = op.input.owner
        if not isinstance(reshape, dghw.ReshapeOp) or not reshape.result.has_one_use():
            return
        transpose = reshape.input.owner
        if not isinstance(transpose, dghw.TransposeOp):
            return
        if int_array(transpose.perm, "perm") != TO_NCHW:
            return
        weight = op.weight.owner
        if not isinstance(weight, dghw.ConstantOp):
            return
        nhwc = transpose.input
        assert isinstance(nhwc.type, TensorType) and isinstance(reshape.result.type, TensorType)
        batch, height, width, channels = nhwc.type.get_shape()
        flat_shape = reshape.result.type.get_shape()
        features = height * width * channels
        if len(flat_shape) != 2 or flat_shape[1] != features:
            return
        weights = constant_values(weight.value)
        hwc_weights = (
            weights.reshape(-1, channels, height, width).transpose(0, 2, 3, 1).reshape(-1, features)
        )
        # The new ops stand for the flatten and the weight: keep their source locations.
        flat = Emitter(reshape, rewriter).reshape(nhwc, flat_shape)
        permuted = Emitter(weight, rewriter).constant(hwc_weights)
        folded = dghw.FullyConnectedOp.build(
            operands=[flat, permuted, op.bias],
            properties={"input_zp": op.input_zp, "weight_zp": op.weight_zp},
            result_types=[op.result.type],
        )
        folded.location = op.location
        rewriter.replace(op, folded)


# -- legality -------------------------------------------------------------------------


LEGAL_NON_DGHW_OPS = (ModuleOp, func.FuncOp, func.ReturnOp)


def _is_integer_tensor(value_type: Attribute) -> bool:
    return isinstance(value_type, TensorType) and isinstance(value_type.element_type, IntegerType)


def _has_integer_signature(op: Operation) -> bool:
    if not isinstance(op, func.FuncOp):
        return True
    signature = op.function_type
    return all(_is_integer_tensor(t) for t in (*signature.inputs, *signature.outputs))


def _explain_signature(op: Operation) -> str:
    assert isinstance(op, func.FuncOp)
    return (
        f"signature {op.function_type} is not integer-only: every argument must enter "
        "through one dgq.quantize and every result leave through dgq.dequantize"
    )


# -- dg.Norm (issue 4) ------------------------------------------------------------------


@dataclass(frozen=True)
class NormParameters:
    """`dghw.norm`'s integer parameters for one `dgq.norm` (docs/dghw.md)."""

    eps: int
    multiplier: np.ndarray
    """int32 per channel: round(gamma / scale_out * 2^(shift - 21)), signed."""
    bias: np.ndarray
    """int64 per channel: round(beta / scale_out * 2^shift)."""
    shift: int


class NormParameterError(ValueError):
    """A norm's eps, weight or bias that `dghw.norm`'s integers cannot hold; says why."""


def norm_parameters(
    eps: float, gamma: np.ndarray, beta: np.ndarray, input_scale: float, output_scale: float
) -> NormParameters:
    """The integer parameters of a norm with real `eps`, `gamma`, `beta` from grid
    `input_scale` to grid `output_scale` (`NormParameterError` if there are none).

    eps moves to the device's variance sum D = V * 2^20 (V = n^2 var in units
    of the input step squared); gamma and beta to the output grid with one
    shared shift, the largest that keeps |multiplier| < 2^31 and |bias| <= 2^60
    (2^61 is the verifier's bound; the margin absorbs the rounding).
    """
    n = len(gamma)
    eps_steps = eps / (input_scale * input_scale)
    device_eps = max(1, round(n * n * eps_steps * 2.0**dghw.NORM_EPS_BITS))
    if device_eps > dghw.NORM_MAX_EPS:
        limit = dghw.NORM_MAX_EPS / (n * n * 2.0**dghw.NORM_EPS_BITS)
        raise NormParameterError(
            f"eps {eps} is {eps_steps:.3g} squared input steps, more than the "
            f"device's variance sum holds for a row of {n} ({limit:.3g}); use a smaller eps"
        )
    gamma = np.asarray(gamma, dtype=np.float64) / output_scale
    beta = np.asarray(beta, dtype=np.float64) / output_scale
    g_max, b_max = float(np.abs(gamma).max(initial=0)), float(np.abs(beta).max(initial=0))
    shift = _norm_shift(g_max, b_max)
    _check_norm_precision(g_max, n)
    z_scale = 2.0 ** (shift - dghw.NORM_Z_BITS)
    return NormParameters(
        device_eps,
        np.rint(gamma * z_scale).astype(np.int32),
        np.rint(beta * 2.0**shift).astype(np.int64),
        shift,
    )


def _norm_shift(g_max: float, b_max: float) -> int:
    """The largest shift whose multiplier (gamma, up to `g_max` output steps) fits 31 bits and
    whose bias (up to `b_max` output steps) fits the verifier's bound with margin."""
    lo_shift, hi_shift = dghw.SHIFT_RANGE
    for shift in range(hi_shift, lo_shift - 1, -1):
        z_scale = 2.0 ** (shift - dghw.NORM_Z_BITS)
        if g_max * z_scale < dghw.I32_MAX and b_max * 2.0**shift <= dghw.NORM_MAX_BIAS / 2:
            return shift
    raise NormParameterError(
        f"weight (up to {g_max:.3g} output steps) or bias (up to {b_max:.3g} output steps) is "
        "too large for the device's 31-bit multiplier and 61-bit bias; a norm whose outputs "
        "are this far outside the output grid saturates: check the weight and bias"
    )


def _check_norm_precision(g_max: float, n: int) -> None:
    """Refuse a norm outside the range where docs/dghw.md proves the one-step promise.

    The normalized value reaches sqrt(n); the fixed-point rsqrt's relative error
    (about 2^-20) times `g_max * sqrt(n)` output steps must stay well below a step.
    """
    spread = g_max * math.sqrt(n)
    if spread > dghw.NORM_MAX_SPREAD:
        raise NormParameterError(
            f"weight up to {g_max:.3g} output steps spreads the normalized values (up to "
            f"sqrt({n}) = {math.sqrt(n):.3g}) over {spread:.3g} output steps, more than the "
            f"{dghw.NORM_MAX_SPREAD} for which the device's fixed-point rsqrt stays within one "
            "step of the float norm; the output grid is far finer than this norm's outputs: "
            "calibrate on data that exercises the norm, or scale its weight down"
        )


class LowerNorm(RewritePattern):
    """`dgq.norm` -> `dghw.norm`: eps, gamma and beta moved onto the integer grids."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.NormOp, rewriter: PatternRewriter) -> None:
        source = _lowered_i8(op.input)
        if source is None:
            return
        result = dgq.per_tensor_element(op.result.type, "result")
        try:
            parameters = norm_parameters(
                op.eps.value.data,
                np.asarray(op.gamma.get_values(), dtype=np.float64),
                np.asarray(op.beta.get_values(), dtype=np.float64),
                source.element.scale,
                result.scale,
            )
        except NormParameterError as error:
            raise_at(PASS_NAME, op, str(error))
        emitter = Emitter(op, rewriter)
        norm = dghw.NormOp.build(
            operands=[source.value],
            properties={
                "kind": op.kind,
                "input_zp": IntegerAttr(source.element.zero_point, i32),
                "output_zp": IntegerAttr(result.zero_point, i32),
                "eps": IntegerAttr(parameters.eps, i64),
                "multiplier": _i32_array(parameters.multiplier),
                "bias": DenseArrayBase(
                    i64, BytesAttr(np.ascontiguousarray(parameters.bias, dtype="<i8").tobytes())
                ),
                "shift": IntegerAttr(parameters.shift, i32),
            },
            result_types=[device_result(op)],
        )
        emitter.replace_source(emitter.emit(norm))


def _is_legal(op: Operation) -> bool:
    if isinstance(op, UnrealizedConversionCastOp):
        # A cast left in use stands for an unconverted consumer; that consumer is reported,
        # unless it is legal itself (then the dgq value escapes into it).
        return all(not _is_legal(use.operation) for use in op.results[0].uses)
    return op.dialect_name() == "dghw" or isinstance(op, LEGAL_NON_DGHW_OPS)


def explain_illegal(op: Operation) -> str:
    """Why a dgq op (or another op dghw does not have) is left over after the lowering."""
    match op:
        case dgq.PadOp() | dgq.AvgPool2dOp() if (pad := explain_leftover_pad(op)) is not None:
            return pad.message
        case dgq.SoftmaxOp() | dgq.SigmoidOp() if (
            lowered(op.input) is not None and _lowered_i8(op.input) is None
        ):
            return "its input must be an i8 tensor: the device computes it through 256-entry tables"
        case dgq.MulConstantOp() if lowered(op.input) is not None:
            return (
                "input and constant must be i8 and the constant a dgq.constant: the device "
                "multiplies stored i8 integers"
            )
        case UnrealizedConversionCastOp():
            users = ", ".join(sorted({f"'{use.operation.name}'" for use in op.results[0].uses}))
            return f"a quantized dgq value reaches {users}, which cannot take it"
        case dgq.QuantizeOp() if _entry_function(op.input) is None:
            return (
                "only graph inputs can be quantized: this quantizes an intermediate float "
                "value, which the device never holds"
            )
        case dgq.QuantizeOp() if not op.input.has_one_use():
            return "a graph input must feed exactly one dgq.quantize"
        case dgq.QuantizeOp():
            return (
                "graph inputs must be quantized to the whole range of their storage type "
                "(the host clamps to it)"
            )
        case dgq.DequantizeOp() if lowered(op.input) is not None:
            return "only graph outputs can be dequantized: its result must feed func.return only"
        case dgq.Conv2dOp() | dgq.LinearOp() if _constant(op.weight) is None or (
            op.bias is not None and _constant(op.bias) is None
        ):
            return "weight and bias must be dgq.constant values"
    for index, operand in enumerate(op.operands):
        if lowered(operand) is None and not isinstance(operand.owner, dgq.ConstantOp):
            producer = operand.owner.name if isinstance(operand.owner, Operation) else "an argument"
            return f"operand #{index} comes from {producer}, which was not lowered"
    return "has no dghw lowering"


@dataclass(frozen=True)
class ConvertDgqToDghwPass(ModulePass):
    """Lower a dgq module to dghw: integer-only, NHWC, explicit rescales."""

    name = PASS_NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    LowerGraphInput(),
                    LowerGraphOutput(),
                    LowerConv2d(),
                    LowerLinear(),
                    LowerAdd(),
                    LowerMulConstant(),
                    LowerMatmul(),
                    LowerRequantize(),
                    LowerReshape(),
                    *PAD_FOLDS,
                    LowerMaxPool2d(),
                    LowerAvgPool2d(),
                    LowerSoftmax(),
                    LowerSigmoid(),
                    LowerConcat(),
                    LowerResizeNearest(),
                    LowerTranspose(),
                    LowerSlice(),
                    LowerNorm(),
                    LowerFlattenChannelsLast(),
                    FoldTransposeOfTranspose(),
                    FoldFlattenReorderIntoFullyConnected(),
                ]
            )
        ).rewrite_module(op)
        check_legality_with(PASS_NAME, op, _is_legal, explain_illegal)
        # Only now: an op left over usually leaves a float in the signature as well.
        check_legality_with(PASS_NAME, op, _has_integer_signature, _explain_signature)
