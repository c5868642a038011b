"""The `dgtorch` dialect: float tensors with PyTorch semantics.

`dgtorch` is what the importer produces from a frozen (``convert_pt2e``)
``torch.export`` graph. Its ops mirror the ATen ops of that graph one to one,
including the ``quantize_per_tensor``/``dequantize_per_*`` ops that torchao
leaves around every quantized value. Layout is PyTorch's: feature maps are
NCHW, Linear weights are ``[out_features, in_features]``, conv weights OIHW.
Axis 0 is the batch axis and may be dynamic (``?``).
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    AnyFloat,
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Dialect
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dg.dialects.common import (
    check_avg_divisor,
    check_bitwise,
    check_bitwise_kind,
    check_compare,
    check_compare_kind,
    check_compare_result,
    check_concat_shapes,
    check_constant_broadcast,
    check_logic_operands,
    check_logic_shift,
    check_logic_tensor,
    check_matmul_shapes,
    check_non_negative,
    check_norm,
    check_positive,
    check_repeat,
    check_resize,
    check_same_batch,
    check_same_element_type,
    check_same_item_size,
    check_shape,
    check_window_extents,
    conv_output_extent,
    int_array,
    logic_width,
    normalize_axis,
    tensor_type,
)


def _float_tensor(value_type: Attribute, what: str) -> TensorType[Attribute]:
    t = tensor_type(value_type, what)
    if not isinstance(t.element_type, AnyFloat):
        raise VerifyException(f"{what} must be a float tensor, got {value_type}")
    return t


def _int_tensor(value_type: Attribute, what: str) -> TensorType[Attribute]:
    t = tensor_type(value_type, what)
    if not isinstance(t.element_type, IntegerType):
        raise VerifyException(f"{what} must be an integer tensor, got {value_type}")
    return t


class DgTorchOp(IRDLOperation):
    """Base of every dgtorch op: properties print inside the attribute dictionary."""

    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())


@irdl_op_definition
class ConstantOp(DgTorchOp):
    """A parameter or constant tensor of the torch graph (`get_attr`).

    `value` holds the raw bytes of the tensor; the result has exactly its type.
    """

    name = "dgtorch.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)

    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(properties={"value": value}, result_types=[value.get_type()])

    def verify_(self) -> None:
        if self.value.get_type() != self.result.type:
            raise VerifyException(
                f"value type {self.value.get_type()} does not match result type {self.result.type}"
            )


class QuantizeOpBase(DgTorchOp):
    """Common properties of torch's quantize/dequantize ops: the integer range."""

    quant_min = prop_def(IntegerAttr[I64])
    quant_max = prop_def(IntegerAttr[I64])

    def _verify_range(self) -> None:
        lo, hi = self.quant_min.value.data, self.quant_max.value.data
        if lo >= hi:
            raise VerifyException(f"quant_min ({lo}) must be below quant_max ({hi})")


class PerTensorOpBase(QuantizeOpBase):
    scale = prop_def(FloatAttr)
    zero_point = prop_def(IntegerAttr[I64])

    def _verify_params(self) -> None:
        self._verify_range()
        if not self.scale.value.data > 0:
            raise VerifyException(f"scale must be positive, got {self.scale.value.data}")
        zp = self.zero_point.value.data
        if not self.quant_min.value.data <= zp <= self.quant_max.value.data:
            raise VerifyException(f"zero_point {zp} lies outside [quant_min, quant_max]")


class PerChannelOpBase(QuantizeOpBase):
    scales = prop_def(DenseArrayBase)
    zero_points = prop_def(DenseArrayBase)
    axis = prop_def(IntegerAttr[I64])

    def _verify_params(self, value_type: TensorType[Attribute]) -> None:
        self._verify_range()
        axis = self.axis.value.data
        shape = value_type.get_shape()
        if not 0 <= axis < len(shape):
            raise VerifyException(f"axis {axis} is out of range for rank {len(shape)}")
        scales = self.scales.get_values()
        zps = self.zero_points.get_values()
        if len(scales) != shape[axis] or len(zps) != shape[axis]:
            raise VerifyException(
                f"expected {shape[axis]} scales and zero points along axis {axis}, "
                f"got {len(scales)} and {len(zps)}"
            )
        if any(not s > 0 for s in scales):
            raise VerifyException("scales must be positive")


@irdl_op_definition
class QuantizePerTensorOp(PerTensorOpBase):
    """`quantized_decomposed.quantize_per_tensor`: q = clamp(round_half_even(x / scale) + zp)."""

    name = "dgtorch.quantize_per_tensor"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        self._verify_params()
        src = _float_tensor(self.input.type, "input")
        dst = _int_tensor(self.result.type, "result")
        check_shape(dst.get_shape(), src.get_shape(), "result")


@irdl_op_definition
class DequantizePerTensorOp(PerTensorOpBase):
    """`quantized_decomposed.dequantize_per_tensor`: x = (q - zp) * scale."""

    name = "dgtorch.dequantize_per_tensor"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        self._verify_params()
        src = _int_tensor(self.input.type, "input")
        dst = _float_tensor(self.result.type, "result")
        check_shape(dst.get_shape(), src.get_shape(), "result")


@irdl_op_definition
class QuantizePerChannelOp(PerChannelOpBase):
    """`quantized_decomposed.quantize_per_channel`: quantize with one scale per `axis` slice."""

    name = "dgtorch.quantize_per_channel"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        src = _float_tensor(self.input.type, "input")
        self._verify_params(src)
        dst = _int_tensor(self.result.type, "result")
        check_shape(dst.get_shape(), src.get_shape(), "result")


@irdl_op_definition
class DequantizePerChannelOp(PerChannelOpBase):
    """`quantized_decomposed.dequantize_per_channel`: x = (q - zp[c]) * scale[c], c along `axis`."""

    name = "dgtorch.dequantize_per_channel"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        src = _int_tensor(self.input.type, "input")
        self._verify_params(src)
        dst = _float_tensor(self.result.type, "result")
        check_shape(dst.get_shape(), src.get_shape(), "result")


@irdl_op_definition
class Conv2dOp(DgTorchOp):
    """`aten.conv2d`: 2-D cross-correlation of an NCHW input with OIHW weights, plus bias.

    `padding` is symmetric per spatial axis ``[ph, pw]`` as in torch.
    """

    name = "dgtorch.conv2d"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    stride = prop_def(DenseArrayBase[I64])
    padding = prop_def(DenseArrayBase[I64])
    dilation = prop_def(DenseArrayBase[I64])
    groups = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)

    assembly_format = (
        "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)"
    )

    def verify_(self) -> None:
        x = _float_tensor(self.input.type, "input").get_shape()
        w = _float_tensor(self.weight.type, "weight").get_shape()
        y = _float_tensor(self.result.type, "result").get_shape()
        stride = int_array(self.stride, "stride", 2)
        padding = int_array(self.padding, "padding", 2)
        dilation = int_array(self.dilation, "dilation", 2)
        check_positive(stride, "stride")
        check_positive(dilation, "dilation")
        check_non_negative(padding, "padding")
        groups = self.groups.value.data
        if len(x) != 4 or len(w) != 4:
            raise VerifyException("input and weight must be rank 4 (NCHW, OIHW)")
        if groups < 1 or x[1] != w[1] * groups or w[0] % groups:
            raise VerifyException(
                f"groups={groups} is inconsistent with {x[1]} input and {w[0]} output channels"
            )
        if self.bias is not None:
            check_shape(_float_tensor(self.bias.type, "bias").get_shape(), [w[0]], "bias")
        expected = [x[0], w[0]] + [
            conv_output_extent(x[2 + i], dilation[i] * (w[2 + i] - 1) + 1, stride[i], p, p)
            for i, p in enumerate(padding)
        ]
        check_shape(y, expected, "result")


@irdl_op_definition
class LinearOp(DgTorchOp):
    """`aten.linear`: y = x @ weight^T + bias over the last axis of x."""

    name = "dgtorch.linear"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = (
        "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)"
    )

    def verify_(self) -> None:
        x = _float_tensor(self.input.type, "input").get_shape()
        w = _float_tensor(self.weight.type, "weight").get_shape()
        y = _float_tensor(self.result.type, "result").get_shape()
        if len(w) != 2 or not x:
            raise VerifyException("weight must be rank 2 and input at least rank 1")
        check_shape([x[-1]], [w[1]], "input feature axis")
        if self.bias is not None:
            check_shape(_float_tensor(self.bias.type, "bias").get_shape(), [w[0]], "bias")
        check_shape(y, [*x[:-1], w[0]], "result")


class ElementwiseUnaryOp(DgTorchOp):
    """Base of shape-preserving one-operand ops."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        x = _float_tensor(self.input.type, "input")
        y = _float_tensor(self.result.type, "result")
        check_shape(y.get_shape(), x.get_shape(), "result")


@irdl_op_definition
class ReluOp(ElementwiseUnaryOp):
    """`aten.relu`: max(x, 0)."""

    name = "dgtorch.relu"


@irdl_op_definition
class AddOp(DgTorchOp):
    """`aten.add.Tensor` with alpha = 1: elementwise lhs + rhs of equal shapes."""

    name = "dgtorch.add"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        a = _float_tensor(self.lhs.type, "lhs").get_shape()
        b = _float_tensor(self.rhs.type, "rhs").get_shape()
        y = _float_tensor(self.result.type, "result").get_shape()
        check_shape(b, a, "rhs")
        check_shape(y, a, "result")


@irdl_op_definition
class MulOp(DgTorchOp):
    """`aten.mul.Tensor` of an activation (`lhs`) by a constant tensor (`rhs`).

    rhs broadcasts to lhs's shape (numpy rules) without enlarging it and does
    not vary along the batch axis; the result has lhs's shape.
    """

    name = "dgtorch.mul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        a = _float_tensor(self.lhs.type, "lhs").get_shape()
        b = _float_tensor(self.rhs.type, "rhs").get_shape()
        check_constant_broadcast(b, a, "rhs")
        check_shape(_float_tensor(self.result.type, "result").get_shape(), a, "result")


@irdl_op_definition
class MatmulOp(DgTorchOp):
    """`aten.matmul` / `aten.bmm` / `aten.mm` of two activations: lhs [..., M, K] @ rhs [..., K, N].

    Both operands have the batch axis and feature rank 2-3; leading axes are equal.
    """

    name = "dgtorch.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        check_matmul_shapes(
            _float_tensor(self.lhs.type, "lhs").get_shape(),
            _float_tensor(self.rhs.type, "rhs").get_shape(),
            _float_tensor(self.result.type, "result").get_shape(),
        )


@irdl_op_definition
class MulScalarOp(DgTorchOp):
    """`aten.mul.Tensor` / `aten.div.Tensor` by a Python number: input * factor.

    A division by d is the factor 1/d. Only legal as an attention score scale,
    right after a matmul, which it folds into (`FoldScaleIntoMatmul`).
    """

    name = "dgtorch.mul_scalar"
    input = operand_def(TensorType)
    factor = prop_def(FloatAttr)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        x = _float_tensor(self.input.type, "input").get_shape()
        check_shape(_float_tensor(self.result.type, "result").get_shape(), x, "result")


class ShapeOp(DgTorchOp):
    """Base of ops that only rearrange elements: same element count, same batch axis."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        x = tensor_type(self.input.type, "input")
        y = tensor_type(self.result.type, "result")
        if x.element_type != y.element_type:
            raise VerifyException("input and result element types differ")
        check_same_batch(x.get_shape(), y.get_shape(), self.name)
        check_same_item_size(x.get_shape(), y.get_shape())
        self._verify_shape(x.get_shape(), y.get_shape())

    def _verify_shape(self, inp: tuple[int, ...], out: tuple[int, ...]) -> None:
        pass


@irdl_op_definition
class FlattenOp(ShapeOp):
    """`aten.flatten.using_ints`: merges axes `start_dim`..`end_dim` (inclusive) into one."""

    name = "dgtorch.flatten"
    start_dim = prop_def(IntegerAttr[I64])
    end_dim = prop_def(IntegerAttr[I64])

    def _verify_shape(self, inp: tuple[int, ...], out: tuple[int, ...]) -> None:
        rank = len(inp)
        start = self.start_dim.value.data % max(rank, 1)
        end = self.end_dim.value.data % max(rank, 1)
        if start > end:
            raise VerifyException(f"start_dim {start} is after end_dim {end}")
        if len(out) != rank - (end - start):
            raise VerifyException(f"result rank must be {rank - (end - start)}, got {len(out)}")


@irdl_op_definition
class ReshapeOp(ShapeOp):
    """`aten.view` / `aten.reshape`: the same elements in row-major order, in the result's shape."""

    name = "dgtorch.reshape"


@irdl_op_definition
class SigmoidOp(ElementwiseUnaryOp):
    """`aten.sigmoid`: 1 / (1 + exp(-x))."""

    name = "dgtorch.sigmoid"


@irdl_op_definition
class SoftmaxOp(ElementwiseUnaryOp):
    """`aten.softmax.int` / `aten._softmax`: exp(x) / sum(exp(x)) along `dim` (may be negative)."""

    name = "dgtorch.softmax"
    dim = prop_def(IntegerAttr[I64])

    def verify_(self) -> None:
        super().verify_()
        rank = len(tensor_type(self.input.type, "input").get_shape())
        normalize_axis(self.dim.value.data, rank, "dim")


class Pool2dOp(DgTorchOp):
    """Base of torch's 2-D pooling ops over an NCHW input.

    `kernel`, `stride` and the symmetric `padding` [ph, pw] are per spatial
    axis; `ceil_mode` picks torch's ceil rule for the window count.
    """

    input = operand_def(TensorType)
    kernel = prop_def(DenseArrayBase[I64])
    stride = prop_def(DenseArrayBase[I64])
    padding = prop_def(DenseArrayBase[I64])
    ceil_mode = prop_def(BoolAttr)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def window_dilation(self) -> tuple[int, ...]:
        return (1, 1)

    def verify_(self) -> None:
        x = _float_tensor(self.input.type, "input").get_shape()
        y = _float_tensor(self.result.type, "result").get_shape()
        kernel = int_array(self.kernel, "kernel", 2)
        stride = int_array(self.stride, "stride", 2)
        padding = int_array(self.padding, "padding", 2)
        dilation = self.window_dilation()
        check_positive(kernel, "kernel")
        check_positive(stride, "stride")
        check_non_negative(padding, "padding")
        if len(x) != 4 or len(y) != 4:
            raise VerifyException("input and result must be rank 4 (NCHW)")
        effective = [d * (k - 1) + 1 for k, d in zip(kernel, dilation, strict=True)]
        if any(2 * p > k for p, k in zip(padding, effective, strict=True)):
            raise VerifyException(
                f"padding {list(padding)} must be at most half the window {effective} (torch)"
            )
        check_same_batch(x, y, self.name)
        check_shape(y[:2], x[:2], "result batch and channel axes")
        pad = [padding[0], padding[0], padding[1], padding[1]]
        check_window_extents(y[2:], x[2:], effective, stride, pad, bool(self.ceil_mode.value.data))


@irdl_op_definition
class MaxPool2dOp(Pool2dOp):
    """`aten.max_pool2d`: maximum over each (dilated) window; padding reads as -inf."""

    name = "dgtorch.max_pool2d"
    dilation = prop_def(DenseArrayBase[I64])

    def window_dilation(self) -> tuple[int, ...]:
        dilation = int_array(self.dilation, "dilation", 2)
        check_positive(dilation, "dilation")
        return dilation


@irdl_op_definition
class AvgPool2dOp(Pool2dOp):
    """`aten.avg_pool2d`: mean over each window.

    The divisor is `divisor_override` when given, else the window area when
    `count_include_pad` (clipped to the padded input in ceil mode), else the
    number of input elements the window covers.
    """

    name = "dgtorch.avg_pool2d"
    count_include_pad = prop_def(BoolAttr)
    divisor_override = opt_prop_def(IntegerAttr[I64])

    def verify_(self) -> None:
        super().verify_()
        kernel = int_array(self.kernel, "kernel", 2)
        ph, pw = int_array(self.padding, "padding", 2)
        check_avg_divisor(self.divisor_override, self.count_include_pad, kernel, (ph, ph, pw, pw))


@irdl_op_definition
class AdaptiveAvgPool2dOp(DgTorchOp):
    """`aten.adaptive_avg_pool2d`: mean over torch's adaptive windows, to `output_size` [oh, ow].

    Output cell i along an axis of extent n averages input rows
    floor(i * n / o) .. ceil((i + 1) * n / o) - 1.
    """

    name = "dgtorch.adaptive_avg_pool2d"
    input = operand_def(TensorType)
    output_size = prop_def(DenseArrayBase[I64])
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        x = _float_tensor(self.input.type, "input").get_shape()
        y = _float_tensor(self.result.type, "result").get_shape()
        output_size = int_array(self.output_size, "output_size", 2)
        check_positive(output_size, "output_size")
        if len(x) != 4:
            raise VerifyException("input must be rank 4 (NCHW)")
        check_same_batch(x, y, self.name)
        check_shape(y, [x[0], x[1], *output_size], "result")


@irdl_op_definition
class PadOp(DgTorchOp):
    """`aten.pad` (constant mode) / `aten.constant_pad_nd`: pads with `value`.

    `pad` holds (before, after) pairs in torch order, last axis first:
    [left, right, top, bottom, ...]; negative entries crop. The batch axis is
    never padded.
    """

    name = "dgtorch.pad"
    input = operand_def(TensorType)
    pad = prop_def(DenseArrayBase[I64])
    value = prop_def(FloatAttr)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        x = _float_tensor(self.input.type, "input").get_shape()
        y = _float_tensor(self.result.type, "result").get_shape()
        pad = int_array(self.pad, "pad")
        if len(pad) % 2 or len(pad) > 2 * len(x):
            raise VerifyException(
                f"'pad' must hold (before, after) pairs for at most {len(x)} axes, "
                f"got {len(pad)} entries"
            )
        expected = list(x)
        for k in range(len(pad) // 2):
            axis = len(x) - 1 - k
            if expected[axis] != DYNAMIC_INDEX:
                expected[axis] += pad[2 * k] + pad[2 * k + 1]
        check_same_batch(x, expected, self.name)
        check_shape(y, expected, "result")


@irdl_op_definition
class CatOp(DgTorchOp):
    """`aten.cat`: concatenation of `inputs` along `dim` (may be negative), never the batch axis."""

    name = "dgtorch.cat"
    inputs = var_operand_def(TensorType)
    dim = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    assembly_format = "$inputs attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        shapes = [
            _float_tensor(v.type, f"input #{i}").get_shape() for i, v in enumerate(self.inputs)
        ]
        y = _float_tensor(self.result.type, "result").get_shape()
        dim = normalize_axis(self.dim.value.data, len(y), "dim")
        check_concat_shapes(shapes, y, dim, self.name)


@irdl_op_definition
class UpsampleNearest2dOp(DgTorchOp):
    """`aten.upsample_nearest2d` / `aten._upsample_nearest_exact2d` on an NCHW input.

    The output size is the result type's H, W. Source row of output row oy:
    "nearest" floor(oy * H_in / H_out); "nearest-exact"
    min(floor((oy + 0.5) * H_in / H_out), H_in - 1); the same for columns.
    """

    name = "dgtorch.upsample_nearest2d"
    input = operand_def(TensorType)
    mode = prop_def(StringAttr)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        x = _float_tensor(self.input.type, "input").get_shape()
        y = _float_tensor(self.result.type, "result").get_shape()
        check_resize(x, y, self.mode, (2, 3))
        check_same_batch(x, y, self.name)


@irdl_op_definition
class BatchNormOp(DgTorchOp):
    """Inference batch norm over axis 1 (`aten._native_batch_norm_legit_no_training`).

    y = (x - running_mean[c]) / sqrt(running_var[c] + eps) * weight[c] + bias[c].
    """

    name = "dgtorch.batch_norm"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = operand_def(TensorType)
    running_mean = operand_def(TensorType)
    running_var = operand_def(TensorType)
    eps = prop_def(FloatAttr)
    result = result_def(TensorType)
    assembly_format = (
        "$input `,` $weight `,` $bias `,` $running_mean `,` $running_var attr-dict `:` "
        "functional-type(operands, results)"
    )

    def verify_(self) -> None:
        x = _float_tensor(self.input.type, "input").get_shape()
        y = _float_tensor(self.result.type, "result").get_shape()
        if len(x) < 2:
            raise VerifyException("input must have a channel axis 1 (rank >= 2)")
        for what in ("weight", "bias", "running_mean", "running_var"):
            param = _float_tensor(getattr(self, what).type, what).get_shape()
            check_shape(param, [x[1]], what)
        if not self.eps.value.data >= 0:
            raise VerifyException(f"eps must be >= 0, got {self.eps.value.data}")
        check_shape(y, x, "result")


@irdl_op_definition
class PermuteOp(ShapeOp):
    """`aten.permute`: result axis k is input axis dims[k] (dims may be negative).

    Only the NCHW -> NHWC step [0, 2, 3, 1] of `dg.Flatten` is lowered.
    """

    name = "dgtorch.permute"
    dims = prop_def(DenseArrayBase[I64])

    def _verify_shape(self, inp: tuple[int, ...], out: tuple[int, ...]) -> None:
        dims = [normalize_axis(d, len(inp), "dims") for d in int_array(self.dims, "dims", len(inp))]
        if sorted(dims) != list(range(len(inp))):
            raise VerifyException(f"dims {dims} is not a permutation of the {len(inp)} axes")
        if dims[0] != 0:
            raise VerifyException("permute cannot move the batch axis")
        check_shape(out, [inp[d] for d in dims], "result")


@irdl_op_definition
class TransposeOp(ShapeOp):
    """`aten.transpose.int`: swaps axes `dim0` and `dim1` (either may be negative)."""

    name = "dgtorch.transpose"
    dim0 = prop_def(IntegerAttr[I64])
    dim1 = prop_def(IntegerAttr[I64])

    def _verify_shape(self, inp: tuple[int, ...], out: tuple[int, ...]) -> None:
        rank = len(inp)
        a = normalize_axis(self.dim0.value.data, rank, "dim0")
        b = normalize_axis(self.dim1.value.data, rank, "dim1")
        perm = list(range(rank))
        perm[a], perm[b] = b, a
        check_shape(out, [inp[p] for p in perm], "result")


@irdl_op_definition
class SliceOp(DgTorchOp):
    """`aten.slice.Tensor`: elements `start`, `start + step`, ... below `end` along `dim`.

    `start` and `end` are already clamped to [0, extent] (torch's rules for
    negative and oversized bounds applied by the importer); `dim` is non-negative.
    """

    name = "dgtorch.slice"
    input = operand_def(TensorType)
    dim = prop_def(IntegerAttr[I64])
    start = prop_def(IntegerAttr[I64])
    end = prop_def(IntegerAttr[I64])
    step = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        x = tensor_type(self.input.type, "input")
        y = tensor_type(self.result.type, "result")
        if x.element_type != y.element_type:
            raise VerifyException("input and result element types differ")
        shape = x.get_shape()
        dim = normalize_axis(self.dim.value.data, len(shape), "dim")
        start, end, step = (v.value.data for v in (self.start, self.end, self.step))
        check_positive([step], "step")
        if not 0 <= start <= end:
            raise VerifyException(f"slice needs 0 <= start <= end, got start {start}, end {end}")
        expected = list(shape)
        if shape[dim] != DYNAMIC_INDEX:
            expected[dim] = -(-(min(end, shape[dim]) - start) // step) if start < shape[dim] else 0
        check_shape(y.get_shape(), expected, "result")


# -- integer logic layers: i32 tensors, never quantized ---------------------


class LogicOp(DgTorchOp):
    """Base of the i32 -> i32 elementwise logic ops with a constant (dg.BitShift, dg.Bitwise)."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        x = check_logic_tensor(self.input.type, "input")
        y = check_logic_tensor(self.result.type, "result")
        check_shape(y.get_shape(), x.get_shape(), "result")
        self.verify_logic(x, y)

    def verify_logic(self, x: TensorType[Attribute], y: TensorType[Attribute]) -> None:
        """Op-specific constraints; by default the result keeps the input's element type."""
        check_same_element_type(x, y, "result")


@irdl_op_definition
class BitwiseShiftOp(LogicOp):
    """`aten.__lshift__` / `aten.__rshift__` / `aten.bitwise_*_shift` by a constant `shift`.

    `direction` left: x << shift (two's complement wrap); right: arithmetic x >> shift.
    """

    name = "dgtorch.bitwise_shift"
    direction = prop_def(StringAttr)
    shift = prop_def(IntegerAttr[I64])

    def verify_logic(self, x: TensorType[Attribute], y: TensorType[Attribute]) -> None:
        super().verify_logic(x, y)
        check_logic_shift(self.direction.data, self.shift.value.data, logic_width(x))


@irdl_op_definition
class BitwiseOp(LogicOp):
    """`aten.bitwise_and/or/xor.Scalar` (`&`, `|`, `^`) with the constant `value`."""

    name = "dgtorch.bitwise"
    kind = prop_def(StringAttr)
    value = prop_def(IntegerAttr[I64])

    def verify_logic(self, x: TensorType[Attribute], y: TensorType[Attribute]) -> None:
        super().verify_logic(x, y)
        check_bitwise(self.kind.data, self.value.value.data, logic_width(x))


@irdl_op_definition
class CompareOp(LogicOp):
    """`aten.gt/ge/lt/le/eq/ne.Scalar` then `.to(torch.int32)`: 1 where `x kind value`, else 0."""

    name = "dgtorch.compare"
    kind = prop_def(StringAttr)
    value = prop_def(IntegerAttr[I64])

    def verify_logic(self, x: TensorType[Attribute], y: TensorType[Attribute]) -> None:
        check_compare_result(y)
        check_compare(self.kind.data, self.value.value.data, logic_width(x))


class LogicBinaryOp(DgTorchOp):
    """Base of the elementwise logic ops on two tensors (dg.Bitwise / dg.Compare, no constant).

    `lhs` and `rhs` have one element type (i32 or i8) and one shape: dg does not
    broadcast them (torch would), a smaller operand is tiled with `dgtorch.repeat`.
    """

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    kind = prop_def(StringAttr)
    result = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        x = check_logic_tensor(self.lhs.type, "lhs")
        other = check_logic_tensor(self.rhs.type, "rhs")
        y = check_logic_tensor(self.result.type, "result")
        check_logic_operands(x, other)
        check_shape(y.get_shape(), x.get_shape(), "result")
        self.verify_logic(x, y)

    def verify_logic(self, x: TensorType[Attribute], y: TensorType[Attribute]) -> None:
        """Op-specific constraints; by default the result keeps the operands' element type."""
        check_same_element_type(x, y, "result")


@irdl_op_definition
class BitwiseTensorOp(LogicBinaryOp):
    """`aten.bitwise_and/or/xor.Tensor` (`x & y`, `x | y`, `x ^ y`): elementwise on two tensors."""

    name = "dgtorch.bitwise_tensor"

    def verify_logic(self, x: TensorType[Attribute], y: TensorType[Attribute]) -> None:
        super().verify_logic(x, y)
        check_bitwise_kind(self.kind.data)


@irdl_op_definition
class CompareTensorOp(LogicBinaryOp):
    """`aten.gt/ge/lt/le/eq/ne.Tensor` then `.to(torch.int32)`: 1 where `lhs kind rhs`, else 0."""

    name = "dgtorch.compare_tensor"

    def verify_logic(self, x: TensorType[Attribute], y: TensorType[Attribute]) -> None:
        check_compare_result(y)
        check_compare_kind(self.kind.data)


@irdl_op_definition
class RepeatOp(DgTorchOp):
    """`aten.repeat` of an i32 tensor (only inside logic layers): axis k repeated `repeats[k]`x."""

    name = "dgtorch.repeat"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    repeats = prop_def(DenseArrayBase[I64])
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        x_type = check_logic_tensor(self.input.type, "input")
        y_type = check_logic_tensor(self.result.type, "result")
        check_same_element_type(x_type, y_type, "result")
        x, y = x_type.get_shape(), y_type.get_shape()
        check_repeat(x, y, int_array(self.repeats, "repeats"))


# -- dg.Norm (issue 4) ------------------------------------------------------------------


def check_norm_eps(eps: FloatAttr) -> None:
    if not eps.value.data > 0:
        raise VerifyException(f"eps must be > 0, got {eps.value.data}")


@irdl_op_definition
class NormOp(DgTorchOp):
    """The body of a `dg.Norm` module: layer or RMS norm over the last axis, in float.

    layer: y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias  (biased variance)
    rms:   y = x / sqrt(mean(x * x) + eps) * weight                 (no bias)

    The importer builds it from the ops `dg.Norm.forward` runs; `weight` and
    `bias` are the module's float parameters, [D] for a last axis of D.
    """

    name = "dgtorch.norm"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    kind = prop_def(StringAttr)
    eps = prop_def(FloatAttr)
    result = result_def(TensorType)
    assembly_format = (
        "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)"
    )

    def verify_(self) -> None:
        x = _float_tensor(self.input.type, "input").get_shape()
        extent = check_norm(self.kind.data, x, self.name)
        check_norm_eps(self.eps)
        check_shape(_float_tensor(self.weight.type, "weight").get_shape(), [extent], "weight")
        if (self.bias is not None) != (self.kind.data == "layer"):
            raise VerifyException("a layer norm has a bias operand and an rms norm none")
        if self.bias is not None:
            check_shape(_float_tensor(self.bias.type, "bias").get_shape(), [extent], "bias")
        check_shape(_float_tensor(self.result.type, "result").get_shape(), x, "result")


DgTorch = Dialect(
    "dgtorch",
    [
        ConstantOp,
        QuantizePerTensorOp,
        DequantizePerTensorOp,
        QuantizePerChannelOp,
        DequantizePerChannelOp,
        Conv2dOp,
        LinearOp,
        ReluOp,
        AddOp,
        MulOp,
        MatmulOp,
        MulScalarOp,
        FlattenOp,
        ReshapeOp,
        SigmoidOp,
        SoftmaxOp,
        MaxPool2dOp,
        AvgPool2dOp,
        AdaptiveAvgPool2dOp,
        PadOp,
        CatOp,
        UpsampleNearest2dOp,
        BatchNormOp,
        PermuteOp,
        TransposeOp,
        SliceOp,
        BitwiseShiftOp,
        BitwiseOp,
        CompareOp,
        BitwiseTensorOp,
        CompareTensorOp,
        RepeatOp,
        NormOp,
    ],
)
