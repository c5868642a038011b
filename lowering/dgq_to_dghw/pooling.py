"""The pooling family: max_pool2d and avg_pool2d on the NHWC map.

A max pool only moves stored integers (one grid, no rescale); an average pool
divides its sums by an integer (TOSA's reciprocal_scale). An F.pad before an
average pool folds into its padding (`FoldPadIntoAvgPool2d`).
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, i32
from xdsl.ir import Attribute
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dghw, dgq
from dg.lowering.dgq_to_dghw.common import Emitter, device_result, lowered
from dg.lowering.diagnostics import ExplainingPattern


class LowerMaxPool2d(ExplainingPattern):
    """`dgq.max_pool2d` -> `dghw.max_pool2d` on the NHWC map; one grid, so no rescale."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.MaxPool2dOp, rewriter: PatternRewriter) -> None:
        source = lowered(op.input)
        if source is None:
            return
        emitter = Emitter(op, rewriter)
        pool = dghw.MaxPool2dOp.build(
            operands=[source.value],
            properties={"kernel": op.kernel, "stride": op.stride},
            result_types=[device_result(op)],
        )
        emitter.replace_source(emitter.emit(pool))


class LowerAvgPool2d(ExplainingPattern):
    """`dgq.avg_pool2d` -> `dghw.avg_pool2d`: sums of x - zp, divided by TOSA's
    reciprocal_scale of each position's divisor, back onto the shared grid."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.AvgPool2dOp, rewriter: PatternRewriter) -> None:
        source = lowered(op.input)
        if source is None:
            return
        zero_point = IntegerAttr(source.element.zero_point, i32)
        divisor: dict[str, Attribute] = {}
        if op.divisor_override is not None:
            divisor["divisor_override"] = op.divisor_override
        emitter = Emitter(op, rewriter)
        pool = dghw.AvgPool2dOp.build(
            operands=[source.value],
            properties={
                "kernel": op.kernel,
                "stride": op.stride,
                "pad": op.pad,
                "count_include_pad": op.count_include_pad,
                **divisor,
                "input_zp": zero_point,
                "output_zp": zero_point,
            },
            result_types=[device_result(op)],
        )
        emitter.replace_source(emitter.emit(pool))
