"""What the memory planner and its verifier both read from a dghw `@main`: steps, lifetimes
and the ways two activation tensors may share bytes.

The device runs the ops of `@main` one after another, one batch item at a time, so
everything here is per batch item. Step 0 is the host writing the arguments, step k the
k-th op that is not a `dghw.constant`, and the last step the host reading the results
(`func.return`). An activation tensor (an argument or an op's result, not a constant) is
*live* from the step that defines it to the step of its last use, both included; a tensor
nothing reads is live at its own step only.

Two tensors live at the same step need disjoint bytes, except in two cases where one
writes over the other, as the device can:

- *alias*: a `dghw.reshape` moves no bytes (row-major, batch axis kept), so its result is
  its operand's bytes, read with another shape;
- *in place*: an elementwise op (`ELEMENTWISE_OPS`) whose result has the operand's element
  count and no wider elements may write its result over an operand whose last use it is:
  element i of the result is written after element i of the operand was read, and no
  later element of the operand lies below it.

`docs/deployment.md` states the rules; `dghw-plan-memory` and `dghw-verify-memory-plan`
follow them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerType, TensorType
from xdsl.ir import Operation, SSAValue

from dg.dialects import dghw
from dg.lowering.diagnostics import LoweringProblem, Reason

ALIGNMENT = 16
"""Bytes every buffer's offset and size are a multiple of: the burst of the device's DMA (and
Ethos-U's tensor alignment). Sizes are rounded up to it everywhere, the lower bound included."""

OFFSET_ATTR = "dghw.offset"
"""Byte offset of a tensor in its region: on an op producing an activation (the arena), a
`dghw.constant` (the read-only constant region), and a `func.func` argument's attributes."""

PLAN_ATTR = "dghw.memory_plan"
"""The plan's totals on `func.func @main`: `arena_bytes`, `lower_bound_bytes`, `constant_bytes`."""

ELEMENTWISE_OPS: tuple[type[Operation], ...] = (
    dghw.RescaleOp,
    dghw.AddOp,
    dghw.MulOp,
    dghw.TableOp,
    dghw.ShiftOp,
    dghw.BitwiseOp,
    dghw.CompareOp,
    dghw.BitwiseTensorOp,
    dghw.CompareTensorOp,
)
"""Ops computing element i of the result from element i of each activation operand only."""

DYNAMIC_ITEM = Reason(
    "memory-plan-dynamic-item",
    "cannot plan {what}: only the batch axis may be dynamic, got {type}",
)


def align(size: int) -> int:
    return -(-size // ALIGNMENT) * ALIGNMENT


def element_bytes(value: SSAValue) -> int:
    t = value.type
    assert isinstance(t, TensorType) and isinstance(t.element_type, IntegerType)
    return t.element_type.width.data // 8


def item_elements(value: SSAValue) -> int | None:
    """Elements of one batch item of `value`, None when an axis other than 0 is dynamic."""
    t = value.type
    assert isinstance(t, TensorType)
    n = 1
    for d in t.get_shape()[1:]:
        if d == DYNAMIC_INDEX:
            return None
        n *= d
    return n


def item_bytes(value: SSAValue) -> int:
    """Bytes of one batch item of `value`, before alignment (`item_elements` must be known)."""
    elements = item_elements(value)
    assert elements is not None
    return elements * element_bytes(value)


def tensor_bytes(value: SSAValue) -> int:
    """Bytes of a whole static tensor (a constant: it has no batch axis)."""
    t = value.type
    assert isinstance(t, TensorType)
    n = 1
    for d in t.get_shape():
        n *= d
    return n * element_bytes(value)


@dataclass(frozen=True)
class Lifetime:
    """One activation tensor: its bytes per batch item (aligned) and its live steps."""

    value: SSAValue
    size: int
    first: int
    last: int

    def overlaps(self, other: Lifetime) -> bool:
        return self.first <= other.last and other.first <= self.last


@dataclass(frozen=True)
class Liveness:
    """The steps of a function and the lifetime of each of its activation tensors."""

    function: func.FuncOp
    steps: tuple[Operation, ...]
    """The op of each step from 1 on (step 0 is the arguments); the last is `func.return`."""
    lifetimes: dict[SSAValue, Lifetime]
    constants: tuple[dghw.ConstantOp, ...]

    def step_of(self, op: Operation) -> int:
        return self.steps.index(op) + 1

    @property
    def step_count(self) -> int:
        """Steps including step 0 (the arguments) and the return."""
        return len(self.steps) + 1


def activation_values(function: func.FuncOp) -> Iterator[SSAValue]:
    """Every argument and every result of an op other than `dghw.constant`, in order."""
    block = function.body.block
    yield from block.args
    for op in block.ops:
        if not isinstance(op, dghw.ConstantOp):
            yield from op.results


def unplannable(function: func.FuncOp) -> list[LoweringProblem]:
    """One problem per activation tensor with a dynamic axis other than the batch axis."""
    return [
        DYNAMIC_ITEM.at(
            value.owner if isinstance(value.owner, Operation) else function,
            what="a tensor",
            type=str(value.type),
        )
        for value in activation_values(function)
        if item_elements(value) is None
    ]


def liveness(function: func.FuncOp) -> Liveness:
    """Steps and lifetimes of `function` (its single block; `unplannable` must be empty)."""
    block = function.body.block
    constants = tuple(op for op in block.ops if isinstance(op, dghw.ConstantOp))
    steps = tuple(op for op in block.ops if not isinstance(op, dghw.ConstantOp))
    step = {op: i + 1 for i, op in enumerate(steps)}
    lifetimes: dict[SSAValue, Lifetime] = {}
    for value in activation_values(function):
        owner = value.owner
        first = step[owner] if isinstance(owner, Operation) else 0
        last = max((step[use.operation] for use in value.uses), default=first)
        lifetimes[value] = Lifetime(value, align(item_bytes(value)), first, last)
    return Liveness(function, steps, lifetimes, constants)


def is_alias(op: Operation, operand: SSAValue) -> bool:
    """`op`'s result may be `operand`'s own bytes (a reshape)."""
    return isinstance(op, dghw.ReshapeOp) and operand is op.input


def may_write_in_place(op: Operation, operand: SSAValue, live: Liveness) -> bool:
    """`op` may write its result over `operand`: an elementwise op at `operand`'s last use,
    the same element count, elements no wider than the operand's."""
    if not isinstance(op, ELEMENTWISE_OPS) or operand not in live.lifetimes:
        return False
    result = op.results[0]
    return (
        live.lifetimes[operand].last == live.step_of(op)
        and item_elements(result) == item_elements(operand)
        and element_bytes(result) <= element_bytes(operand)
    )


def may_share(a: SSAValue, b: SSAValue, live: Liveness) -> bool:
    """`a` and `b`, at the same offset, may overlap: one is the other's alias or was
    written over it in place (the rules of this module's docstring)."""
    for x, y in ((a, b), (b, a)):
        op = y.owner
        if isinstance(op, Operation) and x in op.operands:
            if is_alias(op, x) or may_write_in_place(op, x, live):
                return True
    return False


def live_bytes(live: Liveness, groups: Sequence[Sequence[SSAValue]]) -> list[int]:
    """Bytes live at each step when each group of tensors shares one offset: per group, the
    largest of its tensors live at that step."""
    totals = [0] * live.step_count
    for group in groups:
        largest = [0] * len(totals)
        for value in group:
            lifetime = live.lifetimes[value]
            for t in range(lifetime.first, lifetime.last + 1):
                largest[t] = max(largest[t], lifetime.size)
        for t, size in enumerate(largest):
            totals[t] += size
    return totals
