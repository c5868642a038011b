"""`convert-dghw-to-tosa`: a dghw module as TOSA 1.0 MLIR computing the same integers.

The output is what the TOSA reference tools accept: `tosa-opt
--tosa-attach-target="profiles=pro_int" --tosa-validate` passes it and
`--tosa-serialize` turns it into the flatbuffer `tosa_reference_model` runs
(`runtime/tosa_reference.py` does both and compares with the device model).
`docs/tosa.md` has the op-by-op mapping; `docs/dghw.md` states why each
mapping computes dghw's integers.

- TOSA 1.0 has no dynamic extents, so the batch axis becomes the pass option
  `batch` (default 1) everywhere, the signature included.
- Zero points, rescale multipliers and shifts are operands fed by `tosa.const`;
  shapes, starts, paddings and resize scales are `tosa.const_shape` operands.
- TOSA's windowed ops require the window count to divide the padded extent
  exactly; dghw's floor and ceil counts are met by trimming the bottom/right
  padding (or slicing off input rows no window reads) and by padding the
  ceil-mode overhang, which TOSA skips like dghw.
- Ops with no TOSA counterpart are decomposed into TOSA ops computing the same
  integers: `dghw.fully_connected` is a 1x1 CONV2D, `dghw.mul` centres its
  operands with RESCALE, `dghw.softmax` is REDUCE_MAX, a GATHER of the exp
  table, REDUCE_SUM and a bit-serial rounded division in int32.
- The host quantization attributes (`dghw.scale`, `dghw.zero_point`) and
  `dg.output_structure` stay on `func.func`; tosa-opt keeps them.

The patterns live in `dg.lowering.dghw_to_tosa`, one module per op family;
this module is the pass: it runs them and explains what is left illegal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnregisteredOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriteWalker,
    RewritePattern,
)

from dg.lowering.diagnostics import (
    Legality,
    LoweringProblem,
    Reason,
    check_legality,
    raise_problems,
)
from dg.lowering.registry import Stage, instantiate_patterns

PASS_NAME = "convert-dghw-to-tosa"


def patterns(batch: int) -> tuple[RewritePattern, ...]:
    """The pass's patterns at batch `batch`, from the registry's rows: the function at a fixed
    batch, and one pattern per dghw op (each matches one op type, so their order does not
    change the result)."""
    return instantiate_patterns(Stage.TO_TOSA, batch)


LEGAL_DIALECTS = ("tosa", "func", "builtin")
"""What a TOSA module may hold: TOSA ops, the function and its return, the module."""

BATCH_NOT_POSITIVE = Reason("tosa-batch-not-positive", "batch must be >= 1, got {batch}")
NO_TOSA_LOWERING = Reason(
    "tosa-no-lowering",
    "no TOSA 1.0 lowering for '{name}': convert-dghw-to-tosa takes dghw modules "
    "(docs/tosa.md lists each dghw op's TOSA form)",
)
NORM_HAS_NO_TOSA_FORM = Reason(
    "tosa-norm-no-form",
    "has no TOSA 1.0 form: its exact algorithm (docs/dghw.md) forms 62-bit sums, an integer "
    "division and an integer square root, and TOSA 1.0's integer profile has no int64, no "
    "division and no square root; only an int32 multi-word emulation could express it "
    "(docs/tosa.md)",
)

NO_TOSA_FORM = {"dghw.norm": NORM_HAS_NO_TOSA_FORM}
"""dghw ops that TOSA 1.0 cannot express with its integer profile, and why."""

REASONS = (NO_TOSA_LOWERING, NORM_HAS_NO_TOSA_FORM, BATCH_NOT_POSITIVE)
"""Every reason the pass gives; no pattern declines an op (each converts all of its type)."""


def _is_legal(op: Operation) -> bool:
    return not isinstance(op, UnregisteredOp) and op.dialect_name() in LEGAL_DIALECTS


def explain_unconverted(op: Operation) -> LoweringProblem:
    """Why an op is left after the patterns: TOSA cannot express it, or it is no dghw op."""
    name = op.op_name.data if isinstance(op, UnregisteredOp) else op.name
    if name in NO_TOSA_FORM:
        return NO_TOSA_FORM[name].at(op)
    return NO_TOSA_LOWERING.at(op, name=name)


def legality(rewrite_patterns: Sequence[RewritePattern]) -> Legality:
    """TOSA, func and builtin ops are legal; `explain_unconverted` explains every other op
    (the fallback is never reached: it has no op name to fill in)."""
    return Legality(_is_legal, rewrite_patterns, NO_TOSA_LOWERING, (explain_unconverted,))


@dataclass(frozen=True)
class ConvertDghwToTosaPass(ModulePass):
    """Lower a dghw module to TOSA 1.0 at a fixed batch size (TOSA has no dynamic extents)."""

    name = PASS_NAME

    batch: int = field(
        default=1, metadata={"help": "the batch extent that replaces every dynamic axis 0"}
    )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.batch < 1:
            raise_problems(PASS_NAME, [BATCH_NOT_POSITIVE.at(op, batch=self.batch)])
        rewrite_patterns = patterns(self.batch)
        PatternRewriteWalker(
            GreedyRewritePatternApplier(list(rewrite_patterns)), apply_recursively=False
        ).rewrite_module(op)
        check_legality(PASS_NAME, op, legality(rewrite_patterns))
