"""`convert-dgq-to-dghw`: from quantized dgq ops to the dg accelerator's integer ops.

dgq says *what* each op computes on real values; dghw says *how* in integers:
feature maps become NHWC, conv weights OHWI, and every change of
quantization grid becomes an explicit `dghw.rescale` (TOSA multiplier/shift).

The lowering walks forward. Each pattern replaces one dgq op by dghw ops and
hands its result on as

    %v = builtin.unrealized_conversion_cast %dghw_value : <dghw type> to <dgq type>

so a consumer reads the dghw value (in device layout) from the cast's input
and the quantization parameters from the cast's result type. Rank-4 values
are always NHWC on the device; every other rank keeps torch's layout. Casts
that end up unused are erased; a used one means its consumer was not lowered,
which fails the pass.

Quantize and dequantize exist on the device only at the function boundary
(`dgq_to_dghw.quantization`); flatten-before-linear and layout round trips
fold away (`dgq_to_dghw.weights`, `dgq_to_dghw.layout`).

The patterns live in `dg.lowering.dgq_to_dghw`, one module per op family; each
says why it leaves an op unconverted, so this module only assembles them and
checks what is left.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType, UnrealizedConversionCastOp
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from dg.dialects import dgq
from dg.lowering.dgq_to_dghw.activations import sigmoid_table
from dg.lowering.dgq_to_dghw.common import PASS_NAME, lowered
from dg.lowering.dgq_to_dghw.norm import NormParameterError, NormParameters, norm_parameters
from dg.lowering.dgq_to_dghw.sequence import softmax_exp_bits, softmax_exp_table
from dg.lowering.diagnostics import (
    ExplainingPattern,
    Legality,
    LoweringProblem,
    Reason,
    all_reasons,
    check_legality,
)
from dg.lowering.registry import Stage, instantiate_patterns

__all__ = [
    "PASS_NAME",
    "PATTERNS",
    "ConvertDgqToDghwPass",
    "NormParameterError",
    "NormParameters",
    "is_legal",
    "norm_parameters",
    "sigmoid_table",
    "softmax_exp_bits",
    "softmax_exp_table",
]

PATTERNS: tuple[RewritePattern, ...] = instantiate_patterns(Stage.TO_DGHW)
"""Every pattern of the pass, from the registry's rows. No two match the same op (a conv or
avg pool folds a pad only when its input is not lowered yet), so their order does not change
the result."""

NO_DGHW_LOWERING = Reason("no-dghw-lowering", "has no dghw lowering")
OPERAND_NOT_LOWERED = Reason(
    "dghw-operand-not-lowered", "operand #{index} comes from {producer}, which was not lowered"
)
ESCAPING_DGQ_VALUE = Reason(
    "dghw-escaping-dgq-value", "a quantized dgq value reaches {users}, which cannot take it"
)
NON_INTEGER_SIGNATURE = Reason(
    "dghw-non-integer-signature",
    "signature {signature} is not integer-only: every argument must enter through one "
    "dgq.quantize and every result leave through dgq.dequantize",
)

LEGAL_NON_DGHW_OPS = (ModuleOp, func.FuncOp, func.ReturnOp)


def is_legal(op: Operation) -> bool:
    """Whether `op` may stay after the lowering: dghw ops and the function structure."""
    if isinstance(op, UnrealizedConversionCastOp):
        # A cast left in use stands for an unconverted consumer; that consumer is reported,
        # unless it is legal itself (then the dgq value escapes into it).
        return all(not is_legal(use.operation) for use in op.results[0].uses)
    return op.dialect_name() == "dghw" or isinstance(op, LEGAL_NON_DGHW_OPS)


def escaping_value_problem(op: Operation) -> LoweringProblem | None:
    """A lowered value's cast that a legal op uses: the dgq value escapes into it."""
    if not isinstance(op, UnrealizedConversionCastOp):
        return None
    users = ", ".join(sorted({f"'{use.operation.name}'" for use in op.results[0].uses}))
    return ESCAPING_DGQ_VALUE.at(op, users=users)


class UnloweredOperands(ExplainingPattern):
    """Explains an op that no lowering pattern explained by an operand whose producer was
    not lowered (that producer is reported too, with its own reason).

    It rewrites nothing: it is asked last, after every pattern of `PATTERNS`.
    """

    reasons = (OPERAND_NOT_LOWERED,)

    def explain(self, op: Operation) -> LoweringProblem | None:
        for index, operand in enumerate(op.operands):
            if lowered(operand) is None and not isinstance(operand.owner, dgq.ConstantOp):
                owner = operand.owner
                producer = owner.name if isinstance(owner, Operation) else "an argument"
                return OPERAND_NOT_LOWERED.at(op, index=index, producer=producer)
        return None

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        return


LEGALITY = Legality(
    is_legal, (*PATTERNS, UnloweredOperands()), NO_DGHW_LOWERING, (escaping_value_problem,)
)
"""What the lowering leaves legal, and why each op left over is."""


def _is_integer_tensor(value_type: Attribute) -> bool:
    return isinstance(value_type, TensorType) and isinstance(value_type.element_type, IntegerType)


def has_integer_signature(op: Operation) -> bool:
    """Whether `op`, if it is a function, takes and returns integer tensors only."""
    if not isinstance(op, func.FuncOp):
        return True
    signature = op.function_type
    return all(_is_integer_tensor(t) for t in (*signature.inputs, *signature.outputs))


def signature_problem(op: Operation) -> LoweringProblem | None:
    """A function whose signature still holds a float (it belongs to no pattern)."""
    if has_integer_signature(op):
        return None
    assert isinstance(op, func.FuncOp)
    return NON_INTEGER_SIGNATURE.at(op, signature=op.function_type)


SIGNATURE_LEGALITY = Legality(has_integer_signature, (), NO_DGHW_LOWERING, (signature_problem,))

REASONS: tuple[Reason, ...] = (
    *dict.fromkeys(all_reasons(LEGALITY.patterns)),
    NO_DGHW_LOWERING,
    ESCAPING_DGQ_VALUE,
    NON_INTEGER_SIGNATURE,
)
"""Every reason the pass can report (tests check that each one is produced)."""


@dataclass(frozen=True)
class ConvertDgqToDghwPass(ModulePass):
    """Lower a dgq module to dghw: integer-only, NHWC, explicit rescales."""

    name = PASS_NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier(list(PATTERNS))).rewrite_module(op)
        check_legality(PASS_NAME, op, LEGALITY)
        # Only now: an op left over usually leaves a float in the signature as well.
        check_legality(PASS_NAME, op, SIGNATURE_LEGALITY)
