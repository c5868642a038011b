"""The activations family: sigmoid, read from a table this lowering computes.

Relu has no op of its own here: it is the clamp of the rescale it follows
(`output_clamp`).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import BytesAttr, DenseArrayBase, i8
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dghw, dgq
from dg.dialects.dgq import UniformQuantizedType
from dg.lowering.dgq_to_dghw.common import (
    TABLE_INPUT_WIDTH,
    Emitter,
    device_result,
    lowered_i8,
    table_input_problem,
)
from dg.lowering.diagnostics import ExplainingPattern, LoweringProblem

TABLE_INDICES = np.arange(-128, 128, dtype=np.int64)
"""Every i8 value, in the order a 256-entry dghw table is indexed (table[x + 128])."""


def sigmoid_table(source: UniformQuantizedType, result: UniformQuantizedType) -> np.ndarray:
    """table[x + 128] = the result-grid integer of sigmoid(real(x)), rounded as torch does."""
    real = (TABLE_INDICES - source.zero_point) * source.scale
    quantized = np.rint(1.0 / (1.0 + np.exp(-real)) / result.scale) + result.zero_point
    lo, hi = result.limits
    return np.clip(quantized, lo, hi).astype(np.int8)


def _i8_array(values: np.ndarray) -> DenseArrayBase:
    return DenseArrayBase(i8, BytesAttr(np.ascontiguousarray(values, dtype="<i1").tobytes()))


class LowerSigmoid(ExplainingPattern):
    """`dgq.sigmoid` -> `dghw.table` holding sigmoid of each of the 256 input values."""

    reasons = (TABLE_INPUT_WIDTH,)

    def explain(self, op: Operation) -> LoweringProblem | None:
        return table_input_problem(op, op.input) if isinstance(op, dgq.SigmoidOp) else None

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.SigmoidOp, rewriter: PatternRewriter) -> None:
        source = lowered_i8(op.input)
        if source is None:
            return
        result = dgq.per_tensor_element(op.result.type, "result")
        emitter = Emitter(op, rewriter)
        table = dghw.TableOp.build(
            operands=[source.value],
            properties={"table": _i8_array(sigmoid_table(source.element, result))},
            result_types=[device_result(op)],
        )
        emitter.replace_source(emitter.emit(table))
