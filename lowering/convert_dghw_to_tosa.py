"""`convert-dghw-to-tosa`: a dghw module as TOSA 1.0 MLIR computing the same integers.

The output is what the TOSA reference tools accept: `tosa-opt
--tosa-attach-target="profiles=pro_int" --tosa-validate` passes it and
`--tosa-serialize` turns it into the flatbuffer `tosa_reference_model` runs
(`runtime/tosa_reference.py` does both and compares with the device model).
`docs/tosa.md` has the op-by-op mapping; `docs/dghw.md` states why each
mapping computes dghw's integers.

- TOSA 1.0 has no dynamic extents, so the batch axis becomes the pass option
  `batch` (default 1) everywhere, the signature included.
- Zero points, rescale multipliers and shifts are operands fed by `tosa.const`;
  shapes, starts, paddings and resize scales are `tosa.const_shape` operands.
- TOSA's windowed ops require the window count to divide the padded extent
  exactly; dghw's floor and ceil counts are met by trimming the bottom/right
  padding (or slicing off input rows no window reads) and by padding the
  ceil-mode overhang, which TOSA skips like dghw.
- Ops with no TOSA counterpart are decomposed into TOSA ops computing the same
  integers: `dghw.fully_connected` is a 1x1 CONV2D, `dghw.mul` centres its
  operands with RESCALE, `dghw.softmax` is REDUCE_MAX, a GATHER of the exp
  table, REDUCE_SUM and a bit-serial rounded division in int32.
- The host quantization attributes (`dghw.scale`, `dghw.zero_point`) and
  `dg.output_structure` stay on `func.func`; tosa-opt keeps them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects import tosa as xtosa
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BoolAttr,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
    UnregisteredOp,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from dg.dialects import dghw
from dg.dialects import tosa as tosa1
from dg.dialects.dgq import FIXED_GRID_ZERO_POINT
from dg.dialects.fixed_point import reciprocal_scale
from dg.lowering.diagnostics import check_legality_with, raise_at

PASS_NAME = "convert-dghw-to-tosa"

IDENTITY_MULTIPLIER, IDENTITY_SHIFT = 1 << 30, 30
"""A RESCALE by exactly 1: (v * 2^30 + 2^29) >> 30 = v for every integer v."""

SOFTMAX_FRACTION_BITS = 8
"""The softmax result is 256 e / sum rounded: 8 quotient bits after the integer bit."""


def static_type(t: Attribute, batch: int) -> TensorType[Attribute]:
    """`t` with its dynamic (batch) extents set to `batch`."""
    assert isinstance(t, TensorType)
    shape = [batch if d == DYNAMIC_INDEX else d for d in t.get_shape()]
    return TensorType(t.element_type, shape)


def shape_of(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return value.type.get_shape()


def element_of(value: SSAValue) -> IntegerType:
    assert isinstance(value.type, TensorType) and isinstance(value.type.element_type, IntegerType)
    return value.type.element_type


def dense(array: np.ndarray, element: IntegerType | None = None) -> DenseIntOrFPElementsAttr:
    """A dense attribute holding `array`'s bytes (little-endian, row-major)."""
    width = array.dtype.itemsize * 8
    element = element or IntegerType(width)
    return DenseIntOrFPElementsAttr(
        TensorType(element, array.shape),
        BytesAttr(np.ascontiguousarray(array, dtype=f"<i{array.dtype.itemsize}").tobytes()),
    )


@dataclass(frozen=True)
class Window:
    """One spatial axis of a TOSA window op: its padding and how many input rows it keeps."""

    lo: int
    hi: int
    keep: int


def exact_window(extent: int, kernel: int, stride: int, lo: int, hi: int, out: int) -> Window:
    """Padding for which TOSA's exact window count `(extent + lo + hi - kernel) / stride + 1`
    is `out`.

    The last window ends at `(out - 1) * stride + kernel` in padded coordinates.
    Padding past it is never read (floor mode): drop it, and the input rows past
    it too. A window reaching past the bottom padding (ceil-mode overhang) gets
    that much more padding, which TOSA skips like dghw does.
    """
    hi_needed = (out - 1) * stride + kernel - extent - lo
    if hi_needed >= 0:
        return Window(lo, hi_needed, extent)
    return Window(lo, 0, extent + hi_needed)


@dataclass
class TosaBuilder:
    """Emits TOSA ops before the dghw op `source`, carrying its location."""

    rewriter: PatternRewriter
    source: Operation
    batch: int

    def emit(self, op: Operation) -> SSAValue:
        op.location = self.source.location
        self.rewriter.insert(op)
        return op.results[0]

    def result_type(self) -> TensorType[Attribute]:
        return static_type(self.source.results[0].type, self.batch)

    def const(self, array: np.ndarray) -> SSAValue:
        return self.emit(xtosa.ConstOp(dense(array)))

    def scalar(self, value: int, element: IntegerType) -> SSAValue:
        """A `tensor<1xiN>` operand: a zero point, a shift, a pad value."""
        dtype = np.int8 if element.width.data == 8 else np.int32
        return self.const(np.array([value], dtype=dtype))

    def splat(self, value: int, like: SSAValue) -> SSAValue:
        """An i32 constant of `like`'s rank with every extent 1 (broadcasts in TOSA)."""
        return self.const(np.full([1] * len(shape_of(like)), value, dtype=np.int32))

    def shape(self, values: Sequence[int]) -> SSAValue:
        return self.emit(tosa1.ConstShapeOp(values))

    def reshape(self, value: SSAValue, shape: Sequence[int]) -> SSAValue:
        if tuple(shape) == shape_of(value):
            return value
        return self.emit(
            tosa1.ReshapeOp.build(
                operands=[value, self.shape(shape)],
                result_types=[TensorType(element_of(value), shape)],
            )
        )

    def slice(self, value: SSAValue, start: Sequence[int], size: Sequence[int]) -> SSAValue:
        if tuple(size) == shape_of(value):
            return value
        return self.emit(
            tosa1.SliceOp.build(
                operands=[value, self.shape(start), self.shape(size)],
                result_types=[TensorType(element_of(value), size)],
            )
        )

    def crop_hw(self, value: SSAValue, rows: int, columns: int) -> SSAValue:
        """The first `rows` x `columns` of an NHWC value."""
        n, _, _, c = shape_of(value)
        return self.slice(value, [0, 0, 0, 0], [n, rows, columns, c])

    def cast(self, value: SSAValue, element: IntegerType) -> SSAValue:
        return self.emit(
            tosa1.CastOp.build(
                operands=[value], result_types=[TensorType(element, shape_of(value))]
            )
        )

    def rescale(
        self,
        value: SSAValue,
        multiplier: Sequence[int],
        shift: Sequence[int],
        zero_points: tuple[int, int],
        result_type: TensorType[Attribute],
    ) -> SSAValue:
        """TOSA RESCALE, SINGLE_ROUND, scale32; one multiplier or one per channel."""
        output = result_type.element_type
        assert isinstance(output, IntegerType)
        return self.emit(
            xtosa.RescaleOp.build(
                operands=[
                    value,
                    self.const(np.array(multiplier, dtype=np.int32)),
                    self.const(np.array(shift, dtype=np.int8)),
                    self.scalar(zero_points[0], element_of(value)),
                    self.scalar(zero_points[1], output),
                ],
                result_types=[result_type],
                properties={
                    "scale32": BoolAttr.from_bool(True),
                    "rounding_mode": xtosa.RoundingModeAttr(xtosa.RoundingMode.SINGLE_ROUND),
                    "per_channel": BoolAttr.from_bool(len(multiplier) > 1),
                    "input_unsigned": BoolAttr.from_bool(False),
                    "output_unsigned": BoolAttr.from_bool(False),
                },
            )
        )

    def centred_i32(self, value: SSAValue, zero_point: int) -> SSAValue:
        """`value - zero_point` as i32 (a RESCALE by 1 with that input zero point)."""
        return self.rescale(
            value,
            [IDENTITY_MULTIPLIER],
            [IDENTITY_SHIFT],
            (zero_point, 0),
            TensorType(i32, shape_of(value)),
        )

    def binary(
        self, op_type: type[IRDLOperation], lhs: SSAValue, rhs: SSAValue, element: Attribute
    ):
        """An elementwise binary op; the result takes the broadcast shape."""
        shape = [max(a, b) for a, b in zip(shape_of(lhs), shape_of(rhs), strict=True)]
        return self.emit(
            op_type.build(operands=[lhs, rhs], result_types=[TensorType(element, shape)])
        )

    def reduce(self, op_type: type[IRDLOperation], value: SSAValue, axis: int) -> SSAValue:
        shape = list(shape_of(value))
        shape[axis] = 1
        return self.emit(
            op_type.build(
                operands=[value],
                result_types=[TensorType(element_of(value), shape)],
                properties={"axis": IntegerAttr(axis, i32)},
            )
        )

    def select(self, condition: SSAValue, if_true: SSAValue, if_false: SSAValue) -> SSAValue:
        """SELECT; the result takes the broadcast shape of the three operands."""
        shapes = [shape_of(v) for v in (condition, if_true, if_false)]
        shape = [max(extents) for extents in zip(*shapes, strict=True)]
        return self.emit(
            tosa1.SelectOp.build(
                operands=[condition, if_true, if_false],
                result_types=[TensorType(element_of(if_true), shape)],
            )
        )


def i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [int(v) for v in values])


def pool_windows(
    op: dghw.Pool2dOp, pad: Sequence[int], out_hw: Sequence[int]
) -> tuple[Window, Window]:
    _, h, w, _ = shape_of(op.input)
    (kh, kw), (sy, sx) = op.kernel.get_values(), op.stride.get_values()
    return (
        exact_window(h, kh, sy, pad[0], pad[1], out_hw[0]),
        exact_window(w, kw, sx, pad[2], pad[3], out_hw[1]),
    )


class SpecializeBatch(RewritePattern):
    """`func.func` with a dynamic batch axis -> the same function at batch `batch`."""

    def __init__(self, batch: int):
        self.batch = batch

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        inputs = [static_type(t, self.batch) for t in op.function_type.inputs]
        outputs = [static_type(t, self.batch) for t in op.function_type.outputs]
        new_type = FunctionType.from_lists(inputs, outputs)
        if new_type == op.function_type:
            return
        for argument, t in zip(op.body.block.args, inputs, strict=True):
            if argument.type != t:
                rewriter.replace_value_with_new_type(argument, t)
        op.function_type = new_type
        rewriter.notify_op_modified(op)


class DghwToTosaPattern(RewritePattern):
    """Base of the per-op patterns: they know the batch size."""

    def __init__(self, batch: int):
        self.batch = batch

    def builder(self, op: Operation, rewriter: PatternRewriter) -> TosaBuilder:
        return TosaBuilder(rewriter, op, self.batch)


class ConstantToTosa(DghwToTosaPattern):
    """`dghw.constant` -> `tosa.const` with the same bytes."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.ConstantOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, [], [self.builder(op, rewriter).emit(xtosa.ConstOp(op.value))])


class Conv2dToTosa(DghwToTosaPattern):
    """`dghw.conv2d` -> `tosa.conv2d` (acc i32, dilation 1), padding made exact."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.Conv2dOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        result_type = b.result_type()
        _, kh, kw, _ = shape_of(op.weight)
        x, ys, xs = convolution_input(b, op, (kh, kw), result_type.get_shape())
        conv = tosa1.Conv2dOp.build(
            operands=[x, op.weight, op.bias, *convolution_zero_points(b, op)],
            result_types=[result_type],
            properties=convolution_properties(op, ys, xs),
        )
        rewriter.replace(op, [], [b.emit(conv)])


def convolution_input(
    b: TosaBuilder,
    op: dghw.Conv2dOp | dghw.DepthwiseConv2dOp,
    kernel: Sequence[int],
    out: Sequence[int],
) -> tuple[SSAValue, Window, Window]:
    """The input, cropped to the rows and columns TOSA's exact window count reads."""
    _, h, w, _ = shape_of(op.input)
    (sy, sx), pad = op.stride.get_values(), op.pad.get_values()
    ys = exact_window(h, kernel[0], sy, pad[0], pad[1], out[1])
    xs = exact_window(w, kernel[1], sx, pad[2], pad[3], out[2])
    return b.crop_hw(op.input, ys.keep, xs.keep), ys, xs


def convolution_zero_points(
    b: TosaBuilder, op: dghw.Conv2dOp | dghw.DepthwiseConv2dOp
) -> tuple[SSAValue, SSAValue]:
    return b.scalar(op.input_zp.value.data, i8), b.scalar(op.weight_zp.value.data, i8)


def convolution_properties(
    op: dghw.Conv2dOp | dghw.DepthwiseConv2dOp, ys: Window, xs: Window
) -> dict[str, Attribute]:
    return {
        "pad": i64_array([ys.lo, ys.hi, xs.lo, xs.hi]),
        "stride": op.stride,
        "dilation": i64_array([1, 1]),
        "acc_type": i32,
    }


class DepthwiseConv2dToTosa(DghwToTosaPattern):
    """`dghw.depthwise_conv2d` -> `tosa.depthwise_conv2d`, weight reshaped to [KH, KW, C, 1]."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.DepthwiseConv2dOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        result_type = b.result_type()
        kh, kw, c = shape_of(op.weight)
        x, ys, xs = convolution_input(b, op, (kh, kw), result_type.get_shape())
        conv = tosa1.DepthwiseConv2dOp.build(
            operands=[
                x,
                b.reshape(op.weight, [kh, kw, c, 1]),
                op.bias,
                *convolution_zero_points(b, op),
            ],
            result_types=[result_type],
            properties=convolution_properties(op, ys, xs),
        )
        rewriter.replace(op, [], [b.emit(conv)])


class FullyConnectedToTosa(DghwToTosaPattern):
    """`dghw.fully_connected` -> a 1x1 `tosa.conv2d` over the rows (TOSA 1.0 has no FC).

    [..., K] becomes [M, 1, 1, K], the [N, K] weight [N, 1, 1, K] (OHWI): the
    conv computes bias + sum_k (x - input_zp)(w - weight_zp) per row, exactly.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.FullyConnectedOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        result_type = b.result_type()
        x_shape = static_type(op.input.type, self.batch).get_shape()
        n, k = shape_of(op.weight)
        rows = prod(x_shape[:-1])
        conv = tosa1.Conv2dOp.build(
            operands=[
                b.reshape(op.input, [rows, 1, 1, k]),
                b.reshape(op.weight, [n, 1, 1, k]),
                op.bias,
                b.scalar(op.input_zp.value.data, i8),
                b.scalar(op.weight_zp.value.data, i8),
            ],
            result_types=[TensorType(i32, [rows, 1, 1, n])],
            properties={
                "pad": i64_array([0, 0, 0, 0]),
                "stride": i64_array([1, 1]),
                "dilation": i64_array([1, 1]),
                "acc_type": i32,
            },
        )
        out = b.reshape(b.emit(conv), result_type.get_shape())
        rewriter.replace(op, [], [out])


class RescaleToTosa(DghwToTosaPattern):
    """`dghw.rescale` -> `tosa.rescale` (SINGLE_ROUND), then a clamp if it is narrower."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.RescaleOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        result_type = b.result_type()
        out = b.rescale(
            op.input,
            op.multiplier.get_values(),
            op.shift.get_values(),
            (op.input_zp.value.data, op.output_zp.value.data),
            result_type,
        )
        bounds = (op.clamp_min.value.data, op.clamp_max.value.data)
        if bounds != dghw.type_limits(result_type):
            out = self.clamp(b, out, *bounds)
        rewriter.replace(op, [], [out])

    @staticmethod
    def clamp(b: TosaBuilder, value: SSAValue, lo: int, hi: int) -> SSAValue:
        """CLAMP for i8; MINIMUM and MAXIMUM for i32 (the integer profile's CLAMP is i8/i16)."""
        element = element_of(value)
        if element.width.data == 32:
            upper = b.binary(tosa1.MinimumOp, value, b.splat(hi, value), i32)
            return b.binary(tosa1.MaximumOp, upper, b.splat(lo, value), i32)
        return b.emit(
            xtosa.ClampOp.build(
                operands=[value],
                result_types=[value.type],
                properties={
                    "min_val": IntegerAttr(lo, element),
                    "max_val": IntegerAttr(hi, element),
                },
            )
        )


class AddToTosa(DghwToTosaPattern):
    """`dghw.add` -> `tosa.add` (i32)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.AddOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        add = xtosa.AddOp.build(operands=[op.lhs, op.rhs], result_types=[b.result_type()])
        rewriter.replace(op, [], [b.emit(add)])


class MulToTosa(DghwToTosaPattern):
    """`dghw.mul` -> RESCALE both operands to centred i32, then `tosa.mul` with shift 0."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.MulOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        mul = xtosa.MulOp.build(
            operands=[
                b.centred_i32(op.input, op.input_zp.value.data),
                b.centred_i32(op.constant, op.constant_zp.value.data),
                b.scalar(0, i8),
            ],
            result_types=[b.result_type()],
        )
        rewriter.replace(op, [], [b.emit(mul)])


class MatmulToTosa(DghwToTosaPattern):
    """`dghw.matmul` -> `tosa.matmul`; rank-4 operands fold their two leading axes."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.MatmulOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        result_type = b.result_type()
        lhs = static_type(op.lhs.type, self.batch).get_shape()
        rhs = static_type(op.rhs.type, self.batch).get_shape()
        items = prod(lhs[:-2])
        (m, k), n = lhs[-2:], rhs[-1]
        matmul = tosa1.MatmulOp.build(
            operands=[
                b.reshape(op.lhs, [items, m, k]),
                b.reshape(op.rhs, [items, k, n]),
                b.scalar(op.lhs_zp.value.data, i8),
                b.scalar(op.rhs_zp.value.data, i8),
            ],
            result_types=[TensorType(i32, [items, m, n])],
        )
        out = b.reshape(b.emit(matmul), result_type.get_shape())
        rewriter.replace(op, [], [out])


class ReshapeToTosa(DghwToTosaPattern):
    """`dghw.reshape` -> `tosa.reshape` to the static result shape."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.ReshapeOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        reshape = tosa1.ReshapeOp.build(
            operands=[op.input, b.shape(b.result_type().get_shape())],
            result_types=[b.result_type()],
        )
        rewriter.replace(op, [], [b.emit(reshape)])


class TransposeToTosa(DghwToTosaPattern):
    """`dghw.transpose` -> `tosa.transpose` (same permutation, as i32)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.TransposeOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        transpose = tosa1.TransposeOp.build(
            operands=[op.input],
            result_types=[b.result_type()],
            properties={"perms": DenseArrayBase.from_list(i32, list(op.perm.get_values()))},
        )
        rewriter.replace(op, [], [b.emit(transpose)])


class SliceToTosa(DghwToTosaPattern):
    """`dghw.slice` -> `tosa.slice` starting at `start` along `axis`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.SliceOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        size = b.result_type().get_shape()
        start = [0] * len(size)
        start[op.axis.value.data] = op.start.value.data
        slice_op = tosa1.SliceOp.build(
            operands=[op.input, b.shape(start), b.shape(size)], result_types=[b.result_type()]
        )
        rewriter.replace(op, [], [b.emit(slice_op)])


class MaxPool2dToTosa(DghwToTosaPattern):
    """`dghw.max_pool2d` -> `tosa.max_pool2d`; a ceil-mode overhang is bottom/right padding."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.MaxPool2dOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        result_type = b.result_type()
        ys, xs = pool_windows(op, (0, 0, 0, 0), result_type.get_shape()[1:3])
        pool = xtosa.MaxPool2DOp.build(
            operands=[b.crop_hw(op.input, ys.keep, xs.keep)],
            result_types=[result_type],
            properties={
                "kernel": op.kernel,
                "stride": op.stride,
                "pad": i64_array([ys.lo, ys.hi, xs.lo, xs.hi]),
            },
        )
        rewriter.replace(op, [], [b.emit(pool)])


class AvgPool2dToTosa(DghwToTosaPattern):
    """`dghw.avg_pool2d` -> `tosa.avg_pool2d` with torch's divisors.

    TOSA divides by the number of taps inside its input and skips its padding:
    - count_include_pad = false: the pool's own padding, as it is;
    - count_include_pad = true: an explicit `tosa.pad` of input_zp first, so the
      padding counts as input (and adds 0); only the ceil-mode overhang stays
      TOSA padding, uncounted, as in torch;
    - divisor_override: the window sum (a DEPTHWISE_CONV2D with weight 1,
      which reads input_zp outside the input) and a RESCALE by TOSA's
      reciprocal_scale of the override.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.AvgPool2dOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        if op.divisor_override is not None:
            out = self.summed_and_divided(b, op, op.divisor_override.value.data)
        elif op.count_include_pad.value.data:
            out = self.pool(b, op, self.padded_input(b, op), (0, 0, 0, 0))
        else:
            out = self.pool(b, op, op.input, op.pad.get_values())
        rewriter.replace(op, [], [out])

    @staticmethod
    def padded_input(b: TosaBuilder, op: dghw.AvgPool2dOp) -> SSAValue:
        top, bottom, left, right = op.pad.get_values()
        if (top, bottom, left, right) == (0, 0, 0, 0):
            return op.input
        n, h, w, c = static_type(op.input.type, b.batch).get_shape()
        pad = tosa1.PadOp.build(
            operands=[
                op.input,
                b.shape([0, 0, top, bottom, left, right, 0, 0]),
                b.scalar(op.input_zp.value.data, i8),
            ],
            result_types=[TensorType(i8, [n, h + top + bottom, w + left + right, c])],
        )
        return b.emit(pad)

    @staticmethod
    def pool(b: TosaBuilder, op: dghw.AvgPool2dOp, x: SSAValue, pad: Sequence[int]) -> SSAValue:
        result_type = b.result_type()
        _, h, w, _ = shape_of(x)
        (kh, kw), (sy, sx) = op.kernel.get_values(), op.stride.get_values()
        oh, ow = result_type.get_shape()[1:3]
        ys = exact_window(h, kh, sy, pad[0], pad[1], oh)
        xs = exact_window(w, kw, sx, pad[2], pad[3], ow)
        pool = xtosa.AvgPool2DOp.build(
            operands=[
                b.crop_hw(x, ys.keep, xs.keep),
                b.scalar(op.input_zp.value.data, i8),
                b.scalar(op.output_zp.value.data, i8),
            ],
            result_types=[result_type],
            properties={
                "kernel": op.kernel,
                "stride": op.stride,
                "pad": i64_array([ys.lo, ys.hi, xs.lo, xs.hi]),
                "acc_type": i32,
            },
        )
        return b.emit(pool)

    @staticmethod
    def summed_and_divided(b: TosaBuilder, op: dghw.AvgPool2dOp, divisor: int) -> SSAValue:
        result_type = b.result_type()
        n, oh, ow, c = result_type.get_shape()
        _, h, w, _ = shape_of(op.input)
        (kh, kw), (sy, sx) = op.kernel.get_values(), op.stride.get_values()
        pad = op.pad.get_values()
        ys = exact_window(h, kh, sy, pad[0], pad[1], oh)
        xs = exact_window(w, kw, sx, pad[2], pad[3], ow)
        window_sum = tosa1.DepthwiseConv2dOp.build(
            operands=[
                b.crop_hw(op.input, ys.keep, xs.keep),
                b.const(np.ones((kh, kw, c, 1), dtype=np.int8)),
                b.const(np.zeros(c, dtype=np.int32)),
                b.scalar(op.input_zp.value.data, i8),
                b.scalar(0, i8),
            ],
            result_types=[TensorType(i32, [n, oh, ow, c])],
            properties={
                "pad": i64_array([ys.lo, ys.hi, xs.lo, xs.hi]),
                "stride": op.stride,
                "dilation": i64_array([1, 1]),
                "acc_type": i32,
            },
        )
        multiplier, shift = reciprocal_scale(np.array([divisor]))
        return b.rescale(
            b.emit(window_sum),
            [int(multiplier[0])],
            [int(shift[0])],
            (0, op.output_zp.value.data),
            result_type,
        )


class TableToTosa(DghwToTosaPattern):
    """`dghw.table` -> `tosa.table` with the 256 i8 entries as a `tosa.const`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.TableOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        table = np.array(op.table.get_values(), dtype=np.int8)
        lookup = tosa1.TableOp.build(
            operands=[op.input, b.const(table)], result_types=[b.result_type()]
        )
        rewriter.replace(op, [], [b.emit(lookup)])


class SoftmaxToTosa(DghwToTosaPattern):
    """`dghw.softmax` decomposed into TOSA ops computing the same integers (TOSA has none).

        m   = REDUCE_MAX(x)                       (i8, along axis)
        d   = CAST(m) - CAST(x)                   (i32, in [0, 255])
        e   = GATHER(exp_table, d)                (i32)
        sum = REDUCE_SUM(e)                       (i32)
        q   = floor(256 e / sum + 1/2)            (bit-serial division, below)
        out = RESCALE(q, by 1, output_zp -128)    (saturates q - 128 to i8)

    `floor((512 e + sum) / (2 sum))` needs 40 bits, so it is a restoring long
    division in int32 instead: e <= sum (e is one term of the sum), the integer
    bit is `e >= sum`; each of 8 fraction bits doubles the remainder `rem < sum`,
    compared as `rem >= sum - rem` and formed as `(rem - (sum - rem)) + (0 or sum)`,
    so that no intermediate leaves (-sum, sum); a last such comparison rounds half up.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.SoftmaxOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        axis = op.axis.value.data
        x = op.input
        shape = static_type(x.type, self.batch).get_shape()
        row_max = b.reduce(xtosa.ReduceMaxOp, x, axis)
        distance = b.binary(xtosa.SubOp, b.cast(row_max, i32), b.cast(x, i32), i32)
        exp = self.gather_exp(b, op, distance, shape)
        total = b.reduce(xtosa.ReduceSumOp, exp, axis)
        quotient = self.rounded_quotient(b, exp, total)
        out = b.rescale(
            quotient,
            [IDENTITY_MULTIPLIER],
            [IDENTITY_SHIFT],
            (0, FIXED_GRID_ZERO_POINT),
            b.result_type(),
        )
        rewriter.replace(op, [], [out])

    @staticmethod
    def gather_exp(
        b: TosaBuilder, op: dghw.SoftmaxOp, distance: SSAValue, shape: Sequence[int]
    ) -> SSAValue:
        table = np.array(op.exp_table.get_values(), dtype=np.int32)
        count = prod(shape)
        gather = tosa1.GatherOp.build(
            operands=[b.const(table.reshape(1, -1, 1)), b.reshape(distance, [1, count])],
            result_types=[TensorType(i32, [1, count, 1])],
        )
        return b.reshape(b.emit(gather), shape)

    @staticmethod
    def rounded_quotient(b: TosaBuilder, numerator: SSAValue, denominator: SSAValue) -> SSAValue:
        """floor(2^8 numerator / denominator + 1/2) for 0 <= numerator <= denominator."""

        def at_least(lhs: SSAValue, rhs: SSAValue) -> SSAValue:
            return b.binary(tosa1.GreaterEqualOp, lhs, rhs, i1)

        bit = at_least(numerator, denominator)
        remainder = b.select(bit, b.binary(xtosa.SubOp, numerator, denominator, i32), numerator)
        quotient = b.cast(bit, i32)
        zero = b.splat(0, numerator)
        for _ in range(SOFTMAX_FRACTION_BITS):
            gap = b.binary(xtosa.SubOp, denominator, remainder, i32)
            bit = at_least(remainder, gap)
            # 2 rem - sum if that is >= 0, else 2 rem = (2 rem - sum) + sum: SELECT computes
            # both sides everywhere, so neither side may leave int32 (rem + rem could).
            addend = b.select(bit, zero, denominator)
            remainder = b.binary(
                xtosa.AddOp, b.binary(xtosa.SubOp, remainder, gap, i32), addend, i32
            )
            doubled = b.binary(xtosa.AddOp, quotient, quotient, i32)
            quotient = b.binary(xtosa.AddOp, doubled, b.cast(bit, i32), i32)
        round_up = at_least(remainder, b.binary(xtosa.SubOp, denominator, remainder, i32))
        return b.binary(xtosa.AddOp, quotient, b.cast(round_up, i32), i32)


class ConcatToTosa(DghwToTosaPattern):
    """`dghw.concat` -> `tosa.concat` along the same axis."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.ConcatOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        concat = xtosa.ConcatOp(op.inputs, IntegerAttr(op.axis.value.data, i32), b.result_type())
        rewriter.replace(op, [], [b.emit(concat)])


class ResizeNearestToTosa(DghwToTosaPattern):
    """`dghw.resize_nearest` -> `tosa.resize` NEAREST_NEIGHBOR.

    scale = [2 H_out, 2 H_in, ...] and offset -H_out ("nearest") or H_in - H_out
    ("nearest-exact") make TOSA's rounded source index dghw's floor (docs/dghw.md);
    the border is what TOSA's extent rule requires for the result extent.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.ResizeNearestOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        _, h_in, w_in, _ = shape_of(op.input)
        _, h_out, w_out, _ = b.result_type().get_shape()
        exact = op.mode.data == "nearest-exact"
        axes = [(h_in, h_out), (w_in, w_out)]
        scale = [v for i, o in axes for v in (2 * o, 2 * i)]
        offset = [(i - o) if exact else -o for i, o in axes]
        border = [
            (o - 1) * 2 * i - (i - 1) * 2 * o + off
            for (i, o), off in zip(axes, offset, strict=True)
        ]
        resize = tosa1.ResizeOp.build(
            operands=[op.input, b.shape(scale), b.shape(offset), b.shape(border)],
            result_types=[b.result_type()],
            properties={"mode": tosa1.ResizeModeAttr(tosa1.ResizeMode.NEAREST_NEIGHBOR)},
        )
        rewriter.replace(op, [], [b.emit(resize)])


class ShiftToTosa(DghwToTosaPattern):
    """`dghw.shift` -> `tosa.logical_left_shift` / `tosa.arithmetic_right_shift` (round false)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.ShiftOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        operands = [op.input, b.splat(op.shift.value.data, op.input)]
        if op.direction.data == "left":
            shift = tosa1.LogicalLeftShiftOp.build(
                operands=operands, result_types=[b.result_type()]
            )
        else:
            shift = tosa1.ArithmeticRightShiftOp.build(
                operands=operands,
                result_types=[b.result_type()],
                properties={"round": BoolAttr.from_bool(False)},
            )
        rewriter.replace(op, [], [b.emit(shift)])


BITWISE_OPS: dict[str, type[IRDLOperation]] = {
    "and": tosa1.BitwiseAndOp,
    "or": tosa1.BitwiseOrOp,
    "xor": tosa1.BitwiseXorOp,
}


class BitwiseToTosa(DghwToTosaPattern):
    """`dghw.bitwise` -> `tosa.bitwise_and` / `_or` / `_xor` with the constant broadcast."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.BitwiseOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        bitwise = BITWISE_OPS[op.kind.data].build(
            operands=[op.input, b.splat(op.value.value.data, op.input)],
            result_types=[b.result_type()],
        )
        rewriter.replace(op, [], [b.emit(bitwise)])


COMPARISONS: dict[str, tuple[type[IRDLOperation], bool, bool]] = {
    "gt": (tosa1.GreaterOp, False, False),
    "lt": (tosa1.GreaterOp, True, False),
    "ge": (tosa1.GreaterEqualOp, False, False),
    "le": (tosa1.GreaterEqualOp, True, False),
    "eq": (tosa1.EqualOp, False, False),
    "ne": (tosa1.EqualOp, False, True),
}
"""Per `dghw.compare` kind: the TOSA comparison, whether operands swap, whether it is negated."""


class CompareToTosa(DghwToTosaPattern):
    """`dghw.compare` -> GREATER / GREATER_EQUAL / EQUAL (swapped, or LOGICAL_NOT), CAST to i32."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.CompareOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        threshold = b.splat(op.value.value.data, op.input)
        rewriter.replace(op, [], [compare_to_tosa(b, op.kind.data, op.input, threshold)])


def compare_to_tosa(b: TosaBuilder, kind: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    """`lhs kind rhs` as i32 0/1: the TOSA comparison (operands swapped, or negated), CAST."""
    comparison, swapped, negated = COMPARISONS[kind]
    if swapped:
        lhs, rhs = rhs, lhs
    truth = b.binary(comparison, lhs, rhs, i1)
    if negated:
        truth = b.emit(tosa1.LogicalNotOp.build(operands=[truth], result_types=[truth.type]))
    return b.cast(truth, i32)


class BitwiseTensorToTosa(DghwToTosaPattern):
    """`dghw.bitwise_tensor` -> `tosa.bitwise_and` / `_or` / `_xor` of the two operands
    (equal shapes: nothing to broadcast)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.BitwiseTensorOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        bitwise = BITWISE_OPS[op.kind.data].build(
            operands=[op.lhs, op.rhs], result_types=[b.result_type()]
        )
        rewriter.replace(op, [], [b.emit(bitwise)])


class CompareTensorToTosa(DghwToTosaPattern):
    """`dghw.compare_tensor` -> GREATER / GREATER_EQUAL / EQUAL of the two operands
    (swapped, or LOGICAL_NOT), CAST to i32."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.CompareTensorOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        rewriter.replace(op, [], [compare_to_tosa(b, op.kind.data, op.lhs, op.rhs)])


class TileToTosa(DghwToTosaPattern):
    """`dghw.tile` -> `tosa.tile` with the same multiples."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.TileOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        tile = tosa1.TileOp.build(
            operands=[op.input, b.shape(op.multiples.get_values())],
            result_types=[b.result_type()],
        )
        rewriter.replace(op, [], [b.emit(tile)])


PATTERNS: tuple[type[DghwToTosaPattern], ...] = (
    ConstantToTosa,
    Conv2dToTosa,
    DepthwiseConv2dToTosa,
    FullyConnectedToTosa,
    RescaleToTosa,
    AddToTosa,
    MulToTosa,
    MatmulToTosa,
    ReshapeToTosa,
    TransposeToTosa,
    SliceToTosa,
    MaxPool2dToTosa,
    AvgPool2dToTosa,
    TableToTosa,
    SoftmaxToTosa,
    ConcatToTosa,
    ResizeNearestToTosa,
    ShiftToTosa,
    BitwiseToTosa,
    CompareToTosa,
    BitwiseTensorToTosa,
    CompareTensorToTosa,
    TileToTosa,
)
"""One pattern per dghw op."""


LEGAL_DIALECTS = ("tosa", "func", "builtin")
"""What a TOSA module may hold: TOSA ops, the function and its return, the module."""


def _is_legal(op: Operation) -> bool:
    return not isinstance(op, UnregisteredOp) and op.dialect_name() in LEGAL_DIALECTS


NO_TOSA_FORM = {
    "dghw.norm": "its exact algorithm (docs/dghw.md) forms 62-bit sums, an integer division "
    "and an integer square root, and TOSA 1.0's integer profile has no int64, no division "
    "and no square root; only an int32 multi-word emulation could express it (docs/tosa.md)",
}
"""dghw ops that TOSA 1.0 cannot express with its integer profile, and why."""


def _explain_illegal(op: Operation) -> str:
    name = op.op_name.data if isinstance(op, UnregisteredOp) else op.name
    if name in NO_TOSA_FORM:
        return f"has no TOSA 1.0 form: {NO_TOSA_FORM[name]}"
    return (
        f"no TOSA 1.0 lowering for '{name}': convert-dghw-to-tosa takes dghw modules "
        "(docs/tosa.md lists each dghw op's TOSA form)"
    )


@dataclass(frozen=True)
class ConvertDghwToTosaPass(ModulePass):
    """Lower a dghw module to TOSA 1.0 at a fixed batch size (TOSA has no dynamic extents)."""

    name = PASS_NAME

    batch: int = 1
    """The batch extent that replaces every dynamic axis 0."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.batch < 1:
            raise_at(PASS_NAME, op, f"batch must be >= 1, got {self.batch}")
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [SpecializeBatch(self.batch), *(p(self.batch) for p in PATTERNS)]
            ),
            apply_recursively=False,
        ).rewrite_module(op)
        check_legality_with(PASS_NAME, op, _is_legal, _explain_illegal)
