"""`convert-dghw-to-tosa`, weights family: conv2d, depthwise_conv2d and
fully_connected (a 1x1 CONV2D: TOSA 1.0 has no fully connected op)."""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.dialects.builtin import TensorType, i8, i32
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dghw
from dg.dialects import tosa as tosa1
from dg.dialects.common import i64_array, shape_of
from dg.lowering.dghw_to_tosa.common import (
    DghwToTosaPattern,
    TosaBuilder,
    Window,
    convolution_properties,
    exact_window,
    static_type,
)


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
    b: TosaBuilder, op: dghw.Conv2dOp | dghw.DepthwiseConv2dOp | dghw.FullyConnectedOp
) -> tuple[SSAValue, SSAValue]:
    """The input and weight zero points as `tensor<1xi8>` operands."""
    return b.scalar(op.input_zp.value.data, i8), b.scalar(op.weight_zp.value.data, i8)


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
            properties=convolution_properties(op.stride, ys, xs),
        )
        rewriter.replace(op, [], [b.emit(conv)])


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
            properties=convolution_properties(op.stride, ys, xs),
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
                *convolution_zero_points(b, op),
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
