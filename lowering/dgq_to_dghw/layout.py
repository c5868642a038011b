"""The layout family: reshape, flatten, transpose, slice, concat and resize.

These ops only move stored integers on one shared grid, so none rescales.
Rank-4 values are NHWC on the device, so torch axes and permutations are
translated (`device_axis`). `FoldTransposeOfTranspose` removes layout round
trips (NHWC and straight back); `dg.Flatten` (`dgq.flatten_channels_last`)
asks for the HWC order outright: it is a plain reshape of the NHWC map.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dghw, dgq
from dg.dialects.common import i64_array, int_array, located, shape_of
from dg.lowering.dgq_to_dghw.common import (
    TO_NHWC,
    Emitter,
    device_axis,
    device_result,
    lowered,
)
from dg.lowering.diagnostics import ExplainingPattern


class LowerReshape(ExplainingPattern):
    """`dgq.reshape` (torch row-major order) -> `dghw.reshape` on the torch-layout value.

    A rank-4 NHWC input is transposed back to NCHW first, so the elements are
    taken in torch's order; a rank-4 result goes to NHWC again.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.ReshapeOp, rewriter: PatternRewriter) -> None:
        source = lowered(op.input)
        if source is None:
            return
        shape = shape_of(op.result)
        emitter = Emitter(op, rewriter)
        torch_order = emitter.to_torch_layout(source.value, len(source.shape))
        reshaped = emitter.reshape(torch_order, shape)
        emitter.replace_source(emitter.to_device_layout(reshaped, len(shape)))


class LowerFlattenChannelsLast(ExplainingPattern):
    """`dgq.flatten_channels_last` -> `dghw.reshape` of the NHWC map as it lies in memory.

    `dg.Flatten` orders features (h, w, c), which is the device's own order:
    no transpose, and no reordering of the weights of a Linear after it.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.FlattenChannelsLastOp, rewriter: PatternRewriter) -> None:
        source = lowered(op.input)
        if source is None:
            return
        emitter = Emitter(op, rewriter)
        emitter.replace_source(emitter.reshape(source.value, device_result(op).get_shape()))


class LowerConcat(ExplainingPattern):
    """`dgq.concat` -> `dghw.concat` along the device axis; one grid, so no rescale."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.ConcatOp, rewriter: PatternRewriter) -> None:
        sources = [lowered(value) for value in op.inputs]
        if any(source is None for source in sources):
            return
        values = [source.value for source in sources if source is not None]
        rank = len(shape_of(op.result))
        emitter = Emitter(op, rewriter)
        concat = dghw.ConcatOp.build(
            operands=[values],
            properties={"axis": IntegerAttr(device_axis(op.axis.value.data, rank), i64)},
            result_types=[device_result(op)],
        )
        emitter.replace_source(emitter.emit(concat))


class LowerTranspose(ExplainingPattern):
    """`dgq.transpose` -> `dghw.transpose` with the permutation composed with the layouts.

    A rank-4 value is NHWC on the device, so device axis i of the result is
    torch axis TO_NHWC[i], which comes from torch input axis perm[TO_NHWC[i]],
    which lies at device axis `device_axis` of it. One grid: no rescale.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.TransposeOp, rewriter: PatternRewriter) -> None:
        source = lowered(op.input)
        if source is None:
            return
        perm = int_array(op.perm, "perm")
        rank = len(perm)
        torch_axes = TO_NHWC if rank == 4 else tuple(range(rank))
        device_perm = [device_axis(perm[axis], rank) for axis in torch_axes]
        emitter = Emitter(op, rewriter)
        emitter.replace_source(emitter.transpose(source.value, device_perm))


class LowerSlice(ExplainingPattern):
    """`dgq.slice` -> `dghw.slice` along the device axis; one grid, so no rescale."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.SliceOp, rewriter: PatternRewriter) -> None:
        source = lowered(op.input)
        if source is None:
            return
        rank = len(source.shape)
        emitter = Emitter(op, rewriter)
        sliced = dghw.SliceOp.build(
            operands=[source.value],
            properties={
                "axis": IntegerAttr(device_axis(op.axis.value.data, rank), i64),
                "start": op.start,
                "end": op.end,
            },
            result_types=[device_result(op)],
        )
        emitter.replace_source(emitter.emit(sliced))


class LowerResizeNearest(ExplainingPattern):
    """`dgq.resize_nearest` -> `dghw.resize_nearest` on the NHWC map, same mode."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.ResizeNearestOp, rewriter: PatternRewriter) -> None:
        source = lowered(op.input)
        if source is None:
            return
        emitter = Emitter(op, rewriter)
        resize = dghw.ResizeNearestOp.build(
            operands=[source.value],
            properties={"mode": op.mode},
            result_types=[device_result(op)],
        )
        emitter.replace_source(emitter.emit(resize))


class FoldTransposeOfTranspose(ExplainingPattern):
    """`transpose(transpose(x, p), q)` -> `transpose(x, p[q])`, or `x` when that is the identity.

    Layout changes at op boundaries often meet their inverse (a rank-4 graph
    input going to NHWC and straight back for a flatten); this removes the pair.
    It rewrites dghw ops only, which are legal: it has nothing to explain.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.TransposeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, dghw.TransposeOp):
            return
        inner_perm, outer_perm = int_array(inner.perm, "perm"), int_array(op.perm, "perm")
        combined = tuple(inner_perm[axis] for axis in outer_perm)
        if combined == tuple(range(len(combined))):
            rewriter.replace(op, [], [inner.input])
            return
        folded = dghw.TransposeOp.build(
            operands=[inner.input],
            properties={"perm": i64_array(combined)},
            result_types=[op.result.type],
        )
        rewriter.replace(op, located(folded, op))
