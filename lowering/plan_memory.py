"""`dghw-plan-memory`: give every activation tensor of `@main` a byte offset in one arena.

The device runs the batch items one after another, so the plan is per batch item. Tensors
that may share bytes (`memory_liveness`: a reshape's result is its operand; an elementwise
op writes over an operand it is the last to read) are grouped, each group at one offset;
the most sharing gives the lower bound. Placement (`placement`) is greedy by size (TFLite
Micro's and TVM USMP's `greedy_by_size`): the largest group first, each at the lowest
offset where it overlaps no group placed so far that is live at the same time, in a few
orders. While that misses the bound, the same is tried with narrowing in-place writes
undone where they fit (`without_narrowing_writes`: a group's one offset pins a small
long-lived tensor to a large short-lived one) and with aliases only; then a hill climb and
single undone writes improve the best. The smallest arena is kept.

Constants go to a separate read-only region, one after another in program order. The
totals go on `@main` (`memory_plan`); `dghw-verify-memory-plan` checks the result, and the
pass runs it before returning. With `sram-bytes`, a plan whose arena exceeds that budget
fails the pass at the op where the arena peaks (`target.check_sram_budget`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from dg.lowering.diagnostics import raise_problems
from dg.lowering.memory_liveness import (
    Lifetime,
    Liveness,
    align,
    is_alias,
    live_bytes,
    liveness,
    may_write_in_place,
    tensor_bytes,
    unplannable,
)
from dg.lowering.memory_plan import (
    MemoryPlan,
    plan_totals,
    read_plan,
    set_offset,
    set_plan_totals,
)
from dg.lowering.placement import best_placement, conflicts
from dg.lowering.target import check_sram_budget
from dg.lowering.verify_memory_plan import check_plan

PASS_NAME = "dghw-plan-memory"


@dataclass
class Group:
    """Tensors sharing one offset, and the offset once placed."""

    members: list[Lifetime]
    offset: int = -1
    written_in_place: list[int] = field(default_factory=list)
    """Indices of the members an op wrote over the member before (the rest are aliases):
    where the group may be split in two without breaking an alias."""

    def split(self, index: int) -> tuple[Group, Group]:
        """The members before `index` (an in-place write) and from it on, as two groups."""
        before = [i for i in self.written_in_place if i < index]
        after = [i - index for i in self.written_in_place if i > index]
        return Group(self.members[:index], -1, before), Group(self.members[index:], -1, after)

    @property
    def size(self) -> int:
        return max(m.size for m in self.members)

    @property
    def first(self) -> int:
        return min(m.first for m in self.members)

    @property
    def last(self) -> int:
        return max(m.last for m in self.members)


def sharing_groups(live: Liveness, in_place: bool = True) -> list[Group]:
    """Arguments and op results grouped by alias and (with `in_place`) in-place writes.

    An op writes in place over an operand only when the operand's whole group dies at the
    op (a reshape of it read later keeps the bytes live), and over one operand at most.
    """
    group_of: dict[SSAValue, Group] = {}
    groups: list[Group] = []
    for value in live.function.body.block.args:
        group_of[value] = Group([live.lifetimes[value]])
        groups.append(group_of[value])
    for step, op in enumerate(live.steps, start=1):
        for result in op.results:
            target, written_in_place = _shared_group(op, step, live, group_of, in_place)
            if target is None:
                target = Group([])
                groups.append(target)
            if written_in_place:
                target.written_in_place.append(len(target.members))
            target.members.append(live.lifetimes[result])
            group_of[result] = target
    return groups


def _shared_group(
    op: Operation, step: int, live: Liveness, group_of: dict[SSAValue, Group], in_place: bool
) -> tuple[Group | None, bool]:
    """The group `op`'s result joins, if any, and whether it joins by an in-place write."""
    for operand in dict.fromkeys(op.operands):
        group = group_of.get(operand)
        if group is None:
            continue
        if is_alias(op, operand):
            return group, False
        if in_place and may_write_in_place(op, operand, live) and group.last == step:
            return group, True
    return None, False


def without_narrowing_writes(
    groups: list[Group], live_totals: list[int], bound: int
) -> list[Group]:
    """`groups` with each in-place write of a smaller result over a larger tensor undone,
    where the two side by side still fit `bound` at that step (`live_totals`, the bytes live
    per step, is updated).

    A group has one offset, so an int8 result written over its int32 accumulators (a
    residual stream after its add, a layer's output after its matmul) pins a small tensor
    that lives long to the low end of a large one that lives briefly: everything live
    beside the large one must then sit around the small one, which fragments the arena.
    Undone, the small tensor is a group of its own and goes wherever it fits.
    """
    result = []
    for group in groups:
        for k in sorted(group.written_in_place, reverse=True):
            written, over = group.members[k], group.members[k - 1]
            if written.size < over.size and live_totals[written.first] + written.size <= bound:
                live_totals[written.first] += written.size
                group, tail = group.split(k)
                result.append(tail)
        result.append(group)
    return result


SPLIT_TRIES = 64
"""In-place writes `best_sharing` tries undoing, one at a time, while the arena exceeds the
lower bound."""
SPLIT_CLIMB_TRIES = 50
"""Hill-climb steps of each such trial (fewer than a full placement's: there are many)."""


def _placed(groups: list[Group], lower_bound: int, tries: int | None = None) -> int:
    table = conflicts([g.members for g in groups])
    arena, offsets = best_placement(table, lower_bound, tries)
    for group, offset in zip(groups, offsets, strict=True):
        group.offset = offset
    return arena


def _single_splits(groups: list[Group], arena: int, lower_bound: int) -> tuple[int, list[Group]]:
    """Undo single in-place writes while that shrinks the arena (up to `SPLIT_TRIES`)."""
    tried = 0
    improved = True
    while improved and arena > lower_bound and tried < SPLIT_TRIES:
        improved = False
        splits = [(i, k) for i, g in enumerate(groups) for k in g.written_in_place]
        for i, k in splits[: SPLIT_TRIES - tried]:
            tried += 1
            trial = [*groups[:i], *groups[i].split(k), *groups[i + 1 :]]
            found = _placed(trial, lower_bound, tries=SPLIT_CLIMB_TRIES)
            if found < arena:
                arena, groups, improved = found, trial, True
                break
    return arena, groups


def best_sharing(
    live: Liveness, shared: list[Group], live_totals: list[int]
) -> tuple[int, list[Group]]:
    """Place the groups of the most sharing, then, while the arena exceeds the lower bound,
    the same with narrowing writes undone where they fit (`without_narrowing_writes`) and
    with aliases only; the best of those is improved by a hill climb and by undoing single
    in-place writes. The smallest arena wins (the most sharing among equals); offsets are
    set on the winning groups. `live_totals` are the bytes live per step under `shared`."""
    lower_bound = max(live_totals)
    candidates = [
        lambda: shared,
        lambda: without_narrowing_writes(shared, list(live_totals), lower_bound),
        lambda: sharing_groups(live, in_place=False),
    ]
    arena, groups = -1, shared
    for candidate in candidates:
        trial = candidate()
        found = _placed(trial, lower_bound, tries=0)
        if found <= lower_bound:
            return found, trial
        if arena < 0 or found < arena:
            arena, groups = found, trial
    arena = _placed(groups, lower_bound)
    arena, groups = _single_splits(groups, arena, lower_bound)
    return _placed(groups, lower_bound), groups


def plan_function(function: func.FuncOp) -> MemoryPlan:
    """Plan `function` in place (its attributes), and return the plan as read back."""
    problems = unplannable(function)
    if problems:
        raise_problems(PASS_NAME, problems)
    live = liveness(function)
    shared = sharing_groups(live)
    # No plan under these rules can beat the most sharing they allow.
    live_totals = live_bytes(live, [[m.value for m in g.members] for g in shared])
    lower_bound = max(live_totals)
    arena, groups = best_sharing(live, shared, live_totals)
    for group in groups:
        for member in group.members:
            set_offset(member.value, group.offset)
    constant_end = 0
    for constant in live.constants:
        set_offset(constant.result, constant_end)
        constant_end += align(tensor_bytes(constant.result))
    totals = {"arena_bytes": arena, "lower_bound_bytes": lower_bound}
    set_plan_totals(function, {**totals, "constant_bytes": constant_end})
    plan = read_plan(function, live)
    assert plan is not None
    return plan


def main_function(module: ModuleOp) -> func.FuncOp | None:
    return next(
        (op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main"),
        None,
    )


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """Plan every activation tensor of `@main` into one arena and every constant into a
    read-only region (attributes `dghw.offset`, `dghw.memory_plan`), then verify the plan."""

    name = PASS_NAME

    sram_bytes: int | None = field(
        default=None,
        metadata={"help": "the on-chip SRAM budget in bytes; a plan whose peak exceeds it fails"},
    )
    """A budget for the arena: fail at the op where the plan exceeds it."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        function = main_function(op)
        if function is None:
            return
        plan = plan_function(function)
        check_plan(PASS_NAME, function)
        if self.sram_bytes is not None:
            check_sram_budget(PASS_NAME, plan, self.sram_bytes)


def planned_copy(module: ModuleOp) -> tuple[ModuleOp, MemoryPlan]:
    """A copy of `module` with a memory plan, and the plan: the module's own plan when it
    has one (verified; a LoweringError if wrong), else a fresh one. `module` is unchanged."""
    copy = module.clone()
    function = main_function(copy)
    if function is None:
        raise ValueError("the module has no function @main to plan")
    if plan_totals(function) is not None:
        check_plan(PASS_NAME, function)
        plan = read_plan(function)
        assert plan is not None
        return copy, plan
    return copy, plan_function(function)
