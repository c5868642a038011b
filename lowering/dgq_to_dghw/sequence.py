"""The sequence family: matmul (with the attention score scale) and softmax.

The score scale of attention rides on matmul's requantization multiplier;
softmax reads an exp table that this lowering computes from the input grid.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, i32, i64
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dghw, dgq
from dg.dialects.common import int_array, located, shape_of
from dg.lowering.dgq_to_dghw.common import (
    RESCALE_FACTOR,
    TABLE_INPUT_WIDTH,
    Emitter,
    device_axis,
    device_result,
    i32_array,
    integer_tensor,
    lowered_i8,
    table_input_problem,
)
from dg.lowering.diagnostics import ExplainingPattern, LoweringProblem

MAX_SOFTMAX_EXP_BITS = 30


def softmax_exp_bits(axis_extent: int) -> int:
    """Fraction bits F of the exp table: as many as keep the row sum below 2^31.

    Every entry is <= 2^F, so a row of N entries sums to <= N * 2^F < 2^31 when
    F = 31 - bit_length(N); more bits make e / sum more precise (docs/dghw.md).
    """
    return min(MAX_SOFTMAX_EXP_BITS, 31 - int(axis_extent).bit_length())


def softmax_exp_table(input_scale: float, axis_extent: int) -> np.ndarray:
    """exp_table[k] = round(2^F exp(-k s_in)) for the 256 differences k = max - x."""
    k = np.arange(dghw.TABLE_LENGTH, dtype=np.float64)
    bits = softmax_exp_bits(axis_extent)
    return np.rint(np.ldexp(np.exp(-k * input_scale), bits)).astype(np.int32)


class LowerMatmul(ExplainingPattern):
    """`dgq.matmul` -> `dghw.matmul` (exact i32 sums of centred products) + one rescale.

    The rescale factor is scale_lhs * scale_rhs * factor / scale_out: the score
    scale rides on the requantization multiplier. Rank-4 operands are taken
    back to torch layout around the product (matrix axes last).
    """

    reasons = (RESCALE_FACTOR,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.MatmulOp, rewriter: PatternRewriter) -> None:
        lhs, rhs = lowered_i8(op.lhs), lowered_i8(op.rhs)
        if lhs is None or rhs is None:
            return
        result = dgq.per_tensor_element(op.result.type, "result")
        shape = shape_of(op.result)
        emitter = Emitter(op, rewriter)
        product = emitter.emit(
            dghw.MatmulOp.build(
                operands=[
                    emitter.to_torch_layout(lhs.value, len(lhs.shape)),
                    emitter.to_torch_layout(rhs.value, len(rhs.shape)),
                ],
                properties={
                    "lhs_zp": IntegerAttr(lhs.element.zero_point, i32),
                    "rhs_zp": IntegerAttr(rhs.element.zero_point, i32),
                },
                result_types=[integer_tensor(32, shape)],
            )
        )
        factor = lhs.element.scale * rhs.element.scale * op.factor.value.data / result.scale
        requantized = emitter.requantize(product, result, factor)
        emitter.replace_source(emitter.to_device_layout(requantized, len(shape)))


class LowerSoftmax(ExplainingPattern):
    """`dgq.softmax` -> `dghw.softmax` along the device axis, with the exp table of the
    input grid (the zero point cancels in x - max(x))."""

    reasons = (TABLE_INPUT_WIDTH,)

    def explain(self, op: Operation) -> LoweringProblem | None:
        return table_input_problem(op, op.input) if isinstance(op, dgq.SoftmaxOp) else None

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.SoftmaxOp, rewriter: PatternRewriter) -> None:
        source = lowered_i8(op.input)
        if source is None:
            return
        torch_axis = op.axis.value.data
        exp_table = softmax_exp_table(source.element.scale, source.shape[torch_axis])
        emitter = Emitter(op, rewriter)
        softmax = dghw.SoftmaxOp.build(
            operands=[source.value],
            properties={
                "exp_table": i32_array(exp_table),
                "axis": IntegerAttr(device_axis(torch_axis, len(source.shape)), i64),
            },
            result_types=[device_result(op)],
        )
        emitter.replace_source(emitter.emit(softmax))


class FoldTransposesAroundSoftmax(ExplainingPattern):
    """`transpose(softmax(transpose(x, p), axis), q)` with `q` undoing `p` ->
    `softmax(x, p[axis])`, where each transpose's result is read only there.

    A rank-4 value is NHWC on the device, so a softmax over a torch axis of
    attention scores, which come from one matmul and go to another in torch's order,
    lowers between a layout transpose and its inverse. Each row's result depends on
    that row alone, so the softmax along the axis the rows came from is the same map,
    without the two moves of the whole score map. It rewrites dghw ops only, which
    are legal: it has nothing to explain.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dghw.TransposeOp, rewriter: PatternRewriter) -> None:
        softmax = op.input.owner
        if not isinstance(softmax, dghw.SoftmaxOp) or not softmax.result.has_one_use():
            return
        inner = softmax.input.owner
        if not isinstance(inner, dghw.TransposeOp) or not inner.result.has_one_use():
            return
        inner_perm, outer_perm = int_array(inner.perm, "perm"), int_array(op.perm, "perm")
        if tuple(inner_perm[axis] for axis in outer_perm) != tuple(range(len(outer_perm))):
            return
        folded = dghw.SoftmaxOp.build(
            operands=[inner.input],
            properties={
                "exp_table": softmax.exp_table,
                "axis": IntegerAttr(inner_perm[softmax.axis.value.data], i64),
            },
            result_types=[op.result.type],
        )
        rewriter.replace(op, located(folded, softmax))
        rewriter.erase(softmax)
        rewriter.erase(inner)
