"""A memory plan as `dghw-plan-memory` writes it into the IR, and as Python reads it back.

In the IR (so dg-opt prints it, lit checks it and `dg.load` keeps it):

- `dghw.offset = N : i64` on every op producing an activation tensor, and in the argument
  attributes of `@main`: the tensor's byte offset in the arena, per batch item;
- `dghw.offset = N : i64` on every `dghw.constant`: its offset in the read-only constant region;
- `dghw.memory_plan = {arena_bytes, lower_bound_bytes, constant_bytes}` on `@main`.

`read_plan` turns that into a `MemoryPlan` (`Program.memory_plan`), with each buffer's
lifetime, its op and the user's source line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, i64
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from dg.lowering.diagnostics import source_of
from dg.lowering.memory_liveness import (
    OFFSET_ATTR,
    PLAN_ATTR,
    Liveness,
    align,
    liveness,
    tensor_bytes,
)

PLAN_FIELDS = ("arena_bytes", "lower_bound_bytes", "constant_bytes")


@dataclass(frozen=True)
class PlannedBuffer:
    """One tensor of a plan: where it lives per batch item, and when."""

    value: SSAValue = field(repr=False, compare=False)
    op: str
    """The defining op's name, or ``argument #i`` for an argument of @main."""
    source: str
    """The user's ``file:line`` of the defining op, empty when unknown."""
    module_path: str
    offset: int
    size: int
    """Bytes per batch item, rounded up to `memory_liveness.ALIGNMENT`."""
    first: int
    last: int
    """Steps (`memory_liveness`): 0 is the arguments, k the k-th op, the last the return."""

    @property
    def end(self) -> int:
        return self.offset + self.size

    def __str__(self) -> str:
        where = f" at {self.source}" if self.source else ""
        inside = f" ({self.module_path})" if self.module_path else ""
        return f"{self.op}{where}{inside}: {self.size} B at +{self.offset}"


@dataclass(frozen=True)
class MemoryPlan:
    """Where every tensor of `@main` lives on the device, per batch item.

    `peak_bytes` is the arena's size (the highest end of any buffer); `lower_bound_bytes`
    the most bytes live at any one step, which no placement can beat; `constant_bytes` the
    read-only region of weights, biases and other `dghw.constant` tensors.
    """

    peak_bytes: int
    lower_bound_bytes: int
    constant_bytes: int
    buffers: tuple[PlannedBuffer, ...]
    constants: tuple[PlannedBuffer, ...]
    step_ops: tuple[Operation, ...] = field(repr=False, compare=False)
    """The op of each step from 1 on (the last is `func.return`)."""

    def live_at(self, step: int) -> list[PlannedBuffer]:
        return [b for b in self.buffers if b.first <= step <= b.last]

    def occupancy(self) -> list[int]:
        """Per step, the highest byte of the arena in use: the arena's fill over the op sequence."""
        return [
            max((b.end for b in self.live_at(t)), default=0) for t in range(len(self.step_ops) + 1)
        ]

    def live_bytes(self) -> list[int]:
        """Per step, the bytes of the tensors live (tensors sharing an offset counted once)."""
        totals = []
        for t in range(len(self.step_ops) + 1):
            by_offset: dict[int, int] = {}
            for b in self.live_at(t):
                by_offset[b.offset] = max(by_offset.get(b.offset, 0), b.size)
            totals.append(sum(by_offset.values()))
        return totals

    @property
    def peak_step(self) -> int:
        """The step with the most bytes live (the first of equals): where the arena is tightest."""
        live = self.live_bytes()
        return live.index(max(live))

    @property
    def peak_op(self) -> Operation:
        """The op running at `peak_step` (the first op when the arguments alone fill it)."""
        return self.step_ops[max(self.peak_step, 1) - 1]

    @property
    def ratio(self) -> float:
        """`peak_bytes / lower_bound_bytes` (1.0 is optimal)."""
        return self.peak_bytes / self.lower_bound_bytes if self.lower_bound_bytes else 1.0

    def summary(self) -> str:
        return (
            f"arena {self.peak_bytes:,} B per batch item (lower bound {self.lower_bound_bytes:,}"
            f" B, {self.ratio:.3f}x), constants {self.constant_bytes:,} B"
        )


def offset_of(value: SSAValue) -> int | None:
    """The planned offset of an argument or op result, None when unplanned."""
    if isinstance(value, BlockArgument):
        function = value.block.parent_op()
        assert isinstance(function, func.FuncOp)
        if function.arg_attrs is None:
            return None
        attr = function.arg_attrs.data[value.index].data.get(OFFSET_ATTR)
    else:
        assert isinstance(value.owner, Operation)
        attr = value.owner.attributes.get(OFFSET_ATTR)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def set_offset(value: SSAValue, offset: int) -> None:
    """Write `value`'s planned offset into the IR (op attribute or argument attribute)."""
    attr = IntegerAttr(offset, i64)
    if isinstance(value, BlockArgument):
        function = value.block.parent_op()
        assert isinstance(function, func.FuncOp)
        count = len(function.function_type.inputs)
        dicts = list(function.arg_attrs.data) if function.arg_attrs else []
        dicts += [DictionaryAttr({})] * (count - len(dicts))
        dicts[value.index] = DictionaryAttr({**dicts[value.index].data, OFFSET_ATTR: attr})
        function.arg_attrs = ArrayAttr(dicts)
    else:
        assert isinstance(value.owner, Operation)
        value.owner.attributes[OFFSET_ATTR] = attr


def plan_totals(function: func.FuncOp) -> dict[str, int] | None:
    """The `dghw.memory_plan` totals of `function`, None when it carries no plan."""
    attr = function.attributes.get(PLAN_ATTR)
    if not isinstance(attr, DictionaryAttr):
        return None
    totals: dict[str, int] = {}
    for name in PLAN_FIELDS:
        entry: Attribute | None = attr.data.get(name)
        if not isinstance(entry, IntegerAttr):
            return None
        totals[name] = entry.value.data
    return totals


def set_plan_totals(function: func.FuncOp, totals: dict[str, int]) -> None:
    function.attributes[PLAN_ATTR] = DictionaryAttr(
        {name: IntegerAttr(totals[name], i64) for name in PLAN_FIELDS}
    )


def describe_owner(value: SSAValue) -> tuple[str, str, str]:
    """(op name or ``argument #i``, file:line, module path) of a tensor."""
    if isinstance(value, BlockArgument):
        return f"argument #{value.index}", "", ""
    assert isinstance(value.owner, Operation)
    module_path, where = source_of(value.owner)
    return value.owner.name, where, module_path


def planned_buffer(value: SSAValue, offset: int, size: int, first: int, last: int) -> PlannedBuffer:
    op, source, module_path = describe_owner(value)
    return PlannedBuffer(value, op, source, module_path, offset, size, first, last)


def read_plan(function: func.FuncOp, live: Liveness | None = None) -> MemoryPlan | None:
    """The plan written into `function` (None when it has none); it is not verified here."""
    totals = plan_totals(function)
    if totals is None:
        return None
    live = liveness(function) if live is None else live
    buffers = []
    for value, lifetime in live.lifetimes.items():
        offset = offset_of(value)
        if offset is None:
            return None
        buffers.append(planned_buffer(value, offset, lifetime.size, lifetime.first, lifetime.last))
    constants = []
    for constant in live.constants:
        offset = offset_of(constant.result)
        if offset is None:
            return None
        size = align(tensor_bytes(constant.result))
        constants.append(planned_buffer(constant.result, offset, size, 0, live.step_count - 1))
    return MemoryPlan(
        totals["arena_bytes"],
        totals["lower_bound_bytes"],
        totals["constant_bytes"],
        tuple(buffers),
        tuple(constants),
        live.steps,
    )
