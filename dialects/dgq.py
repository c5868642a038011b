"""The `dgq` dialect: quantized tensors with PyTorch layout.

The quantization parameters of a value live in its element type,
`!dgq.uniform`, spelled like MLIR's `quant.uniform`:

    tensor<1x8x8x8x!dgq.uniform<i8:f32, 0.0195:12>>             per tensor
    tensor<8x3x3x3x!dgq.uniform<i8<-127:127>:f32:0, {0.01,0.02}>>  per axis 0

A stored integer q stands for the real value (q - zero_point) * scale.
Ops compute in real arithmetic on those values and round the result to the
result type's grid; `dghw` later fixes the exact integer algorithm. Layout is
torch's: NCHW feature maps, OIHW conv weights, `[out, in]` Linear weights.
Fused activations are the `fused_activation` property of the op they fuse into.

Tensor domains. A tensor is either a *spatial* feature map (NCHW, from a
conv, a pool, a resize or a pad; HWC on the device) or a *sequence-domain*
tensor ([B, S, D] and the like, from a Linear, a matmul or a flatten). The
domain is not stored in a side table, nor in the type (which would make two
otherwise identical grids differ): it is a function of the IR,
`value_domain(value)`, that any verifier can call. It follows the value's
producers: `SPATIAL_PRODUCERS` (dgq and dgtorch alike) make spatial maps,
`SEQUENCE_PRODUCERS` sequence tensors, a reshape keeps a spatial map spatial
only while it stays rank 4, every other op inherits the domain of its first
operand, and a value with no producer (a graph input, a constant) is spatial
exactly when it is rank 4, torch's NCHW convention. Verifiers use it for the
spec's domain rules: `dgq.slice` accepts sequence-domain tensors only. The
importer applies the same function to the dgtorch values it builds, so the
user hears the rule at their source line, before any lowering.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    AnyFloat,
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float64Type,
    FloatAttr,
    FloatData,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    f32,
)
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dg.dialects import dgtorch
from dg.dialects.common import (
    TRANSPOSE_FEATURE_RANKS,
    check_avg_divisor,
    check_concat_shapes,
    check_constant_broadcast,
    check_feature_rank,
    check_matmul_shapes,
    check_non_negative,
    check_norm,
    check_not_batch_axis,
    check_positive,
    check_resize,
    check_same_batch,
    check_same_item_size,
    check_shape,
    check_slice_shape,
    check_transpose_perm,
    check_window_extents,
    conv_output_extent,
    int_array,
    rank_of,
    tensor_type,
)

PER_TENSOR = -1
"""`axis` of a per-tensor quantized type."""

ACTIVATIONS = ("none", "relu")
"""Values of the `fused_activation` property."""

FIXED_GRID_SCALE = 1.0 / 256
FIXED_GRID_ZERO_POINT = -128
"""The fixed i8 result grid of softmax and sigmoid: [0, 1) in steps of 1/256.

The quantizer pins the same grid (`FixedQParamsQuantizationSpec`); 1/256 is a
power of two, exact in every float format, so it is compared exactly.
"""

BIAS_SCALE_RTOL = 1e-5
"""Relative tolerance when checking bias scale = input scale * weight scale.

torchao derives the bias scale in float32, so it matches the f64 product only
to float32 precision.
"""


def _format_float(value: float) -> str:
    text = repr(float(value))
    if "e" in text and "." not in text.split("e")[0]:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}.0e{exponent}"
    return text


@irdl_attr_definition
class UniformQuantizedType(ParametrizedAttribute, TypeAttribute):
    """A uniform (affine) quantized element type.

    `storage` is the integer type of the stored values, restricted to
    [`storage_min`, `storage_max`]; `expressed` is the float type they stand
    for. `axis` is -1 for one (scale, zero point) pair, or the axis along which
    `scales`/`zero_points` vary.
    """

    name = "dgq.uniform"

    storage: IntegerType
    storage_min: IntAttr
    storage_max: IntAttr
    expressed: AnyFloat
    axis: IntAttr
    scales: ArrayAttr[FloatData]
    zero_points: ArrayAttr[IntAttr]

    def __init__(
        self,
        storage: IntegerType,
        scales: Sequence[float],
        zero_points: Sequence[int],
        *,
        axis: int = PER_TENSOR,
        storage_min: int | None = None,
        storage_max: int | None = None,
        expressed: AnyFloat = f32,
    ):
        lo, hi = _storage_limits(storage)
        super().__init__(
            storage,
            IntAttr(lo if storage_min is None else storage_min),
            IntAttr(hi if storage_max is None else storage_max),
            expressed,
            IntAttr(axis),
            ArrayAttr(FloatData(float(s)) for s in scales),
            ArrayAttr(IntAttr(int(z)) for z in zero_points),
        )

    # -- accessors ---------------------------------------------------------
    @property
    def is_per_axis(self) -> bool:
        return self.axis.data != PER_TENSOR

    @property
    def scale_values(self) -> tuple[float, ...]:
        return tuple(s.data for s in self.scales.data)

    @property
    def zero_point_values(self) -> tuple[int, ...]:
        return tuple(z.data for z in self.zero_points.data)

    @property
    def scale(self) -> float:
        """The scale of a per-tensor type."""
        assert not self.is_per_axis, "per-axis type has no single scale"
        return self.scales.data[0].data

    @property
    def zero_point(self) -> int:
        """The zero point of a per-tensor type."""
        assert not self.is_per_axis, "per-axis type has no single zero point"
        return self.zero_points.data[0].data

    @property
    def limits(self) -> tuple[int, int]:
        return self.storage_min.data, self.storage_max.data

    # -- syntax ------------------------------------------------------------
    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        start = parser.pos
        with parser.in_angle_brackets():
            type_start = parser.pos
            storage = parser.parse_type()
            if not isinstance(storage, IntegerType):
                parser.raise_error("storage type must be an integer type", type_start, parser.pos)
            lo, hi = _storage_limits(storage)
            if parser.parse_optional_punctuation("<"):
                lo = parser.parse_integer()
                parser.parse_punctuation(":")
                hi = parser.parse_integer()
                parser.parse_punctuation(">")
            parser.parse_punctuation(":")
            type_start = parser.pos
            expressed = parser.parse_type()
            if not isinstance(expressed, AnyFloat):
                parser.raise_error("expressed type must be a float type", type_start, parser.pos)
            axis = PER_TENSOR
            if parser.parse_optional_punctuation(":"):
                axis = parser.parse_integer(allow_negative=False)
            parser.parse_punctuation(",")
            if axis == PER_TENSOR:
                params = [_parse_scale_zp(parser)]
            else:
                params = parser.parse_comma_separated_list(
                    parser.Delimiter.BRACES, lambda: _parse_scale_zp(parser)
                )
        parameters: list[Attribute] = [
            storage,
            IntAttr(lo),
            IntAttr(hi),
            expressed,
            IntAttr(axis),
            ArrayAttr(FloatData(s) for s, _ in params),
            ArrayAttr(IntAttr(z) for _, z in params),
        ]
        # Verify while the parser can still point at the offending text: a
        # VerifyException raised later, when the type is built, has no location.
        try:
            cls.new(parameters)
        except VerifyException as error:
            parser.raise_error(str(error), start, parser.pos)
        return parameters

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.storage)
            if self.limits != _storage_limits(self.storage):
                printer.print_string(f"<{self.storage_min.data}:{self.storage_max.data}>")
            printer.print_string(":")
            printer.print_attribute(self.expressed)
            params = [
                _format_float(s) + (f":{z}" if z else "")
                for s, z in zip(self.scale_values, self.zero_point_values, strict=True)
            ]
            if self.is_per_axis:
                printer.print_string(f":{self.axis.data}, {{{','.join(params)}}}")
            else:
                printer.print_string(f", {params[0]}")

    def verify(self) -> None:
        lo, hi = self.limits
        type_lo, type_hi = _storage_limits(self.storage)
        if not type_lo <= lo < hi <= type_hi:
            raise VerifyException(f"storage range [{lo}, {hi}] does not fit in {self.storage}")
        if not self.scales.data:
            raise VerifyException("expected at least one scale")
        if len(self.scales.data) != len(self.zero_points.data):
            raise VerifyException("expected one zero point per scale")
        if not self.is_per_axis and len(self.scales.data) != 1:
            raise VerifyException("a per-tensor type has exactly one scale")
        if any(not s > 0 for s in self.scale_values):
            raise VerifyException("scales must be positive")
        if any(not lo <= z <= hi for z in self.zero_point_values):
            raise VerifyException(f"zero points must lie in the storage range [{lo}, {hi}]")


def _storage_limits(storage: IntegerType) -> tuple[int, int]:
    width = storage.width.data
    return -(1 << (width - 1)), (1 << (width - 1)) - 1


def _parse_scale_zp(parser: AttrParser) -> tuple[float, int]:
    scale = parser.parse_float()
    zero_point = 0
    if parser.parse_optional_punctuation(":"):
        zero_point = parser.parse_integer()
    return scale, zero_point


def quantized_element(value_type: Attribute, what: str) -> UniformQuantizedType:
    """The `!dgq.uniform` element type of a tensor type, or a VerifyException."""
    t = tensor_type(value_type, what)
    if not isinstance(t.element_type, UniformQuantizedType):
        raise VerifyException(f"{what} must be a quantized tensor, got {value_type}")
    return t.element_type


def per_tensor_element(value_type: Attribute, what: str) -> UniformQuantizedType:
    q = quantized_element(value_type, what)
    if q.is_per_axis:
        raise VerifyException(f"{what} must be quantized per tensor")
    return q


def check_shared_grid(op_name: str, values: Sequence[tuple[str, SSAValue]]) -> None:
    """All `values` are quantized per tensor on one grid (no rescale happens in the op)."""
    grids = [(what, per_tensor_element(value.type, what)) for what, value in values]
    first_what, first = grids[0]
    for what, q in grids[1:]:
        if q != first:
            raise VerifyException(
                f"{op_name} must keep the quantization grid: {what} is {q}, {first_what} is {first}"
            )


def _check_activation(attr: StringAttr) -> None:
    if attr.data not in ACTIVATIONS:
        raise VerifyException(
            f"fused_activation must be one of {', '.join(ACTIVATIONS)}, got '{attr.data}'"
        )


class DgqOp(IRDLOperation):
    """Base of every dgq op: properties print inside the attribute dictionary."""

    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())


@irdl_op_definition
class ConstantOp(DgqOp):
    """A quantized constant: `value` holds the stored integers, the result type their meaning."""

    name = "dgq.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)
    assembly_format = "attr-dict `:` type($result)"

    def verify_(self) -> None:
        q = quantized_element(self.result.type, "result")
        element = self.value.get_element_type()
        if element != q.storage:
            raise VerifyException(
                f"value element type {element} is not the storage type {q.storage}"
            )
        result_type = cast(TensorType[Attribute], self.result.type)
        check_shape(self.value.get_shape(), result_type.get_shape(), "value")
        values = constant_values(self.value)
        lo, hi = q.limits
        if values.size and (values.min() < lo or values.max() > hi):
            raise VerifyException(f"stored values exceed the storage range [{lo}, {hi}]")
        if q.is_per_axis:
            _check_axis_params(q, result_type.get_shape(), "result")


def constant_values(value: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The stored integers of a dense attribute as a numpy array, read from its bytes."""
    element = value.get_element_type()
    assert isinstance(element, IntegerType)
    dtype = np.dtype(f"<i{max(element.width.data // 8, 1)}")
    return np.frombuffer(value.data.data, dtype=dtype).reshape(value.get_shape())


def _check_axis_params(q: UniformQuantizedType, shape: Sequence[int], what: str) -> None:
    axis = q.axis.data
    if axis >= len(shape):
        raise VerifyException(f"{what}: quantization axis {axis} is out of range")
    if shape[axis] != len(q.scales.data):
        raise VerifyException(
            f"{what}: {len(q.scales.data)} scales for an axis of extent {shape[axis]}"
        )


@irdl_op_definition
class QuantizeOp(DgqOp):
    """Float to quantized: q = clamp(round(x / scale) + zero_point). Graph inputs enter here."""

    name = "dgq.quantize"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        x = tensor_type(self.input.type, "input")
        if not isinstance(x.element_type, AnyFloat):
            raise VerifyException("input must be a float tensor")
        per_tensor_element(self.result.type, "result")
        check_shape(
            cast(TensorType[Attribute], self.result.type).get_shape(), x.get_shape(), "result"
        )


@irdl_op_definition
class DequantizeOp(DgqOp):
    """Quantized to float: x = (q - zero_point) * scale. Graph outputs leave here."""

    name = "dgq.dequantize"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        quantized_element(self.input.type, "input")
        y = tensor_type(self.result.type, "result")
        if not isinstance(y.element_type, AnyFloat):
            raise VerifyException("result must be a float tensor")
        check_shape(
            y.get_shape(), cast(TensorType[Attribute], self.input.type).get_shape(), "result"
        )


@irdl_op_definition
class RequantizeOp(DgqOp):
    """Moves a per-tensor quantized value onto another grid: round(real / scale_out) + zp_out."""

    name = "dgq.requantize"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        per_tensor_element(self.input.type, "input")
        per_tensor_element(self.result.type, "result")
        check_shape(
            cast(TensorType[Attribute], self.result.type).get_shape(),
            cast(TensorType[Attribute], self.input.type).get_shape(),
            "result",
        )


class WeightOp(DgqOp):
    """Base of ops with an i8 activation, per-output-channel i8 weights and an i32 bias.

    The accumulator is sum((x - x_zp) * w) + bias in the bias grid
    (scale = input scale * weight scale[c], zero point 0). The result rounds it
    to the result grid, then applies `fused_activation`.
    """

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    fused_activation = prop_def(StringAttr, default_value=StringAttr("none"))
    result = result_def(TensorType)

    assembly_format = (
        "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)"
    )

    def verify_weight_quantization(self) -> None:
        _check_activation(self.fused_activation)
        x = per_tensor_element(self.input.type, "input")
        per_tensor_element(self.result.type, "result")
        w = quantized_element(self.weight.type, "weight")
        if w.is_per_axis and w.axis.data != 0:
            raise VerifyException("weight must be quantized along its output-channel axis 0")
        if any(w.zero_point_values):
            raise VerifyException("weight must be quantized symmetrically (zero points 0)")
        if self.bias is None:
            return
        b = quantized_element(self.bias.type, "bias")
        if b.storage.width.data != 32 or any(b.zero_point_values):
            raise VerifyException("bias must be i32 with zero points 0")
        expected = [x.scale * s for s in w.scale_values]
        actual = b.scale_values
        if len(actual) != len(expected):
            raise VerifyException(
                f"bias has {len(actual)} scales but the weight has {len(expected)}"
            )
        for e, a in zip(expected, actual, strict=True):
            if abs(a - e) > BIAS_SCALE_RTOL * e:
                raise VerifyException(f"bias scale {a} must equal input scale * weight scale ({e})")


@irdl_op_definition
class Conv2dOp(WeightOp):
    """Quantized 2-D convolution, NCHW input, OIHW weight.

    `groups` is 1 (dense, the default) or the channel count C = in = out
    channels (depthwise: weight [C, 1, kh, kw], output channel c sees only
    input channel c). `pad` is explicit per side: [top, bottom, left, right];
    padded input elements hold the input zero point (real value 0).
    """

    name = "dgq.conv2d"
    stride = prop_def(DenseArrayBase[I64])
    pad = prop_def(DenseArrayBase[I64])
    groups = opt_prop_def(IntegerAttr[I64])

    def verify_(self) -> None:
        self.verify_weight_quantization()
        x = tensor_type(self.input.type, "input").get_shape()
        w = tensor_type(self.weight.type, "weight").get_shape()
        y = tensor_type(self.result.type, "result").get_shape()
        stride = int_array(self.stride, "stride", 2)
        pad = int_array(self.pad, "pad", 4)
        check_positive(stride, "stride")
        check_non_negative(pad, "pad")
        if len(x) != 4 or len(w) != 4:
            raise VerifyException("input and weight must be rank 4 (NCHW, OIHW)")
        groups = 1 if self.groups is None else self.groups.value.data
        if groups != 1 and not groups == x[1] == w[0]:
            raise VerifyException(
                "only dense (groups = 1) or depthwise (groups = in_channels = out_channels) "
                f"convolution is supported, got groups = {groups} with {x[1]} input and "
                f"{w[0]} output channels"
            )
        check_shape([w[1]], [x[1] // groups], "weight input-channel axis")
        if self.bias is not None:
            check_shape(tensor_type(self.bias.type, "bias").get_shape(), [w[0]], "bias")
        expected = [
            x[0],
            w[0],
            conv_output_extent(x[2], w[2], stride[0], pad[0], pad[1]),
            conv_output_extent(x[3], w[3], stride[1], pad[2], pad[3]),
        ]
        check_shape(y, expected, "result")


@irdl_op_definition
class LinearOp(WeightOp):
    """Quantized Linear over the last axis: y = x @ weight^T + bias."""

    name = "dgq.linear"

    def verify_(self) -> None:
        self.verify_weight_quantization()
        x = tensor_type(self.input.type, "input").get_shape()
        w = tensor_type(self.weight.type, "weight").get_shape()
        y = tensor_type(self.result.type, "result").get_shape()
        if len(w) != 2 or len(x) < 2:
            raise VerifyException("weight must be rank 2 and input at least rank 2")
        check_shape([x[-1]], [w[1]], "input feature axis")
        if self.bias is not None:
            check_shape(tensor_type(self.bias.type, "bias").get_shape(), [w[0]], "bias")
        check_shape(y, [*x[:-1], w[0]], "result")


@irdl_op_definition
class AddOp(DgqOp):
    """Elementwise sum of two quantized activation streams, each with its own grid.

    real(result) = round((real(lhs) + real(rhs)) / scale_out), then `fused_activation`.
    """

    name = "dgq.add"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    fused_activation = prop_def(StringAttr, default_value=StringAttr("none"))
    result = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        _check_activation(self.fused_activation)
        for what, value in (("lhs", self.lhs), ("rhs", self.rhs), ("result", self.result)):
            per_tensor_element(value.type, what)
        a = tensor_type(self.lhs.type, "lhs").get_shape()
        check_shape(tensor_type(self.rhs.type, "rhs").get_shape(), a, "rhs")
        check_shape(tensor_type(self.result.type, "result").get_shape(), a, "result")


@irdl_op_definition
class MulConstantOp(DgqOp):
    """An activation times a quantized constant tensor (RoPE's cos/sin tables).

    real(result) = round(real(input) * real(constant) / scale_out). `constant`
    broadcasts to the input's shape without enlarging it and is the same for
    every sample; each operand and the result has its own per-tensor grid.
    """

    name = "dgq.mul_constant"
    input = operand_def(TensorType)
    constant = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input `,` $constant attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        for what, value in (
            ("input", self.input),
            ("constant", self.constant),
            ("result", self.result),
        ):
            per_tensor_element(value.type, what)
        x = tensor_type(self.input.type, "input").get_shape()
        c = tensor_type(self.constant.type, "constant").get_shape()
        check_constant_broadcast(c, x, "constant")
        check_shape(tensor_type(self.result.type, "result").get_shape(), x, "result")


@irdl_op_definition
class MatmulOp(DgqOp):
    """Product of two quantized activations: lhs [..., M, K] @ rhs [..., K, N].

    real(result) = round(factor * (real(lhs) @ real(rhs)) / scale_out): `factor`
    is the attention score scale (`* s` or `/ d`) folded into the
    requantization. Feature rank 2-3, equal leading axes, per-tensor grids.
    """

    name = "dgq.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    factor = prop_def(FloatAttr, default_value=FloatAttr(1.0, 64))
    result = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        for what, value in (("lhs", self.lhs), ("rhs", self.rhs), ("result", self.result)):
            per_tensor_element(value.type, what)
        if not self.factor.value.data > 0:
            raise VerifyException(f"factor must be > 0, got {self.factor.value.data}")
        check_matmul_shapes(
            tensor_type(self.lhs.type, "lhs").get_shape(),
            tensor_type(self.rhs.type, "rhs").get_shape(),
            tensor_type(self.result.type, "result").get_shape(),
        )


class ShapeOp(DgqOp):
    """Base of ops that only rearrange elements of one per-tensor quantized value.

    The grid is unchanged: input and result element types are identical, and
    the batch axis is never changed.
    """

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        check_shared_grid(self.name, [("input", self.input), ("result", self.result)])
        x = tensor_type(self.input.type, "input").get_shape()
        y = tensor_type(self.result.type, "result").get_shape()
        check_same_batch(x, y, self.name)
        check_same_item_size(x, y)


@irdl_op_definition
class ReshapeOp(ShapeOp):
    """Row-major reshape in torch layout (covers torch.flatten, view and reshape)."""

    name = "dgq.reshape"


@irdl_op_definition
class FlattenChannelsLastOp(ShapeOp):
    """The `dg.Flatten` module: NCHW -> NHWC reorder, then flatten axes 1..3.

    result[n, (h * W + w) * C + c] = input[n, c, h, w]
    """

    name = "dgq.flatten_channels_last"

    def verify_(self) -> None:
        super().verify_()
        x = tensor_type(self.input.type, "input").get_shape()
        y = tensor_type(self.result.type, "result").get_shape()
        # With the batch and element count kept (ShapeOp), the ranks fix the shape.
        if len(x) != 4 or len(y) != 2:
            raise VerifyException("input must be rank 4 (NCHW) and result rank 2")


class SharedGridOp(DgqOp):
    """Base of one-input ops whose result has the input's grid: they only move or pick values."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        check_shared_grid(self.name, [("input", self.input), ("result", self.result)])
        x = tensor_type(self.input.type, "input").get_shape()
        y = tensor_type(self.result.type, "result").get_shape()
        if len(x) != 4 or len(y) != 4:
            raise VerifyException("input and result must be rank 4 (NCHW)")
        check_same_batch(x, y, self.name)
        self.verify_shapes(x, y)

    def verify_shapes(self, x: tuple[int, ...], y: tuple[int, ...]) -> None:
        """Op-specific shape constraints."""


class Pool2dOp(SharedGridOp):
    """Base of 2-D pooling on NCHW: `kernel`, `stride` [sy, sx], `pad` [top, bottom, left, right].

    The mode (floor or ceil) is the result's window count; both are accepted.
    """

    kernel = prop_def(DenseArrayBase[I64])
    stride = prop_def(DenseArrayBase[I64])
    pad = prop_def(DenseArrayBase[I64])

    def verify_shapes(self, x: tuple[int, ...], y: tuple[int, ...]) -> None:
        kernel = int_array(self.kernel, "kernel", 2)
        stride = int_array(self.stride, "stride", 2)
        pad = int_array(self.pad, "pad", 4)
        check_positive(kernel, "kernel")
        check_positive(stride, "stride")
        check_non_negative(pad, "pad")
        check_shape(y[:2], x[:2], "result batch and channel axes")
        check_window_extents(y[2:], x[2:], kernel, stride, pad)
        self.verify_window(kernel, pad)

    def verify_window(self, kernel: tuple[int, ...], pad: tuple[int, ...]) -> None:
        """Op-specific constraints on the window."""


@irdl_op_definition
class MaxPool2dOp(Pool2dOp):
    """Maximum over each window; input and result share one grid. No padding."""

    name = "dgq.max_pool2d"

    def verify_window(self, kernel: tuple[int, ...], pad: tuple[int, ...]) -> None:
        if any(pad):
            raise VerifyException("max_pool2d does not support padding")


@irdl_op_definition
class AvgPool2dOp(Pool2dOp):
    """Mean over each window, rounded to the (shared) input grid.

    Padding contributes real 0. The divisor is `divisor_override` when given,
    else the window area when `count_include_pad` (clipped to the padded input
    for a ceil-mode overhang, as torch does), else the number of input
    elements in the window.
    """

    name = "dgq.avg_pool2d"
    count_include_pad = prop_def(BoolAttr)
    divisor_override = opt_prop_def(IntegerAttr[I64])

    def verify_window(self, kernel: tuple[int, ...], pad: tuple[int, ...]) -> None:
        check_avg_divisor(self.divisor_override, self.count_include_pad, kernel, pad)


class FixedGridOp(DgqOp):
    """Base of ops whose result lies in [0, 1): the i8 grid FIXED_GRID_SCALE, FIXED_GRID_ZERO_POINT.

    The result type must be exactly that grid, whatever the input grid.
    """

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        per_tensor_element(self.input.type, "input")
        q = per_tensor_element(self.result.type, "result")
        if (
            q.storage.width.data != 8
            or q.limits != (-128, 127)
            or q.scale != FIXED_GRID_SCALE
            or q.zero_point != FIXED_GRID_ZERO_POINT
        ):
            raise VerifyException(
                f"{self.name} result must be on the fixed grid i8, scale {FIXED_GRID_SCALE}, "
                f"zero point {FIXED_GRID_ZERO_POINT}, got {q}"
            )
        x = tensor_type(self.input.type, "input").get_shape()
        check_shape(tensor_type(self.result.type, "result").get_shape(), x, "result")
        self.verify_axes(len(x))

    def verify_axes(self, rank: int) -> None:
        """Op-specific axis constraints."""


@irdl_op_definition
class SoftmaxOp(FixedGridOp):
    """Softmax along the non-negative `axis` (never the batch axis), on the fixed grid."""

    name = "dgq.softmax"
    axis = prop_def(IntegerAttr[I64])

    def verify_axes(self, rank: int) -> None:
        check_not_batch_axis(self.axis.value.data, rank, self.name)


@irdl_op_definition
class SigmoidOp(FixedGridOp):
    """Logistic 1 / (1 + exp(-x)), on the fixed grid."""

    name = "dgq.sigmoid"


@irdl_op_definition
class ConcatOp(DgqOp):
    """Concatenation along the non-negative `axis` (never 0, the batch axis).

    Every input and the result share one grid, so no value changes.
    """

    name = "dgq.concat"
    inputs = var_operand_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    assembly_format = "$inputs attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        inputs = [(f"input #{i}", v) for i, v in enumerate(self.inputs)]
        y = tensor_type(self.result.type, "result").get_shape()
        shapes = [tensor_type(v.type, what).get_shape() for what, v in inputs]
        check_concat_shapes(shapes, y, self.axis.value.data, self.name)
        check_shared_grid(self.name, [*inputs, ("result", self.result)])


@irdl_op_definition
class ResizeNearestOp(SharedGridOp):
    """Nearest-neighbour resize of H, W (NCHW) to the result's extents; `mode` as torch's.

    Source row of output row oy: "nearest" floor(oy * H_in / H_out);
    "nearest-exact" min(floor((oy + 0.5) * H_in / H_out), H_in - 1); the same for columns.
    """

    name = "dgq.resize_nearest"
    mode = prop_def(StringAttr)

    def verify_shapes(self, x: tuple[int, ...], y: tuple[int, ...]) -> None:
        check_resize(x, y, self.mode, (2, 3))


@irdl_op_definition
class PadOp(SharedGridOp):
    """Zero padding (the zero point, real 0) of H, W by `pad` [top, bottom, left, right].

    Only legal as the immediate input of conv2d/avg_pool2d, into which
    `FoldPadIntoConv2d` / `FoldPadIntoAvgPool2d` fold it.
    """

    name = "dgq.pad"
    pad = prop_def(DenseArrayBase[I64])

    def verify_shapes(self, x: tuple[int, ...], y: tuple[int, ...]) -> None:
        t, b, left, r = int_array(self.pad, "pad", 4)
        check_non_negative((t, b, left, r), "pad")
        grow = [0, 0, t + b, left + r]
        expected = [d if d == DYNAMIC_INDEX else d + g for d, g in zip(x, grow, strict=True)]
        check_shape(y, expected, "result")


# -- tensor domains, transpose and slice (issue 4) -----------------------------------------

SPATIAL = "spatial"
SEQUENCE = "sequence"
"""The two tensor domains (see the module docstring)."""

SPATIAL_PRODUCERS: tuple[type[Operation], ...] = (
    Conv2dOp,
    MaxPool2dOp,
    AvgPool2dOp,
    ResizeNearestOp,
    PadOp,
    dgtorch.Conv2dOp,
    dgtorch.MaxPool2dOp,
    dgtorch.AvgPool2dOp,
    dgtorch.AdaptiveAvgPool2dOp,
    dgtorch.UpsampleNearest2dOp,
    dgtorch.PadOp,
)
"""Ops whose result is a spatial feature map."""

SEQUENCE_PRODUCERS: tuple[type[Operation], ...] = (
    LinearOp,
    MatmulOp,
    dgtorch.MatmulOp,
    FlattenChannelsLastOp,
    dgtorch.LinearOp,
    dgtorch.FlattenOp,
)
"""Ops whose result is a sequence-domain tensor (a flattened map is a feature vector)."""

RESHAPES: tuple[type[Operation], ...] = (ReshapeOp, dgtorch.ReshapeOp)


def value_domain(value: SSAValue) -> str:
    """`SPATIAL` or `SEQUENCE`: the domain of `value`, derived from its producers."""
    while True:
        op = value.owner
        if not isinstance(op, Operation) or not op.operands:
            return SPATIAL if rank_of(value) == 4 else SEQUENCE
        if isinstance(op, SPATIAL_PRODUCERS):
            return SPATIAL
        if isinstance(op, SEQUENCE_PRODUCERS):
            return SEQUENCE
        if isinstance(op, RESHAPES) and rank_of(value) != 4:
            return SEQUENCE
        value = op.operands[0]


@irdl_op_definition
class TransposeOp(DgqOp):
    """Axis permutation in torch layout: result axis k is input axis perm[k].

    Feature rank 2 or 3 only (rank without the batch axis); perm[0] = 0, the
    batch axis stays. Input and result share one grid.
    """

    name = "dgq.transpose"
    input = operand_def(TensorType)
    perm = prop_def(DenseArrayBase[I64])
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        check_shared_grid(self.name, [("input", self.input), ("result", self.result)])
        x = tensor_type(self.input.type, "input").get_shape()
        y = tensor_type(self.result.type, "result").get_shape()
        check_feature_rank(len(x), TRANSPOSE_FEATURE_RANKS, self.name)
        check_transpose_perm(int_array(self.perm, "perm", len(x)), x, y, self.name)


@irdl_op_definition
class SliceOp(DgqOp):
    """Elements [start, end) along the non-batch `axis` (step 1), in torch layout.

    Sequence-domain tensors only (`value_domain`), never spatial feature maps.
    Input and result share one grid.
    """

    name = "dgq.slice"
    input = operand_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    start = prop_def(IntegerAttr[I64])
    end = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        check_shared_grid(self.name, [("input", self.input), ("result", self.result)])
        x = tensor_type(self.input.type, "input").get_shape()
        y = tensor_type(self.result.type, "result").get_shape()
        axis, start, end = (v.value.data for v in (self.axis, self.start, self.end))
        check_slice_shape(x, y, axis, start, end, self.name)
        if value_domain(self.input) != SEQUENCE:
            raise VerifyException(
                "dgq.slice is only supported on sequence-domain tensors, and its input is a "
                "spatial feature map"
            )


# -- dg.Norm (issue 4) ------------------------------------------------------------------


def _float_array(attr: DenseArrayBase[Float64Type], name: str, length: int) -> np.ndarray:
    values = np.asarray(attr.get_values(), dtype=np.float64)
    if len(values) != length:
        raise VerifyException(f"'{name}' must have {length} elements, got {len(values)}")
    if not np.isfinite(values).all():
        raise VerifyException(f"'{name}' must be finite")
    return values


@irdl_op_definition
class NormOp(DgqOp):
    """Layer norm or RMS norm over the last axis of a sequence tensor, per-tensor grids.

    layer: real(result) = round(gamma * (x - mean(x)) / sqrt(var(x) + eps) + beta)
    rms:   real(result) = round(gamma * x / sqrt(mean(x * x) + eps) + beta)      (beta = 0)

    with x = real(input) along the last axis (D elements) and `gamma`, `beta`
    one real number per element of that axis. Sequence-domain tensors only
    (`value_domain`): a spatial NCHW map's last axis is its width.
    """

    name = "dgq.norm"
    input = operand_def(TensorType)
    kind = prop_def(StringAttr)
    eps = prop_def(FloatAttr)
    gamma = prop_def(DenseArrayBase[Float64Type])
    beta = prop_def(DenseArrayBase[Float64Type])
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        for what, value in (("input", self.input), ("result", self.result)):
            per_tensor_element(value.type, what)
        if value_domain(self.input) != SEQUENCE:
            raise VerifyException(
                "dgq.norm is only supported on sequence-domain tensors, and its input is a "
                "spatial feature map"
            )
        x = tensor_type(self.input.type, "input").get_shape()
        extent = check_norm(self.kind.data, x, self.name)
        check_shape(tensor_type(self.result.type, "result").get_shape(), x, "result")
        if not self.eps.value.data > 0:
            raise VerifyException(f"eps must be > 0, got {self.eps.value.data}")
        _float_array(self.gamma, "gamma", extent)
        beta = _float_array(self.beta, "beta", extent)
        if self.kind.data == "rms" and beta.any():
            raise VerifyException("an rms norm has no bias: 'beta' must be all zeros")


Dgq = Dialect(
    "dgq",
    [
        ConstantOp,
        QuantizeOp,
        DequantizeOp,
        RequantizeOp,
        Conv2dOp,
        LinearOp,
        AddOp,
        MulConstantOp,
        MatmulOp,
        ReshapeOp,
        FlattenChannelsLastOp,
        MaxPool2dOp,
        AvgPool2dOp,
        SoftmaxOp,
        SigmoidOp,
        ConcatOp,
        ResizeNearestOp,
        PadOp,
        TransposeOp,
        SliceOp,
        NormOp,
    ],
    [UniformQuantizedType],
)
