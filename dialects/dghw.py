"""The `dghw` dialect: the dg accelerator's integer instruction set.

Every value is an i8 or i32 tensor; no float exists in a dghw computation.
Feature maps are NHWC, conv weights OHWI (TOSA's layouts). Axis 0 is the
batch axis; no op changes it. Integer semantics follow TOSA 1.0 wherever TOSA
has the operation; `docs/dghw.md` states each op's exact arithmetic.

The host-side quantization parameters of `func.func` arguments and results
are the argument/result attributes `dghw.scale` and `dghw.zero_point`: the
host converts floats with them, the device never sees them.
"""

from __future__ import annotations

from typing import cast

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I8,
    I32,
    I64,
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
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
    check_not_batch_axis,
    check_positive,
    check_repeat,
    check_resize,
    check_same_batch,
    check_same_element_type,
    check_same_item_size,
    check_shape,
    check_slice_shape,
    check_window_extents,
    conv_output_extent,
    int_array,
    logic_width,
    static_numel,
    tensor_type,
)

SCALE_ATTR = "dghw.scale"
ZERO_POINT_ATTR = "dghw.zero_point"
"""Names of the host-side quantization attributes on `func.func` arguments and results."""

ALLOWED_WIDTHS = (8, 32)
SHIFT_RANGE = (2, 62)
"""TOSA 1.0 RESCALE with SINGLE_ROUND requires 2 <= shift <= 62."""

TABLE_LENGTH = 256
"""Entries of an i8 lookup table (`dghw.table`) and of the softmax exp table."""

I32_MAX = (1 << 31) - 1


def int_tensor(
    value: SSAValue, what: str, widths: tuple[int, ...] = ALLOWED_WIDTHS
) -> TensorType[Attribute]:
    """The tensor type of `value`, checked to hold one of the integer `widths`."""
    t = tensor_type(value.type, what)
    element = t.element_type
    if not isinstance(element, IntegerType) or element.width.data not in widths:
        allowed = "/".join(f"i{w}" for w in widths)
        raise VerifyException(f"{what} must be an {allowed} tensor, got {value.type}")
    return t


def type_limits(t: TensorType[Attribute]) -> tuple[int, int]:
    width = cast(IntegerType, t.element_type).width.data
    return -(1 << (width - 1)), (1 << (width - 1)) - 1


class DghwOp(IRDLOperation):
    """Base of every dghw op: integer tensors only, properties in the attribute dictionary."""

    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        for i, operand in enumerate(self.operands):
            int_tensor(operand, f"operand #{i}")
        for i, result in enumerate(self.results):
            int_tensor(result, f"result #{i}")
        self.verify_semantics()

    def verify_semantics(self) -> None:
        """Op-specific constraints, checked after the integer-only rule."""


def _check_zero_point(value: int, t: TensorType[Attribute], what: str) -> None:
    lo, hi = type_limits(t)
    if not lo <= value <= hi:
        raise VerifyException(f"{what} {value} does not fit the {t.element_type} operand")
    if cast(IntegerType, t.element_type).width.data == 32 and value != 0:
        raise VerifyException(f"{what} must be 0 for an i32 operand (TOSA)")


@irdl_op_definition
class ConstantOp(DghwOp):
    """An integer constant tensor; `value` holds its bytes."""

    name = "dghw.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(properties={"value": value}, result_types=[value.get_type()])

    def verify_semantics(self) -> None:
        if self.value.get_type() != self.result.type:
            raise VerifyException("value type must equal the result type")


class AccumulateOp(DghwOp):
    """Base of i8 x i8 -> i32 accumulating ops (TOSA CONV2D / MATMUL arithmetic).

    acc = bias[c] + sum (x - input_zp) * (w - weight_zp), exact in int32.
    """

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = operand_def(TensorType)
    input_zp = prop_def(IntegerAttr[I32])
    weight_zp = prop_def(IntegerAttr[I32])
    result = result_def(TensorType)

    assembly_format = (
        "$input `,` $weight `,` $bias attr-dict `:` functional-type(operands, results)"
    )

    def verify_accumulator_types(self) -> None:
        x = int_tensor(self.input, "input", (8,))
        w = int_tensor(self.weight, "weight", (8,))
        int_tensor(self.bias, "bias", (32,))
        int_tensor(self.result, "result", (32,))
        _check_zero_point(self.input_zp.value.data, x, "input_zp")
        _check_zero_point(self.weight_zp.value.data, w, "weight_zp")


@irdl_op_definition
class Conv2dOp(AccumulateOp):
    """2-D convolution, NHWC input, OHWI weight, i32 NHWC accumulators.

        out[n,oy,ox,c] = bias[c] + sum_{ky,kx,ic} (in[n, oy*sy+ky-pt, ox*sx+kx-pl, ic] - input_zp)
                                                  * (w[c,ky,kx,ic] - weight_zp)

    Positions outside the input read as input_zp (they contribute 0).
    `pad` = [top, bottom, left, right], `stride` = [sy, sx].
    """

    name = "dghw.conv2d"
    stride = prop_def(DenseArrayBase[I64])
    pad = prop_def(DenseArrayBase[I64])

    def verify_semantics(self) -> None:
        self.verify_accumulator_types()
        x = tensor_type(self.input.type, "input").get_shape()
        w = tensor_type(self.weight.type, "weight").get_shape()
        if len(x) != 4 or len(w) != 4:
            raise VerifyException("input and weight must be rank 4 (NHWC, OHWI)")
        check_shape([w[3]], [x[3]], "weight input-channel axis")
        verify_convolution_window(self, x, (w[1], w[2]), w[0])


@irdl_op_definition
class DepthwiseConv2dOp(AccumulateOp):
    """Depthwise 2-D convolution, NHWC input, [KH, KW, C] weight, i32 NHWC accumulators.

        out[n,oy,ox,c] = bias[c] + sum_{ky,kx} (in[n, oy*sy+ky-pt, ox*sx+kx-pl, c] - input_zp)
                                               * (w[ky,kx,c] - weight_zp)

    TOSA DEPTHWISE_CONV2D with channel multiplier 1. Positions outside the
    input read as input_zp. `pad` = [top, bottom, left, right], `stride` = [sy, sx].
    """

    name = "dghw.depthwise_conv2d"
    stride = prop_def(DenseArrayBase[I64])
    pad = prop_def(DenseArrayBase[I64])

    def verify_semantics(self) -> None:
        self.verify_accumulator_types()
        x = tensor_type(self.input.type, "input").get_shape()
        w = tensor_type(self.weight.type, "weight").get_shape()
        if len(x) != 4 or len(w) != 3:
            raise VerifyException("input must be rank 4 (NHWC) and weight rank 3 (KH, KW, C)")
        check_shape([w[2]], [x[3]], "weight channel axis")
        verify_convolution_window(self, x, (w[0], w[1]), x[3])


def verify_convolution_window(
    op: Conv2dOp | DepthwiseConv2dOp,
    x: tuple[int, ...],
    kernel: tuple[int, int],
    out_channels: int,
) -> None:
    """stride/pad, bias and NHWC result shape of a convolution with a [KH, KW] window."""
    stride = int_array(op.stride, "stride", 2)
    pad = int_array(op.pad, "pad", 4)
    check_positive(stride, "stride")
    check_non_negative(pad, "pad")
    check_shape(tensor_type(op.bias.type, "bias").get_shape(), [out_channels], "bias")
    expected = [
        x[0],
        conv_output_extent(x[1], kernel[0], stride[0], pad[0], pad[1]),
        conv_output_extent(x[2], kernel[1], stride[1], pad[2], pad[3]),
        out_channels,
    ]
    check_shape(tensor_type(op.result.type, "result").get_shape(), expected, "result")


@irdl_op_definition
class FullyConnectedOp(AccumulateOp):
    """Matrix product over the last axis with an [N, K] weight, i32 accumulators.

        out[..., n] = bias[n] + sum_k (in[..., k] - input_zp) * (w[n, k] - weight_zp)

    `weight` is [N, K]: one row per output feature, like torch's Linear weight.
    """

    name = "dghw.fully_connected"

    def verify_semantics(self) -> None:
        self.verify_accumulator_types()
        x = tensor_type(self.input.type, "input").get_shape()
        w = tensor_type(self.weight.type, "weight").get_shape()
        if len(w) != 2 or len(x) < 2:
            raise VerifyException("weight must be rank 2 and input at least rank 2")
        check_shape([x[-1]], [w[1]], "input feature axis")
        check_shape(tensor_type(self.bias.type, "bias").get_shape(), [w[0]], "bias")
        check_shape(tensor_type(self.result.type, "result").get_shape(), [*x[:-1], w[0]], "result")


@irdl_op_definition
class RescaleOp(DghwOp):
    """TOSA RESCALE, SINGLE_ROUND, followed by a clamp.

        v   = in - input_zp                                   (int64)
        r   = (v * multiplier[c] + (1 << (shift[c] - 1))) >> shift[c]   (round half toward +inf)
        out = clamp(r + output_zp, clamp_min, clamp_max)

    One multiplier/shift for the tensor, or one per channel of the last axis.
    """

    name = "dghw.rescale"
    input = operand_def(TensorType)
    multiplier = prop_def(DenseArrayBase[I32])
    shift = prop_def(DenseArrayBase[I32])
    input_zp = prop_def(IntegerAttr[I32])
    output_zp = prop_def(IntegerAttr[I32])
    clamp_min = prop_def(IntegerAttr[I32])
    clamp_max = prop_def(IntegerAttr[I32])
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_semantics(self) -> None:
        x = int_tensor(self.input, "input")
        y = int_tensor(self.result, "result")
        check_shape(y.get_shape(), x.get_shape(), "result")
        multipliers = int_array(self.multiplier, "multiplier")
        shifts = int_array(self.shift, "shift", len(multipliers))
        if len(multipliers) != 1:
            check_shape([x.get_shape()[-1]], [len(multipliers)], "per-channel axis")
        if any(not 0 <= m < (1 << 31) for m in multipliers):
            raise VerifyException("multipliers must lie in [0, 2^31)")
        lo_shift, hi_shift = SHIFT_RANGE
        if any(not lo_shift <= s <= hi_shift for s in shifts):
            raise VerifyException(
                f"shifts must lie in [{lo_shift}, {hi_shift}] (TOSA SINGLE_ROUND)"
            )
        _check_zero_point(self.input_zp.value.data, x, "input_zp")
        _check_zero_point(self.output_zp.value.data, y, "output_zp")
        lo, hi = type_limits(y)
        cmin, cmax = self.clamp_min.value.data, self.clamp_max.value.data
        if not lo <= cmin <= cmax <= hi:
            raise VerifyException(f"clamp bounds [{cmin}, {cmax}] must lie within [{lo}, {hi}]")


@irdl_op_definition
class AddOp(DghwOp):
    """Elementwise i32 + i32 -> i32 (TOSA ADD). Operands are rescaled to a common grid first."""

    name = "dghw.add"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def verify_semantics(self) -> None:
        a = int_tensor(self.lhs, "lhs", (32,)).get_shape()
        check_shape(int_tensor(self.rhs, "rhs", (32,)).get_shape(), a, "rhs")
        check_shape(int_tensor(self.result, "result", (32,)).get_shape(), a, "result")


@irdl_op_definition
class MulOp(DghwOp):
    """Elementwise i8 x i8 -> i32 product of an activation and a broadcast constant.

        out = (input - input_zp) * (constant - constant_zp)        (exact in int32)

    TOSA MUL with shift 0 on the zero-point-centred operands. `constant` has
    the input's rank, every extent 1 or the input's, and extent 1 on the batch
    axis. A `dghw.rescale` takes the product to the result grid.
    """

    name = "dghw.mul"
    input = operand_def(TensorType)
    constant = operand_def(TensorType)
    input_zp = prop_def(IntegerAttr[I32])
    constant_zp = prop_def(IntegerAttr[I32])
    result = result_def(TensorType)
    assembly_format = "$input `,` $constant attr-dict `:` functional-type(operands, results)"

    def verify_semantics(self) -> None:
        x = int_tensor(self.input, "input", (8,))
        c = int_tensor(self.constant, "constant", (8,))
        y = int_tensor(self.result, "result", (32,))
        if len(c.get_shape()) != len(x.get_shape()):
            raise VerifyException("constant must have the input's rank")
        check_constant_broadcast(c.get_shape(), x.get_shape(), "constant")
        check_shape(y.get_shape(), x.get_shape(), "result")
        _check_zero_point(self.input_zp.value.data, x, "input_zp")
        _check_zero_point(self.constant_zp.value.data, c, "constant_zp")


@irdl_op_definition
class MatmulOp(DghwOp):
    """Batched i8 x i8 -> i32 matrix product (TOSA MATMUL).

        out[..., m, n] = sum_k (lhs[..., m, k] - lhs_zp) * (rhs[..., k, n] - rhs_zp)

    Operands in torch layout, rank 3 or 4, equal leading axes; must fit int32.
    """

    name = "dghw.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    lhs_zp = prop_def(IntegerAttr[I32])
    rhs_zp = prop_def(IntegerAttr[I32])
    result = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def verify_semantics(self) -> None:
        a = int_tensor(self.lhs, "lhs", (8,))
        b = int_tensor(self.rhs, "rhs", (8,))
        y = int_tensor(self.result, "result", (32,))
        check_matmul_shapes(a.get_shape(), b.get_shape(), y.get_shape())
        _check_zero_point(self.lhs_zp.value.data, a, "lhs_zp")
        _check_zero_point(self.rhs_zp.value.data, b, "rhs_zp")


class DataMovementOp(DghwOp):
    """Base of ops that move elements without changing them: same element type, same batch."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_movement(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        x = tensor_type(self.input.type, "input")
        y = tensor_type(self.result.type, "result")
        if x.element_type != y.element_type:
            raise VerifyException("input and result element types differ")
        check_same_batch(x.get_shape(), y.get_shape(), self.name)
        return x.get_shape(), y.get_shape()


@irdl_op_definition
class ReshapeOp(DataMovementOp):
    """Row-major reshape to the result type's shape; the (dynamic) batch extent is kept."""

    name = "dghw.reshape"

    def verify_semantics(self) -> None:
        x, y = self.verify_movement()
        n_in, n_out = static_numel(x[1:]), static_numel(y[1:])
        if n_in is None or n_out is None:
            raise VerifyException("only the batch axis may be dynamic")
        check_same_item_size(x, y)


@irdl_op_definition
class TransposeOp(DataMovementOp):
    """Axis permutation: result axis k is input axis perm[k].

        out[i_perm[0], ..., i_perm[r-1]] = in[i_0, ..., i_{r-1}]

    The batch axis stays first: perm[0] = 0.
    """

    name = "dghw.transpose"
    perm = prop_def(DenseArrayBase[I64])

    def verify_semantics(self) -> None:
        x, y = self.verify_movement()
        perm = int_array(self.perm, "perm", len(x))
        if sorted(perm) != list(range(len(x))):
            raise VerifyException(f"perm {list(perm)} is not a permutation of the {len(x)} axes")
        if perm[0] != 0:
            raise VerifyException("transpose cannot move the batch axis")
        check_shape(y, [x[p] for p in perm], "result")


@irdl_op_definition
class SliceOp(DataMovementOp):
    """Elements [start, end) along the non-batch device `axis`, step 1 (TOSA SLICE).

        out[..., i, ...] = in[..., start + i, ...]    for 0 <= i < end - start

    The element type is kept: values are copied, never rescaled.
    """

    name = "dghw.slice"
    axis = prop_def(IntegerAttr[I64])
    start = prop_def(IntegerAttr[I64])
    end = prop_def(IntegerAttr[I64])

    def verify_semantics(self) -> None:
        x, y = self.verify_movement()
        axis, start, end = (v.value.data for v in (self.axis, self.start, self.end))
        check_slice_shape(x, y, axis, start, end, self.name)


class Pool2dOp(DghwOp):
    """Base of i8 -> i8 2-D pooling on NHWC: `kernel`, `stride` [sy, sx].

    The mode (floor or ceil) is the result's window count; both are accepted.
    """

    input = operand_def(TensorType)
    kernel = prop_def(DenseArrayBase[I64])
    stride = prop_def(DenseArrayBase[I64])
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def window_pad(self) -> tuple[int, ...]:
        """[top, bottom, left, right]."""
        return (0, 0, 0, 0)

    def verify_semantics(self) -> None:
        x = int_tensor(self.input, "input", (8,)).get_shape()
        y = int_tensor(self.result, "result", (8,)).get_shape()
        kernel = int_array(self.kernel, "kernel", 2)
        stride = int_array(self.stride, "stride", 2)
        check_positive(kernel, "kernel")
        check_positive(stride, "stride")
        pad = self.window_pad()
        if len(x) != 4 or len(y) != 4:
            raise VerifyException("input and result must be rank 4 (NHWC)")
        check_same_batch(x, y, self.name)
        check_shape([y[3]], [x[3]], "result channel axis")
        check_window_extents(y[1:3], x[1:3], kernel, stride, pad)
        self.verify_window(kernel, pad)

    def verify_window(self, kernel: tuple[int, ...], pad: tuple[int, ...]) -> None:
        """Op-specific constraints on the window."""


@irdl_op_definition
class MaxPool2dOp(Pool2dOp):
    """Maximum over each window, no padding (TOSA MAX_POOL2D with pad 0)."""

    name = "dghw.max_pool2d"


@irdl_op_definition
class AvgPool2dOp(Pool2dOp):
    """Average over each window with an integer divisor, i8 -> i8.

        acc = sum (x - input_zp) over the window        (padding contributes 0)
        out = clamp(apply_scale_32(acc, reciprocal_scale(divisor)) + output_zp, -128, 127)

    with TOSA's `reciprocal_scale` and SINGLE_ROUND. The divisor of an output
    position is `divisor_override`, else the window area if
    `count_include_pad` (clipped to the padded input for a ceil-mode
    overhang, as torch does), else the number of input elements in the window.
    `pad` = [top, bottom, left, right].
    """

    name = "dghw.avg_pool2d"
    pad = prop_def(DenseArrayBase[I64])
    count_include_pad = prop_def(BoolAttr)
    divisor_override = opt_prop_def(IntegerAttr[I64])
    input_zp = prop_def(IntegerAttr[I32])
    output_zp = prop_def(IntegerAttr[I32])

    def window_pad(self) -> tuple[int, ...]:
        pad = int_array(self.pad, "pad", 4)
        check_non_negative(pad, "pad")
        return pad

    def verify_window(self, kernel: tuple[int, ...], pad: tuple[int, ...]) -> None:
        check_avg_divisor(self.divisor_override, self.count_include_pad, kernel, pad)
        x = tensor_type(self.input.type, "input")
        _check_zero_point(self.input_zp.value.data, x, "input_zp")
        _check_zero_point(self.output_zp.value.data, x, "output_zp")


class LookupOp(DghwOp):
    """Base of i8 -> i8 ops computed through a table of TABLE_LENGTH entries."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_semantics(self) -> None:
        x = int_tensor(self.input, "input", (8,)).get_shape()
        y = int_tensor(self.result, "result", (8,)).get_shape()
        check_shape(y, x, "result")
        self.verify_table(x)

    def verify_table(self, shape: tuple[int, ...]) -> None:
        """Op-specific table constraints."""


def _table_values(table: DenseArrayBase, name: str) -> tuple[int, ...]:
    values = int_array(table, name)
    if len(values) != TABLE_LENGTH:
        raise VerifyException(f"'{name}' must have {TABLE_LENGTH} entries, got {len(values)}")
    return values


@irdl_op_definition
class TableOp(LookupOp):
    """i8 lookup (TOSA TABLE, i8): out = table[x + 128]; used for sigmoid."""

    name = "dghw.table"
    table = prop_def(DenseArrayBase[I8])

    def verify_table(self, shape: tuple[int, ...]) -> None:
        _table_values(self.table, "table")


@irdl_op_definition
class SoftmaxOp(LookupOp):
    """Integer softmax along the non-negative `axis` (never the batch axis), onto 1/256, -128.

    d   = x - max(x)  in [-255, 0]                 (max along axis)
    e   = exp_table[-d]                            (exp_table[k] = round(2^16 exp(-k s_in)))
    sum = sum e along axis                         (i32)
    out = clamp(floor((2 * 256 * e + sum) / (2 * sum)) - 128, -128, 127)
    """

    name = "dghw.softmax"
    exp_table = prop_def(DenseArrayBase[I32])
    axis = prop_def(IntegerAttr[I64])

    def verify_table(self, shape: tuple[int, ...]) -> None:
        axis = self.axis.value.data
        check_not_batch_axis(axis, len(shape), self.name)
        table = _table_values(self.exp_table, "exp_table")
        if min(table) < 0:
            raise VerifyException("'exp_table' entries must be >= 0")
        if shape[axis] != DYNAMIC_INDEX and shape[axis] * max(table) > I32_MAX:
            raise VerifyException(
                f"the exp sum over {shape[axis]} elements can overflow i32 "
                f"(largest exp_table entry {max(table)})"
            )


@irdl_op_definition
class ConcatOp(DghwOp):
    """Concatenation along the non-negative device `axis` (never 0, the batch axis), i8.

    The inputs share one grid, so no value changes.
    """

    name = "dghw.concat"
    inputs = var_operand_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    assembly_format = "$inputs attr-dict `:` functional-type(operands, results)"

    def verify_semantics(self) -> None:
        shapes = [int_tensor(v, f"input #{i}", (8,)).get_shape() for i, v in enumerate(self.inputs)]
        y = int_tensor(self.result, "result", (8,)).get_shape()
        check_concat_shapes(shapes, y, self.axis.value.data, self.name)


@irdl_op_definition
class ResizeNearestOp(DataMovementOp):
    """Nearest-neighbour resize of H, W (NHWC) to the result's extents.

    Source row of output row oy: "nearest" floor(oy * H_in / H_out);
    "nearest-exact" min(floor((oy + 0.5) * H_in / H_out), H_in - 1); the same for columns.
    """

    name = "dghw.resize_nearest"
    mode = prop_def(StringAttr)

    def verify_semantics(self) -> None:
        x, y = self.verify_movement()
        check_resize(x, y, self.mode, (1, 2))


# -- integer logic layers (dg.BitShift, dg.Bitwise, dg.Compare, Tensor.repeat inside them) --
#
# Logic tensors are i32 and never quantized: no scale, no zero point, and the
# model's own layout (they are not feature maps, so nothing is transposed).


class LogicOp(DghwOp):
    """Base of i32 -> i32 elementwise logic ops (same shape in and out)."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_semantics(self) -> None:
        x = check_logic_tensor(self.input.type, "input")
        y = check_logic_tensor(self.result.type, "result")
        check_shape(y.get_shape(), x.get_shape(), "result")
        self.verify_logic(x, y)

    def verify_logic(self, x: TensorType[Attribute], y: TensorType[Attribute]) -> None:
        """Op-specific constraints; by default the result keeps the input's element type."""
        check_same_element_type(x, y, "result")


@irdl_op_definition
class ShiftOp(LogicOp):
    """i32 shift by the constant `shift` in [0, 31].

    left:  TOSA LOGICAL_LEFT_SHIFT, out = x << shift on the 32-bit pattern (wraps);
    right: TOSA ARITHMETIC_RIGHT_SHIFT with round = false, out = floor(x / 2^shift).
    """

    name = "dghw.shift"
    direction = prop_def(StringAttr)
    shift = prop_def(IntegerAttr[I64])

    def verify_logic(self, x: TensorType[Attribute], y: TensorType[Attribute]) -> None:
        super().verify_logic(x, y)
        check_logic_shift(self.direction.data, self.shift.value.data, logic_width(x))


@irdl_op_definition
class BitwiseOp(LogicOp):
    """i32 `kind` (and | or | xor) with the i32 constant `value` (TOSA BITWISE_AND/OR/XOR)."""

    name = "dghw.bitwise"
    kind = prop_def(StringAttr)
    value = prop_def(IntegerAttr[I64])

    def verify_logic(self, x: TensorType[Attribute], y: TensorType[Attribute]) -> None:
        super().verify_logic(x, y)
        check_bitwise(self.kind.data, self.value.value.data, logic_width(x))


@irdl_op_definition
class CompareOp(LogicOp):
    """i32 comparison with the i32 constant `value`: out = 1 where `x kind value` holds, else 0.

    TOSA GREATER / GREATER_EQUAL / EQUAL (operands swapped for lt / le, LOGICAL_NOT
    for ne), then CAST bool -> i32.
    """

    name = "dghw.compare"
    kind = prop_def(StringAttr)
    value = prop_def(IntegerAttr[I64])

    def verify_logic(self, x: TensorType[Attribute], y: TensorType[Attribute]) -> None:
        check_compare_result(y)
        check_compare(self.kind.data, self.value.value.data, logic_width(x))


class LogicBinaryOp(DghwOp):
    """Base of the elementwise logic ops on two tensors: out[i] = f(lhs[i], rhs[i]).

    `lhs` and `rhs` have one element type (i8 or i32) and the same shape, the
    batch axis included: no broadcasting (a smaller operand is a `dghw.tile` first).
    """

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    kind = prop_def(StringAttr)
    result = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def verify_semantics(self) -> None:
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
    """Bitwise `kind` (and | or | xor) of two i32 or two i8 tensors, elementwise on the
    two's-complement bit patterns: out = lhs & rhs, lhs | rhs or lhs ^ rhs, of their element
    type (never out of range). TOSA BITWISE_AND / BITWISE_OR / BITWISE_XOR."""

    name = "dghw.bitwise_tensor"

    def verify_logic(self, x: TensorType[Attribute], y: TensorType[Attribute]) -> None:
        super().verify_logic(x, y)
        check_bitwise_kind(self.kind.data)


@irdl_op_definition
class CompareTensorOp(LogicBinaryOp):
    """Comparison of two i32 or two i8 tensors as signed integers: out = 1 where
    `lhs kind rhs` holds (gt >, ge >=, lt <, le <=, eq ==, ne !=), else 0; out is i32.

    TOSA GREATER / GREATER_EQUAL / EQUAL (operands swapped for lt / le, LOGICAL_NOT
    for ne), then CAST bool -> i32.
    """

    name = "dghw.compare_tensor"

    def verify_logic(self, x: TensorType[Attribute], y: TensorType[Attribute]) -> None:
        check_compare_result(y)
        check_compare_kind(self.kind.data)


@irdl_op_definition
class TileOp(DghwOp):
    """i32 tiling (TOSA TILE): result[i] = input[i mod input_shape] per axis; `multiples[0]` = 1."""

    name = "dghw.tile"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    multiples = prop_def(DenseArrayBase[I64])
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_semantics(self) -> None:
        x_type = check_logic_tensor(self.input.type, "input")
        y_type = check_logic_tensor(self.result.type, "result")
        check_same_element_type(x_type, y_type, "result")
        x, y = x_type.get_shape(), y_type.get_shape()
        check_repeat(x, y, int_array(self.multiples, "multiples"))


# -- dg.Norm (issue 4) ------------------------------------------------------------------

NORM_EPS_BITS = 20
"""`dghw.norm` adds eps to the variance sum V on a grid 2^20 times finer than V's own:
D = V * 2^20 + eps."""

NORM_MAX_EPS = 1 << 61
"""Largest `eps` of `dghw.norm`: with V * 2^20 < 2^60 (docs/dghw.md), D stays below 2^62."""

NORM_Z_BITS = 21
"""Fraction bits of the normalized value Z = z * 2^21 inside `dghw.norm`."""

NORM_MAX_BIAS = 1 << 61
"""Largest |bias| of `dghw.norm`: Z * multiplier + bias + 2^(shift - 1) stays below 2^63."""

NORM_MAX_SPREAD = 1 << 16
"""Largest `max|gamma| / s_out * sqrt(n)`, in output steps, for which docs/dghw.md proves
`dghw.norm` within 0.08 of a step of the exact norm before rounding (so within one step of
the frozen model); the lowering rejects norms beyond it rather than lose that promise."""


@irdl_op_definition
class NormOp(DghwOp):
    """Integer layer / RMS norm over the last axis of an i8 [B, D] or [B, S, D] tensor.

    Per row of n elements, x = input - input_zp (docs/dghw.md has the proof of bounds):

        layer: A = n x - sum(x),  V = n sum(x^2) - sum(x)^2
        rms:   A = n x,           V = n sum(x^2)
        D = V * 2^20 + eps;  t = max(0, ceil(bitlen(D) / 2) - 11)
        R = isqrt(2^62 // (D >> 2t))                   (a 21-bit rsqrt)
        Z = (A * R + round) >> t                       (z * 2^21, half up)
        out[c] = clamp(((Z * multiplier[c] + bias[c] + 2^(shift-1)) >> shift) + output_zp)
    """

    name = "dghw.norm"
    input = operand_def(TensorType)
    kind = prop_def(StringAttr)
    input_zp = prop_def(IntegerAttr[I32])
    output_zp = prop_def(IntegerAttr[I32])
    eps = prop_def(IntegerAttr[I64])
    multiplier = prop_def(DenseArrayBase[I32])
    bias = prop_def(DenseArrayBase[I64])
    shift = prop_def(IntegerAttr[I32])
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_semantics(self) -> None:
        x = int_tensor(self.input, "input", (8,))
        y = int_tensor(self.result, "result", (8,))
        extent = check_norm(self.kind.data, x.get_shape(), self.name)
        check_shape(y.get_shape(), x.get_shape(), "result")
        _check_zero_point(self.input_zp.value.data, x, "input_zp")
        _check_zero_point(self.output_zp.value.data, y, "output_zp")
        int_array(self.multiplier, "multiplier", extent)
        bias = int_array(self.bias, "bias", extent)
        if any(abs(b) > NORM_MAX_BIAS for b in bias):
            raise VerifyException("bias entries must lie in [-2^61, 2^61]")
        if not 1 <= self.eps.value.data <= NORM_MAX_EPS:
            raise VerifyException("eps must lie in [1, 2^61]")
        lo_shift, hi_shift = SHIFT_RANGE
        if not lo_shift <= self.shift.value.data <= hi_shift:
            raise VerifyException(f"shift must lie in [{lo_shift}, {hi_shift}]")


Dghw = Dialect(
    "dghw",
    [
        ConstantOp,
        Conv2dOp,
        FullyConnectedOp,
        RescaleOp,
        AddOp,
        MulOp,
        MatmulOp,
        ReshapeOp,
        TransposeOp,
        SliceOp,
        DepthwiseConv2dOp,
        MaxPool2dOp,
        AvgPool2dOp,
        TableOp,
        SoftmaxOp,
        ConcatOp,
        ResizeNearestOp,
        ShiftOp,
        BitwiseOp,
        CompareOp,
        BitwiseTensorOp,
        CompareTensorOp,
        TileOp,
        NormOp,
    ],
)
