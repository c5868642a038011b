"""Folding `dgq.pad` into the conv2d or avg_pool2d after it.

`F.pad` with zeros has no device op of its own: it is only supported as the
immediate input of a convolution or an average pool, whose own padding
absorbs it. Both conversion passes run these patterns, so a hand-written
dgq module folds its pads as an imported one does; the patterns explain a
`dgq.pad` left after them, and an average pool it cannot fold into.
"""

from __future__ import annotations

from xdsl.dialects.builtin import BoolAttr, DenseArrayBase, TensorType, i64
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from dg.dialects import dgq
from dg.dialects.common import int_array, located, window_counts
from dg.lowering.diagnostics import ExplainingPattern, LoweringProblem, Reason, describe_location

PAD_BEFORE_MAX_POOL = Reason(
    "pad-before-max-pool",
    "max_pool2d does not support padding, also not through a preceding F.pad: remove the F.pad",
)
STANDALONE_PAD = Reason(
    "standalone-pad",
    "standalone pad is not supported: F.pad is only supported as the immediate prefix of a "
    "Conv2d or AvgPool2d, into whose padding it folds",
)
PAD_NOT_FOLDED = Reason(
    "pad-not-folded-into-pool", "cannot fold into the '{user}'{where} (see its error)"
)
POOL_PAD_DIVISOR = Reason(
    "avg-pool-pad-divisor",
    "cannot absorb the F.pad before it{where}: with count_include_pad=False the pool excludes "
    "its own padding from the divisor, but PyTorch counts the F.pad zeros, and one pool cannot "
    "do both; use count_include_pad=True, or put all the padding in one of the two places",
)
POOL_PAD_CEIL = Reason(
    "avg-pool-pad-ceil",
    "cannot absorb the F.pad before it{where}: in ceil mode the pool's last window starts in "
    "the F.pad zeros, which become trailing padding in the fold, where torch's ceil rule has "
    "no window; use ceil_mode=False",
)


def where(op: Operation) -> str:
    """` at file:line:col` of `op`, or nothing when its location is unknown."""
    text = describe_location(op.location)
    return "" if text is None else f" at {text}"


def _summed_pad(pad: dgq.PadOp, own: DenseArrayBase) -> DenseArrayBase:
    """The padding of an op after a `dgq.pad` folds into it: both, side by side."""
    folded = int_array(pad.pad, "pad", 4)
    summed = [a + b for a, b in zip(folded, int_array(own, "pad", 4), strict=True)]
    return DenseArrayBase.from_list(i64, summed)


class FoldPadIntoConv2d(ExplainingPattern):
    """`dgq.conv2d(dgq.pad(a))` -> `dgq.conv2d(a)` with the pad added to its own.

    Both pad with the zero point (real 0), so the convolution reads the same values.
    It explains a leftover pad, unless an avg_pool2d it could not fold into uses it.
    """

    reasons = (PAD_BEFORE_MAX_POOL, STANDALONE_PAD)

    def explain(self, op: Operation) -> LoweringProblem | None:
        if not isinstance(op, dgq.PadOp):
            return None
        user = op.result.get_user_of_unique_use()
        if isinstance(user, dgq.AvgPool2dOp):
            return None
        if isinstance(user, dgq.MaxPool2dOp):
            return PAD_BEFORE_MAX_POOL.at(op)
        return STANDALONE_PAD.at(op)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.Conv2dOp, rewriter: PatternRewriter) -> None:
        pad = op.input.owner
        if not isinstance(pad, dgq.PadOp):
            return
        folded = dgq.Conv2dOp.build(
            operands=[pad.input, op.weight, op.bias],
            properties={**op.properties, "pad": _summed_pad(pad, op.pad)},
            result_types=[op.result.type],
        )
        rewriter.replace(op, located(folded, op))


def _keeps_window_count(op: dgq.AvgPool2dOp, pad: DenseArrayBase) -> bool:
    """Whether `op`'s result extents stay a floor or ceil window count with padding `pad`.

    In ceil mode torch drops a last window that would start in the trailing
    padding; a window starting in F.pad zeros is kept, but after the fold
    those zeros are trailing padding.
    """
    kernel, stride = int_array(op.kernel, "kernel", 2), int_array(op.stride, "stride", 2)
    pad_values = int_array(pad, "pad", 4)
    assert isinstance(op.input.type, TensorType) and isinstance(op.result.type, TensorType)
    pad_op = op.input.owner
    assert isinstance(pad_op, dgq.PadOp) and isinstance(pad_op.input.type, TensorType)
    extents = pad_op.input.type.get_shape()[2:]
    for axis, (size, count) in enumerate(zip(extents, op.result.type.get_shape()[2:], strict=True)):
        lo, hi = pad_values[2 * axis], pad_values[2 * axis + 1]
        if count not in window_counts(size, kernel[axis], stride[axis], lo, hi):
            return False
    return True


def avg_pool_fold_problem(op: dgq.AvgPool2dOp) -> Reason | None:
    """Why the `dgq.pad` before `op` cannot fold into it, or None.

    PyTorch counts the F.pad zeros in every divisor: they are input elements
    of the pool. After the fold they are padding, which is counted only with
    `count_include_pad`. That is the same when the pool counts its own
    padding too, when it has none (the fold then sets `count_include_pad`),
    or when a `divisor_override` replaces the count; otherwise the two kinds
    of padding would need different rules.
    """
    pad = op.input.owner
    assert isinstance(pad, dgq.PadOp)
    counts_all = op.divisor_override is not None or op.count_include_pad.value.data
    if not counts_all and any(int_array(op.pad, "pad", 4)):
        return POOL_PAD_DIVISOR
    if not _keeps_window_count(op, _summed_pad(pad, op.pad)):
        return POOL_PAD_CEIL
    return None


def unfoldable_pad_problem(op: Operation) -> LoweringProblem | None:
    """For an avg_pool2d after a `dgq.pad` that cannot fold into it: why."""
    if not isinstance(op, dgq.AvgPool2dOp) or not isinstance(op.input.owner, dgq.PadOp):
        return None
    reason = avg_pool_fold_problem(op)
    return None if reason is None else reason.at(op, where=where(op.input.owner))


class FoldPadIntoAvgPool2d(ExplainingPattern):
    """`dgq.avg_pool2d(dgq.pad(a))` -> `dgq.avg_pool2d(a)` with the pad added to its own,
    keeping torch's divisors exactly (see `avg_pool_fold_problem`)."""

    reasons = (POOL_PAD_DIVISOR, POOL_PAD_CEIL, PAD_NOT_FOLDED)

    def explain(self, op: Operation) -> LoweringProblem | None:
        if isinstance(op, dgq.PadOp):
            user = op.result.get_user_of_unique_use()
            if isinstance(user, dgq.AvgPool2dOp) and unfoldable_pad_problem(user) is not None:
                return PAD_NOT_FOLDED.at(op, user=user.name, where=where(user))
            return None
        return unfoldable_pad_problem(op)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: dgq.AvgPool2dOp, rewriter: PatternRewriter) -> None:
        pad = op.input.owner
        if not isinstance(pad, dgq.PadOp) or avg_pool_fold_problem(op) is not None:
            return
        properties = {**op.properties, "pad": _summed_pad(pad, op.pad)}
        if op.divisor_override is None:
            # The pool had no padding of its own, or counted it: now all padding counts.
            properties["count_include_pad"] = BoolAttr.from_bool(True)
        folded = dgq.AvgPool2dOp.build(
            operands=[pad.input], properties=properties, result_types=[op.result.type]
        )
        rewriter.replace(op, located(folded, op))


PAD_FOLDS = (FoldPadIntoConv2d(), FoldPadIntoAvgPool2d())


def explain_leftover_pad(op: Operation) -> LoweringProblem | None:
    """What the pad folds say of `op` (a pad left over, or a pool it could not fold into)."""
    return next((p for fold in PAD_FOLDS if (p := fold.explain(op)) is not None), None)
