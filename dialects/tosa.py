"""The TOSA 1.0 ops that xDSL 0.75's `tosa` dialect lacks, as `convert-dghw-to-tosa` emits them.

xDSL ships part of TOSA (`xdsl.dialects.tosa`: const, rescale, clamp, add, sub,
mul, the reductions, max/avg pool, concat). The pass uses those where they
match TOSA 1.0 and the ops below for the rest: the convolutions, a batched
matmul (xDSL's insists on a leading extent 1), the data-movement ops whose
shapes are `!tosa.shape` operands (`tosa.const_shape`), TABLE, GATHER, the
comparisons, SELECT, CAST and the integer logic ops.

The ops print in MLIR's generic form (`"tosa.conv2d"(...) <{...}> : ...`),
which `tosa-opt` (the TOSA reference tools' MLIR driver) parses; each op's
semantics is the TOSA 1.0 specification's, summarised in its docstring. The
verifiers check only what the pass relies on (ranks and element types of the
operands it builds); `tosa-opt --tosa-validate` is the authority on the rest.

`Tosa` is xDSL's dialect extended by these ops (with this module's batched
MATMUL in place of xDSL's). xDSL's universe already owns the name `tosa`, so
the extension is not a universe entry: dg-opt registers it under that name
instead of xDSL's (`dg.universe.DIALECT_EXTENSIONS`), and parses what
`convert-dghw-to-tosa` prints; plain xdsl-opt keeps xDSL's own dialect.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects import tosa as xdsl_tosa
from xdsl.dialects.builtin import (
    I32,
    I64,
    BoolAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntAttr,
    TensorType,
    TypeAttribute,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from dg.dialects.common import rank_of


@irdl_attr_definition
class ShapeType(ParametrizedAttribute, TypeAttribute):
    """`!tosa.shape<rank>`: a shape value of `rank` extents (made by `tosa.const_shape`)."""

    name = "tosa.shape"
    rank: IntAttr

    def __init__(self, rank: int):
        super().__init__(IntAttr(rank))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.rank.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (IntAttr(parser.parse_integer()),)


class ResizeMode(StrEnum):
    NEAREST_NEIGHBOR = "NEAREST_NEIGHBOR"
    BILINEAR = "BILINEAR"


@irdl_attr_definition
class ResizeModeAttr(EnumAttribute[ResizeMode]):
    """`#tosa.resize_mode<NEAREST_NEIGHBOR>`: the interpolation of `tosa.resize`."""

    name = "tosa.resize_mode"

    def print_parameter(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(self.data)

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> ResizeMode:
        with parser.in_angle_brackets():
            return parser.parse_str_enum(ResizeMode)


class TosaOp(IRDLOperation):
    """Base of the ops of this module: pure, printed generically."""

    traits = traits_def(Pure())


def _check_rank(value: SSAValue, rank: int, what: str) -> None:
    if rank_of(value) != rank:
        raise VerifyException(f"{what} must be rank {rank}, got {value.type}")


@irdl_op_definition
class ConstShapeOp(TosaOp):
    """CONST_SHAPE: a `!tosa.shape<n>` of the `n` index `values`."""

    name = "tosa.const_shape"
    values = prop_def(DenseIntOrFPElementsAttr)
    output = result_def(ShapeType)

    def __init__(self, values: Sequence[int]):
        attr = DenseIntOrFPElementsAttr.from_list(
            TensorType(IndexType(), [len(values)]), [int(v) for v in values]
        )
        super().__init__(properties={"values": attr}, result_types=[ShapeType(len(values))])

    def verify_(self) -> None:
        shape = cast(TensorType[Attribute], self.values.get_type()).get_shape()
        if shape != (self.output.type.rank.data,):
            raise VerifyException("values must hold one entry per extent of the shape")


class ConvolutionOp(TosaOp):
    """Base of CONV2D / DEPTHWISE_CONV2D (acc_type i32 for i8 operands).

    acc = bias + sum (in - input_zp) * (weight - weight_zp) over the window; taps
    outside the input are skipped. `pad` = [top, bottom, left, right]; TOSA
    requires `(H - 1 + top + bottom - (KH - 1) * dilation) / stride` to divide
    exactly, and the result extent to be that quotient + 1.
    """

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = operand_def(TensorType)
    input_zp = operand_def(TensorType)
    weight_zp = operand_def(TensorType)
    pad = prop_def(DenseArrayBase[I64])
    stride = prop_def(DenseArrayBase[I64])
    dilation = prop_def(DenseArrayBase[I64])
    acc_type = prop_def(TypeAttribute)
    output = result_def(TensorType)

    def verify_(self) -> None:
        _check_rank(self.input, 4, "input")
        _check_rank(self.input_zp, 1, "input_zp")
        _check_rank(self.weight_zp, 1, "weight_zp")


@irdl_op_definition
class Conv2dOp(ConvolutionOp):
    """CONV2D: NHWC input, OHWI weight, [OC] bias -> NHWC accumulators."""

    name = "tosa.conv2d"


@irdl_op_definition
class DepthwiseConv2dOp(ConvolutionOp):
    """DEPTHWISE_CONV2D: NHWC input, [KH, KW, C, M] weight, [C * M] bias."""

    name = "tosa.depthwise_conv2d"


@irdl_op_definition
class MatmulOp(TosaOp):
    """MATMUL: out[n, h, w] = sum_c (a[n, h, c] - a_zp) * (b[n, c, w] - b_zp), i8 -> i32."""

    name = "tosa.matmul"
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    a_zp = operand_def(TensorType)
    b_zp = operand_def(TensorType)
    output = result_def(TensorType)

    def verify_(self) -> None:
        _check_rank(self.a, 3, "a")
        _check_rank(self.b, 3, "b")


@irdl_op_definition
class ReshapeOp(TosaOp):
    """RESHAPE: the row-major elements of `input1` in the shape `shape`."""

    name = "tosa.reshape"
    input1 = operand_def(TensorType)
    shape = operand_def(ShapeType)
    output = result_def(TensorType)


@irdl_op_definition
class TransposeOp(TosaOp):
    """TRANSPOSE: output axis k is input axis `perms[k]`."""

    name = "tosa.transpose"
    input1 = operand_def(TensorType)
    perms = prop_def(DenseArrayBase[I32])
    output = result_def(TensorType)


@irdl_op_definition
class SliceOp(TosaOp):
    """SLICE: the block of extents `size` starting at index `start`."""

    name = "tosa.slice"
    input1 = operand_def(TensorType)
    start = operand_def(ShapeType)
    size = operand_def(ShapeType)
    output = result_def(TensorType)


@irdl_op_definition
class PadOp(TosaOp):
    """PAD: `padding` = [before_0, after_0, before_1, ...] elements of `pad_const` per axis."""

    name = "tosa.pad"
    input1 = operand_def(TensorType)
    padding = operand_def(ShapeType)
    pad_const = operand_def(TensorType)
    output = result_def(TensorType)


@irdl_op_definition
class TileOp(TosaOp):
    """TILE: out[i] = in[i mod extent] per axis; `multiples` has one entry per axis."""

    name = "tosa.tile"
    input1 = operand_def(TensorType)
    multiples = operand_def(ShapeType)
    output = result_def(TensorType)


@irdl_op_definition
class TableOp(TosaOp):
    """TABLE with i8 input and a 256-entry i8 table: out = table[in + 128]."""

    name = "tosa.table"
    input1 = operand_def(TensorType)
    table = operand_def(TensorType)
    output = result_def(TensorType)


@irdl_op_definition
class GatherOp(TosaOp):
    """GATHER: out[n, w, c] = values[n, indices[n, w], c]."""

    name = "tosa.gather"
    values = operand_def(TensorType)
    indices = operand_def(TensorType)
    output = result_def(TensorType)

    def verify_(self) -> None:
        _check_rank(self.values, 3, "values")
        _check_rank(self.indices, 2, "indices")


@irdl_op_definition
class ResizeOp(TosaOp):
    """RESIZE: `scale` = [y_n, y_d, x_n, x_d], `offset` = [y, x], `border` = [y, x].

    NEAREST_NEIGHBOR reads input row round((oy * y_d + offset_y) / y_n), rounding a
    remainder >= y_n / 2 up, clamped to the input (likewise for columns).
    """

    name = "tosa.resize"
    input = operand_def(TensorType)
    scale = operand_def(ShapeType)
    offset = operand_def(ShapeType)
    border = operand_def(ShapeType)
    mode = prop_def(ResizeModeAttr)
    output = result_def(TensorType)


@irdl_op_definition
class CastOp(TosaOp):
    """CAST between integer types: sign-extends a narrower input; bool true is 1."""

    name = "tosa.cast"
    input = operand_def(TensorType)
    output = result_def(TensorType)


class BinaryOp(TosaOp):
    """Base of elementwise binary ops; operands of equal rank, extents 1 broadcast."""

    input1 = operand_def(TensorType)
    input2 = operand_def(TensorType)
    output = result_def(TensorType)

    def verify_(self) -> None:
        if rank_of(self.input1) != rank_of(self.input2):
            raise VerifyException("input1 and input2 must have equal ranks (TOSA broadcasting)")


@irdl_op_definition
class GreaterOp(BinaryOp):
    """GREATER: input1 > input2, i1 result."""

    name = "tosa.greater"


@irdl_op_definition
class GreaterEqualOp(BinaryOp):
    """GREATER_EQUAL: input1 >= input2, i1 result."""

    name = "tosa.greater_equal"


@irdl_op_definition
class EqualOp(BinaryOp):
    """EQUAL: input1 == input2, i1 result."""

    name = "tosa.equal"


@irdl_op_definition
class MaximumOp(BinaryOp):
    """MAXIMUM (i32 in the integer profile, where CLAMP takes i8/i16 only)."""

    name = "tosa.maximum"


@irdl_op_definition
class MinimumOp(BinaryOp):
    """MINIMUM (i32 in the integer profile)."""

    name = "tosa.minimum"


@irdl_op_definition
class BitwiseAndOp(BinaryOp):
    """BITWISE_AND on the two's-complement patterns."""

    name = "tosa.bitwise_and"


@irdl_op_definition
class BitwiseOrOp(BinaryOp):
    """BITWISE_OR on the two's-complement patterns."""

    name = "tosa.bitwise_or"


@irdl_op_definition
class BitwiseXorOp(BinaryOp):
    """BITWISE_XOR on the two's-complement patterns."""

    name = "tosa.bitwise_xor"


@irdl_op_definition
class LogicalLeftShiftOp(BinaryOp):
    """LOGICAL_LEFT_SHIFT: the bit pattern of input1 shifted left by input2 (bits lost wrap)."""

    name = "tosa.logical_left_shift"


@irdl_op_definition
class ArithmeticRightShiftOp(BinaryOp):
    """ARITHMETIC_RIGHT_SHIFT: floor(input1 / 2^input2) when `round` is false."""

    name = "tosa.arithmetic_right_shift"
    round = prop_def(BoolAttr)


@irdl_op_definition
class LogicalNotOp(TosaOp):
    """LOGICAL_NOT of an i1 tensor."""

    name = "tosa.logical_not"
    input1 = operand_def(TensorType)
    output = result_def(TensorType)


@irdl_op_definition
class SelectOp(TosaOp):
    """SELECT: out = input1 ? input2 : input3 elementwise (input1 i1)."""

    name = "tosa.select"
    input1 = operand_def(TensorType)
    input2 = operand_def(TensorType)
    input3 = operand_def(TensorType)
    output = result_def(TensorType)


DG_OPS: list[type[TosaOp]] = [
    ConstShapeOp,
    Conv2dOp,
    DepthwiseConv2dOp,
    MatmulOp,
    ReshapeOp,
    TransposeOp,
    SliceOp,
    PadOp,
    TileOp,
    TableOp,
    GatherOp,
    ResizeOp,
    CastOp,
    GreaterOp,
    GreaterEqualOp,
    EqualOp,
    MaximumOp,
    MinimumOp,
    BitwiseAndOp,
    BitwiseOrOp,
    BitwiseXorOp,
    LogicalLeftShiftOp,
    ArithmeticRightShiftOp,
    LogicalNotOp,
    SelectOp,
]
"""The ops this module adds to xDSL's `tosa` dialect."""

_REPLACED = {op.name for op in DG_OPS}

Tosa = Dialect(
    "tosa",
    [*(op for op in xdsl_tosa.TOSA.operations if op.name not in _REPLACED), *DG_OPS],
    [*xdsl_tosa.TOSA.attributes, ShapeType, ResizeModeAttr],
)
