"""`convert-dghw-to-tosa`, layout family: reshape, transpose, slice, concat and
nearest resize."""

from __future__ import annotations

from xdsl.dialects import tosa as xtosa
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, i32
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dghw
from dg.dialects import tosa as tosa1
from dg.dialects.common import shape_of
from dg.lowering.dghw_to_tosa.common import DghwToTosaPattern


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
