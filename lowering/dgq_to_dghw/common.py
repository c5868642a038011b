"""What the families of `convert-dgq-to-dghw` share: lowered values, layouts, the emitter.

A lowered dgq value is handed on as `unrealized_conversion_cast(dghw value)`
(see `dg.lowering.convert_dgq_to_dghw`): `lowered` reads the dghw value and the
quantization back from such a cast. Rank-4 values are NHWC on the device, every
other rank keeps torch's layout.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
    UnrealizedConversionCastOp,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from dg.dialects import dghw, dgq
from dg.dialects.common import i64_array, located, shape_of
from dg.dialects.dgq import UniformQuantizedType
from dg.dialects.fixed_point import QuantMathError, quantize_multiplier
from dg.lowering.diagnostics import LoweringProblem, Reason, raise_problems

PASS_NAME = "convert-dgq-to-dghw"

TO_NHWC = (0, 2, 3, 1)
TO_NCHW = (0, 3, 1, 2)
"""Transpose permutations between torch's and the device's rank-4 layouts."""

RESCALE_FACTOR = Reason("dghw-rescale-factor", "{error}")
"""A grid change that `dghw.rescale` cannot encode (the text is `QuantMathError`'s)."""

TABLE_INPUT_WIDTH = Reason(
    "dghw-table-input-width",
    "its input must be an i8 tensor: the device computes it through 256-entry tables",
)


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


def lowered_i8(value: SSAValue) -> Lowered | None:
    """`lowered(value)` when its storage is i8, the only input width a dghw table takes."""
    source = lowered(value)
    return source if source is not None and source.element.storage.width.data == 8 else None


def table_input_problem(op: Operation, value: SSAValue) -> LoweringProblem | None:
    """For an op read through a 256-entry table: its lowered input `value` is not i8."""
    if lowered(value) is not None and lowered_i8(value) is None:
        return TABLE_INPUT_WIDTH.at(op)
    return None


def constant_operand(value: SSAValue | None) -> dgq.ConstantOp | None:
    """The `dgq.constant` that produces `value`, if one does."""
    return value.owner if value is not None and isinstance(value.owner, dgq.ConstantOp) else None


def device_shape(shape: Sequence[int]) -> tuple[int, ...]:
    """The device-layout shape of a torch-layout shape (NCHW -> NHWC for rank 4)."""
    return tuple(shape[p] for p in TO_NHWC) if len(shape) == 4 else tuple(shape)


def device_axis(axis: int, rank: int) -> int:
    """The device axis holding torch axis `axis` (NCHW axis 1, channels, is NHWC axis 3)."""
    return TO_NCHW[axis] if rank == 4 else axis


def device_result(op: Operation) -> TensorType[IntegerType]:
    """The storage tensor, in device layout, of a dgq op's per-tensor quantized result."""
    result = op.results[0]
    element = dgq.per_tensor_element(result.type, "result")
    return storage_tensor(element, device_shape(shape_of(result)))


def integer_tensor(width: int, shape: Sequence[int]) -> TensorType[IntegerType]:
    """A tensor of `width`-bit signless integers."""
    return TensorType(IntegerType(width), shape)


def storage_tensor(element: UniformQuantizedType, shape: Sequence[int]) -> TensorType[IntegerType]:
    """A tensor of `element`'s storage integers."""
    return TensorType(element.storage, shape)


def output_clamp(element: UniformQuantizedType, activation: str) -> tuple[int, int]:
    """The clamp of a rescale onto `element`'s grid; relu clips at the real value 0."""
    lo, hi = element.limits
    if activation == "relu":
        lo = max(lo, element.zero_point)
    return lo, hi


def i32_array(values: np.ndarray) -> DenseArrayBase:
    """An i32 dense array property of `values`."""
    return DenseArrayBase(i32, BytesAttr(np.ascontiguousarray(values, dtype="<i4").tobytes()))


# -- emitting dghw ops -------------------------------------------------------------------


BYTES_BLOCK = 1 << 24
"""Bytes of a non-contiguous array (a permuted weight) made contiguous at a time."""


def little_endian_bytes(array: np.ndarray) -> bytes:
    """The bytes of integer `array` in C order, little-endian.

    A permuted view (VGG-16's first Linear, 98 MiB, folded with its flatten) is copied a
    block of rows at a time into a `BytesIO`, whose buffer becomes the bytes without a copy:
    `ascontiguousarray(...).tobytes()` held a second whole copy while a third was made.
    """
    dtype = np.dtype(f"<i{array.dtype.itemsize}")
    if array.flags.c_contiguous or array.ndim == 0 or array.nbytes <= BYTES_BLOCK:
        return np.ascontiguousarray(array, dtype=dtype).tobytes()
    rows = max(1, BYTES_BLOCK * array.shape[0] // array.nbytes)
    buffer = io.BytesIO()
    for start in range(0, array.shape[0], rows):
        buffer.write(np.ascontiguousarray(array[start : start + rows], dtype=dtype).data)
    return buffer.getvalue()


class Emitter:
    """Inserts the dghw ops that replace one dgq op, before it and at its location."""

    def __init__(self, source: Operation, rewriter: PatternRewriter):
        self.source = source
        self.rewriter = rewriter

    def emit(self, op: Operation) -> SSAValue:
        self.rewriter.insert(located(op, self.source))
        return op.results[0]

    def constant(self, array: np.ndarray, shape: Sequence[int] | None = None) -> SSAValue:
        """A `dghw.constant` holding `array`'s bytes (int8 or int32), of `shape` (the array's
        own by default; another of as many elements reads them in C order)."""
        width = array.dtype.itemsize * 8
        value = DenseIntOrFPElementsAttr(
            integer_tensor(width, array.shape if shape is None else shape),
            BytesAttr(little_endian_bytes(array)),
        )
        return self.emit(dghw.ConstantOp(value))

    def transpose(self, value: SSAValue, perm: Sequence[int]) -> SSAValue:
        assert isinstance(value.type, TensorType)
        shape = value.type.get_shape()
        result_type = TensorType(value.type.element_type, [shape[p] for p in perm])
        return self.emit(
            dghw.TransposeOp.build(
                operands=[value], properties={"perm": i64_array(perm)}, result_types=[result_type]
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
        """`dghw.rescale` by real `factors` (one, or one per channel of the last axis).

        A factor it cannot encode fails the pass (`RESCALE_FACTOR`), so every
        pattern that rescales lists that reason.
        """
        try:
            multiplier, shift = quantize_multiplier(np.atleast_1d(factors))
        except QuantMathError as error:
            raise_problems(PASS_NAME, [RESCALE_FACTOR.at(self.source, error=error)])
        return self.emit(
            dghw.RescaleOp.build(
                operands=[value],
                properties={
                    "multiplier": i32_array(multiplier),
                    "shift": i32_array(shift),
                    "input_zp": IntegerAttr(input_zp, i32),
                    "output_zp": IntegerAttr(output_zp, i32),
                    "clamp_min": IntegerAttr(clamp[0], i32),
                    "clamp_max": IntegerAttr(clamp[1], i32),
                },
                result_types=[result_type],
            )
        )

    def requantize(
        self,
        value: SSAValue,
        result: UniformQuantizedType,
        factors: float | np.ndarray,
        activation: str = "none",
    ) -> SSAValue:
        """Rescale centred products or sums (zero point 0) by `factors` onto `result`'s grid."""
        assert isinstance(value.type, TensorType)
        return self.rescale(
            value,
            storage_tensor(result, value.type.get_shape()),
            factors,
            input_zp=0,
            output_zp=result.zero_point,
            clamp=output_clamp(result, activation),
        )

    def replace_source(self, value: SSAValue) -> None:
        """Replace the dgq op by `value`, cast back to the dgq type its users expect."""
        cast = UnrealizedConversionCastOp.get([value], [self.source.results[0].type])
        self.rewriter.replace(self.source, located(cast, self.source))
