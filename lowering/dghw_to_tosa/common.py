"""What the `convert-dghw-to-tosa` families share: static types, constants, exact
windows, the `TosaBuilder` that emits TOSA ops and the patterns' base class."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import tosa as xtosa
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BoolAttr,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from dg.dialects import dghw
from dg.dialects import tosa as tosa1
from dg.dialects.common import i64_array, located, shape_of
from dg.lowering.diagnostics import ExplainingPattern

PatternFactory = Callable[[int], RewritePattern]
"""A pattern class of the pass: it takes the pass option `batch` (TOSA has no dynamic extents)."""

IDENTITY_MULTIPLIER, IDENTITY_SHIFT = 1 << 30, 30
"""A RESCALE by exactly 1: (v * 2^30 + 2^29) >> 30 = v for every integer v."""


def static_type(t: Attribute, batch: int) -> TensorType[Attribute]:
    """`t` with its dynamic (batch) extents set to `batch`."""
    assert isinstance(t, TensorType)
    shape = [batch if d == DYNAMIC_INDEX else d for d in t.get_shape()]
    return TensorType(t.element_type, shape)


def element_of(value: SSAValue) -> IntegerType:
    """The integer element type of a tensor value."""
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


def window_pad(ys: Window, xs: Window) -> DenseArrayBase:
    """The `pad` property of a TOSA window op: [top, bottom, left, right]."""
    return i64_array([ys.lo, ys.hi, xs.lo, xs.hi])


def convolution_properties(stride: Attribute, ys: Window, xs: Window) -> dict[str, Attribute]:
    """The properties of a TOSA (depthwise) CONV2D: exact padding, dilation 1, i32 accumulator."""
    return {
        "pad": window_pad(ys, xs),
        "stride": stride,
        "dilation": i64_array([1, 1]),
        "acc_type": i32,
    }


def pool_windows(
    op: dghw.Pool2dOp, x: SSAValue, pad: Sequence[int], out_hw: Sequence[int]
) -> tuple[Window, Window]:
    """The exact windows of `op`'s kernel and stride over the NHWC `x` padded by `pad`."""
    _, h, w, _ = shape_of(x)
    (kh, kw), (sy, sx) = op.kernel.get_values(), op.stride.get_values()
    return (
        exact_window(h, kh, sy, pad[0], pad[1], out_hw[0]),
        exact_window(w, kw, sx, pad[2], pad[3], out_hw[1]),
    )


@dataclass
class TosaBuilder:
    """Emits TOSA ops before the dghw op `source`, carrying its location."""

    rewriter: PatternRewriter
    source: Operation
    batch: int

    def emit(self, op: Operation) -> SSAValue:
        self.rewriter.insert(located(op, self.source))
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
    ) -> SSAValue:
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


class DghwToTosaPattern(ExplainingPattern):
    """Base of the per-op patterns: they know the batch size.

    Each converts every op of its type, so none declines one: an op left
    illegal is explained by the pass's legality (`convert_dghw_to_tosa`).
    """

    def __init__(self, batch: int):
        self.batch = batch

    def builder(self, op: Operation, rewriter: PatternRewriter) -> TosaBuilder:
        return TosaBuilder(rewriter, op, self.batch)
