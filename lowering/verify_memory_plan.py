"""`dghw-verify-memory-plan`: check a memory plan from the IR alone.

Whoever wrote the plan (`dghw-plan-memory`, a hand-written `.mlir`, another tool), a plan
is valid when:

- `@main` carries the totals and every activation tensor and constant an offset;
- every offset is a multiple of `ALIGNMENT` and every buffer ends inside its region
  (`arena_bytes` for activations, `constant_bytes` for constants);
- no two tensors live at the same step share a byte, unless one is the other's alias or
  was written over it in place, at the same offset (`memory_liveness.may_share`);
- no two constants share a byte (all of them are live all the time).

Each violation is one diagnostic naming both tensors; the pass reports all of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from dg.lowering.diagnostics import LoweringProblem, Reason, raise_problems
from dg.lowering.memory_liveness import (
    ALIGNMENT,
    Liveness,
    liveness,
    may_share,
    unplannable,
)
from dg.lowering.memory_plan import (
    MemoryPlan,
    PlannedBuffer,
    describe_owner,
    offset_of,
    plan_totals,
    read_plan,
)

PASS_NAME = "dghw-verify-memory-plan"

NO_PLAN = Reason(
    "memory-plan-missing",
    "@main has no memory plan (the 'dghw.memory_plan' attribute with arena_bytes, "
    "lower_bound_bytes and constant_bytes)",
    "run dghw-plan-memory first",
)
NO_OFFSET = Reason(
    "memory-plan-no-offset",
    "{value} has no 'dghw.offset': every activation tensor and constant needs one",
)
MISALIGNED = Reason(
    "memory-plan-misaligned",
    "{value} is at offset {offset}, which is not a multiple of {alignment}",
)
OUTSIDE_REGION = Reason(
    "memory-plan-outside-region",
    "{value} occupies bytes [{offset}, {end}) but the {region} has {limit} bytes",
)
OVERLAP = Reason(
    "memory-plan-overlap",
    "{first} and {second} are both live at step {step} but share bytes: "
    "[{first_offset}, {first_end}) and [{second_offset}, {second_end})",
)
REASONS = (NO_PLAN, NO_OFFSET, MISALIGNED, OUTSIDE_REGION, OVERLAP)


def describe_value(value: SSAValue) -> str:
    """``%name (dghw.conv2d at model.py:3)``, as much of it as is known."""
    op, source, _ = describe_owner(value)
    name = f"%{value.name_hint}" if value.name_hint else "the tensor"
    where = f" at {source}" if source else ""
    return f"{name} ({op}{where})"


def anchor(value: SSAValue) -> Operation:
    """The op a diagnostic about `value` points at: its defining op, or the function."""
    if isinstance(value, BlockArgument):
        parent = value.block.parent_op()
        assert parent is not None
        return parent
    assert isinstance(value.owner, Operation)
    return value.owner


def _offset_problems(function: func.FuncOp, live: Liveness) -> Iterator[LoweringProblem]:
    values = [*live.lifetimes, *(c.result for c in live.constants)]
    for value in values:
        offset = offset_of(value)
        if offset is None:
            yield NO_OFFSET.at(anchor(value), value=describe_value(value))
        elif offset % ALIGNMENT:
            fields = {"value": describe_value(value), "offset": offset, "alignment": ALIGNMENT}
            yield MISALIGNED.at(anchor(value), **fields)


def _region_problems(plan: MemoryPlan) -> Iterator[LoweringProblem]:
    for buffers, region, limit in (
        (plan.buffers, "arena", plan.peak_bytes),
        (plan.constants, "constant region", plan.constant_bytes),
    ):
        for b in buffers:
            if b.end > limit:
                fields = {"offset": b.offset, "end": b.end, "region": region, "limit": limit}
                yield OUTSIDE_REGION.at(anchor(b.value), value=describe_value(b.value), **fields)


def _overlap(a: PlannedBuffer, b: PlannedBuffer, step: int) -> LoweringProblem:
    first, second = sorted((a, b), key=lambda x: (x.first, x.offset))
    return OVERLAP.at(
        anchor(second.value),
        first=describe_value(first.value),
        second=describe_value(second.value),
        step=step,
        first_offset=first.offset,
        first_end=first.end,
        second_offset=second.offset,
        second_end=second.end,
    )


def _overlap_problems(plan: MemoryPlan, live: Liveness) -> Iterator[LoweringProblem]:
    """Pairs of live-together tensors sharing bytes (a sweep over the steps)."""
    active: list[PlannedBuffer] = []
    for b in sorted(plan.buffers, key=lambda x: x.first):
        active = [a for a in active if a.last >= b.first]
        for a in active:
            if a.offset < b.end and b.offset < a.end:
                shared = a.offset == b.offset and may_share(a.value, b.value, live)
                if not shared:
                    yield _overlap(a, b, max(a.first, b.first))
        active.append(b)
    constants = sorted(plan.constants, key=lambda x: x.offset)
    for a, b in zip(constants, constants[1:], strict=False):
        if b.offset < a.end:
            yield _overlap(a, b, 0)


def plan_problems(function: func.FuncOp) -> list[LoweringProblem]:
    """Every violation of the plan in `function` (docstring rules); empty when it is valid."""
    if plan_totals(function) is None:
        return [NO_PLAN.at(function)]
    if dynamic := unplannable(function):
        return dynamic
    live = liveness(function)
    problems = list(_offset_problems(function, live))
    if problems:
        return problems
    plan = read_plan(function, live)
    assert plan is not None
    return [*_region_problems(plan), *_overlap_problems(plan, live)]


def check_plan(pass_name: str, function: func.FuncOp) -> None:
    """Fail `pass_name` with every violation of `function`'s plan."""
    problems = plan_problems(function)
    if problems:
        raise_problems(pass_name, problems)


@dataclass(frozen=True)
class VerifyMemoryPlanPass(ModulePass):
    """Check the memory plan of `@main` (`dghw-plan-memory`'s, or one written by hand)."""

    name = PASS_NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.ops:
            if isinstance(function, func.FuncOp) and function.sym_name.data == "main":
                check_plan(PASS_NAME, function)
