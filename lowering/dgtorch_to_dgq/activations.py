"""Activations: relu as the fused tail of a conv2d, linear or add; sigmoid on the fixed grid.

relu has no dgq op of its own: `dgq.quantize(relu(partition))` becomes the
partition's dgq op with `fused_activation = "relu"`. sigmoid is a partition
whose result is quantized on the fixed grid (scale 1/256, zero point -128).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Attribute, Operation
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dgq, dgtorch
from dg.lowering.dgtorch_to_dgq.common import (
    FIXED_GRID_RESULT,
    LegalizePartition,
    explain_fixed_grid,
    fixed_grid_source,
)
from dg.lowering.dgtorch_to_dgq.elementwise import LegalizeAdd
from dg.lowering.dgtorch_to_dgq.weights import LegalizeConv2d, LegalizeLinear
from dg.lowering.diagnostics import ExplainingPattern, LoweringProblem, Reason

STANDALONE_RELU = Reason(
    "standalone-relu",
    "standalone relu is not supported: relu is only supported as the fusion tail "
    "of a conv2d, linear or add whose result it alone uses",
)
RELU_TAIL_UNCONVERTED = Reason(
    "relu-tail-unconverted",
    "cannot fuse into the '{producer}' before it, which could not be converted (see its error)",
)

RELU_TAIL_PARTITIONS: tuple[LegalizePartition, ...] = (
    LegalizeConv2d(),
    LegalizeLinear(),
    LegalizeAdd(),
)
"""The partitions a relu can be the tail of, in the order they are tried."""


@dataclass(frozen=True)
class FuseReluTail(ExplainingPattern):
    """`dgq.quantize(relu(conv2d | linear | add))` -> the dgq op with `fused_activation = relu`.

    relu is only supported as such a tail: anywhere else it stays illegal.
    """

    partitions: tuple[LegalizePartition, ...] = RELU_TAIL_PARTITIONS
    reasons = (RELU_TAIL_UNCONVERTED, STANDALONE_RELU)

    def explain(self, op: Operation) -> LoweringProblem | None:
        if not isinstance(op, dgtorch.ReluOp):
            return None
        producer = op.input.owner
        if isinstance(producer, Operation) and any(
            isinstance(producer, p.source) for p in self.partitions
        ):
            return RELU_TAIL_UNCONVERTED.at(op, producer=producer.name)
        return STANDALONE_RELU.at(op)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.QuantizeOp, rewriter: PatternRewriter) -> None:
        relu = op.input.owner
        if not isinstance(relu, dgtorch.ReluOp) or not relu.result.has_one_use():
            return
        computation = relu.input.owner
        if not isinstance(computation, Operation):
            return
        for partition in self.partitions:
            built = partition.build_partition(computation, op.result.type, "relu")
            if built is not None:
                rewriter.replace(op, built)
                return


class LegalizeSigmoid(LegalizePartition):
    """`sigmoid` partition quantized to the fixed grid -> `dgq.sigmoid`."""

    source = dgtorch.SigmoidOp
    reasons = (FIXED_GRID_RESULT,)

    def explain(self, op: Operation) -> LoweringProblem | None:
        return explain_fixed_grid(op) if isinstance(op, dgtorch.SigmoidOp) else None

    def build(self, op: Operation, result_type: Attribute, activation: str) -> Operation | None:
        assert isinstance(op, dgtorch.SigmoidOp)
        if (source := fixed_grid_source(op, result_type)) is None:
            return None
        return dgq.SigmoidOp.build(operands=[source], result_types=[result_type])
