"""`convert-dgtorch-to-dgq`: from torch's float graph with q/dq ops to quantized dgq ops.

torchao's `convert_pt2e` leaves every quantized activation as a
`quantize_per_tensor` -> `dequantize_per_tensor` pair, every weight and bias as
an integer constant feeding `dequantize_per_channel`, and every partition
(conv, linear, add, optionally followed by relu) as float ops between the
dequantizes of its inputs and the one quantize of its output. This pass moves
the quantization parameters into the types (`!dgq.uniform`) and collapses each
partition into the single dgq op that computes it:

    dgq.quantize(relu(conv2d(dgq.dequantize(x), dgq.dequantize(w), ...)))
        -> dgq.conv2d(x, w, ...) {fused_activation = "relu"}

Ops with a fixed rule for their result grid are partitions too: average
pools keep their input's grid, softmax and sigmoid produce the fixed grid
(scale 1/256, zero point -128). Ops that only move or pick stored values
(max pool, pad, concat, nearest resize, reshapes) move to the quantized side
as they are, `op(dgq.dequantize(a)) -> dgq.dequantize(dgq.op(a))`, and the
quantize after them folds away.

Some ops exist only folded into a neighbour: a zero `F.pad` into the conv2d or
avg_pool2d after it (`FoldPadIntoConv2d`, `FoldPadIntoAvgPool2d`), a batch norm
into the linear before it (`FoldBatchNormIntoLinear`), a `permute(x, [0, 2, 3,
1])` into the flatten after it (`dg.Flatten`, `LegalizeChannelsLastFlatten`).

Graph inputs keep their `dgq.quantize` and graph outputs their
`dgq.dequantize`. Any dgtorch op left afterwards (a standalone relu, a dilated
convolution, ...), and any `dgq.pad` that folded into nothing, fails the pass
with a diagnostic at the op's location: the pattern that would have converted
the op explains why it did not (`ExplainingPattern.explain`).

The patterns live in `dg.lowering.dgtorch_to_dgq`, one module per op family.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriteWalker,
    RewritePattern,
)

from dg.dialects import dgq
from dg.lowering.diagnostics import Legality, Reason, check_legality
from dg.lowering.pad_folding import unfoldable_pad_problem
from dg.lowering.registry import Stage, instantiate_patterns

PASS_NAME = "convert-dgtorch-to-dgq"

NO_DGQ_EQUIVALENT = Reason(
    "no-dgq-equivalent",
    "no dgq equivalent: expected every float operand to be a dequantized value "
    "and the result to be quantized once (a torchao partition)",
)
"""The reason of a leftover op that no pattern explains."""

# Rewriting: each pattern matches its own root op, or the same root with different operands
# (a flatten of a permute or of a dequantize; a quantize of a different partition op, of a
# relu, or of a dequantize), so no two patterns can both rewrite an op and their order
# changes no result. Explaining: the first pattern with an explanation wins (the registry's
# row order, `patterns_of`).
PATTERNS: tuple[RewritePattern, ...] = instantiate_patterns(Stage.TO_DGQ)
"""The patterns of the pass, in the order they are tried and asked for explanations."""


def is_legal(op: Operation) -> bool:
    """Whether `op` may be left in the pass's output: no dgtorch op, no pad left unfolded."""
    # A dgq.pad is only an intermediate step: it must have folded into its user.
    if isinstance(op, dgq.PadOp) or unfoldable_pad_problem(op) is not None:
        return False
    return op.dialect_name() != "dgtorch"


LEGALITY = Legality(is_legal, PATTERNS, fallback=NO_DGQ_EQUIVALENT)


@dataclass(frozen=True)
class ConvertDgtorchToDgqPass(ModulePass):
    """Legalize a dgtorch module (as imported from `convert_pt2e`) into dgq."""

    name = PASS_NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier(list(PATTERNS))).rewrite_module(op)
        check_legality(PASS_NAME, op, LEGALITY)
