"""`convert-dghw-to-tosa`, pooling family: max_pool2d and avg_pool2d with torch's divisors."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import tosa as xtosa
from xdsl.dialects.builtin import TensorType, i8, i32
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dghw
from dg.dialects import tosa as tosa1
from dg.dialects.fixed_point import reciprocal_scale
from dg.lowering.dghw_to_tosa.common import (
    DghwToTosaPattern,
    TosaBuilder,
    convolution_properties,
    pool_windows,
    static_type,
    window_pad,
)


class MaxPool2dToTosa(DghwToTosaPattern):
    """`dghw.max_pool2d` -> `tosa.max_pool2d`; a ceil-mode overhang is bottom/right padding."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.MaxPool2dOp, rewriter: PatternRewriter) -> None:
        b = self.builder(op, rewriter)
        result_type = b.result_type()
        ys, xs = pool_windows(op, op.input, (0, 0, 0, 0), result_type.get_shape()[1:3])
        pool = xtosa.MaxPool2DOp.build(
            operands=[b.crop_hw(op.input, ys.keep, xs.keep)],
            result_types=[result_type],
            properties={"kernel": op.kernel, "stride": op.stride, "pad": window_pad(ys, xs)},
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
        ys, xs = pool_windows(op, x, pad, result_type.get_shape()[1:3])
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
                "pad": window_pad(ys, xs),
                "acc_type": i32,
            },
        )
        return b.emit(pool)

    @staticmethod
    def summed_and_divided(b: TosaBuilder, op: dghw.AvgPool2dOp, divisor: int) -> SSAValue:
        result_type = b.result_type()
        n, oh, ow, c = result_type.get_shape()
        ys, xs = pool_windows(op, op.input, op.pad.get_values(), (oh, ow))
        kh, kw = op.kernel.get_values()
        window_sum = tosa1.DepthwiseConv2dOp.build(
            operands=[
                b.crop_hw(op.input, ys.keep, xs.keep),
                b.const(np.ones((kh, kw, c, 1), dtype=np.int8)),
                b.const(np.zeros(c, dtype=np.int32)),
                b.scalar(op.input_zp.value.data, i8),
                b.scalar(0, i8),
            ],
            result_types=[TensorType(i32, [n, oh, ow, c])],
            properties=convolution_properties(op.stride, ys, xs),
        )
        multiplier, shift = reciprocal_scale(np.array([divisor]))
        return b.rescale(
            b.emit(window_sum),
            [int(multiplier[0])],
            [int(shift[0])],
            (0, op.output_zp.value.data),
            result_type,
        )
