"""The device model inside its memory plan: every op reads and writes its planned bytes.

`ArenaDeviceModel` runs `@main` of a planned dghw module (`dghw-plan-memory`) with one
byte array per batch item as the arena, all items side by side (`[batch, arena_bytes]`,
vectorized over the batch), and the constants in a read-only region laid out by the plan.
Each op reads its operands as views of their planned slices, computes with the device
model's own kernels (the same `@impl`s as `DeviceModel`), and writes its result into its
planned slice. The results are read back from the arena at the end.

So the results equal the normal run's only if the plan is right: a tensor written over
one that is still to be read changes the results (`test/runtime/test_arena.py` proves it
with a deliberately overlapping plan). The normal walk (`DeviceModel`) is untouched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue

from dg.lowering.memory_plan import MemoryPlan, offset_of, read_plan
from dg.runtime.interpreter import (
    DeviceInterpreter,
    check_arguments,
    find_function,
    register_device_functions,
)
from dg.runtime.kernels.common import numpy_dtype


@dataclass(frozen=True)
class Slot:
    """Where a tensor lives: `offset` in the arena (or in the constant region for constants)."""

    offset: int
    size: int
    """Unaligned bytes per batch item (for constants: of the whole tensor)."""
    dtype: np.dtype[Any]
    shape: tuple[int, ...]
    """The shape without the batch axis (for constants: the whole shape)."""


def slot_of(value: SSAValue, offset: int, batched: bool = True) -> Slot:
    t = value.type
    assert isinstance(t, TensorType)
    shape = tuple(t.get_shape()[1:] if batched else t.get_shape())
    dtype = numpy_dtype(t)
    return Slot(offset, int(np.prod(shape, dtype=np.int64)) * dtype.itemsize, dtype, shape)


def read(region: np.ndarray, slot: Slot) -> np.ndarray:
    """The tensor in `slot`: a view of the rows of `region` ([batch, bytes])."""
    raw = region[:, slot.offset : slot.offset + slot.size]
    return raw.view(slot.dtype).reshape(region.shape[0], *slot.shape)


def write(region: np.ndarray, slot: Slot, value: np.ndarray) -> None:
    """Store `value` ([batch, *shape]) into `slot` of every row of `region`."""
    target = read(region, slot)
    np.copyto(target, value.reshape(target.shape), casting="no")


@dataclass(frozen=True)
class ArenaStep:
    op: Operation
    operands: tuple[tuple[bool, Slot], ...]
    """Per operand: (is a constant, its slot)."""
    result: Slot | None


class ArenaDeviceModel:
    """`@main` of a planned dghw module, run inside its plan (module docstring)."""

    def __init__(self, module: ModuleOp, plan: MemoryPlan | None = None):
        self.function: func.FuncOp = find_function(module, "main")
        found = plan or read_plan(self.function)
        if found is None:
            raise ValueError("the module has no memory plan: run dghw-plan-memory first")
        self.plan = found
        # Every op runs alone (no fused groups): each writes its own slice.
        self.interpreter = DeviceInterpreter(module, fuse_groups=False)
        register_device_functions(self.interpreter)
        self.constants = self._constant_region()
        self.steps = tuple(self._step(op) for op in self.function.body.block.ops)
        self.argument_slots = tuple(self._slot(arg) for arg in self.function.body.block.args)

    def _slot(self, value: SSAValue) -> Slot:
        offset = offset_of(value)
        assert offset is not None, "read_plan checked every tensor has an offset"
        return slot_of(value, offset)

    def _constant_region(self) -> np.ndarray:
        """The constants at their planned offsets, one read-only row."""
        region = np.zeros((1, self.plan.constant_bytes), dtype=np.uint8)
        block_plan = self.interpreter._plan(self.function.body.block)
        for value, array in block_plan.constants.items():
            offset = offset_of(value)
            assert offset is not None
            write(region, slot_of(value, offset, batched=False), np.asarray(array)[None])
        region.setflags(write=False)
        return region

    def _step(self, op: Operation) -> ArenaStep:
        operands = []
        for operand in op.operands:
            owner = operand.owner
            if isinstance(owner, Operation) and owner.name == "dghw.constant":
                offset = offset_of(operand)
                assert offset is not None
                operands.append((True, slot_of(operand, offset, batched=False)))
            else:
                operands.append((False, self._slot(operand)))
        result = self._slot(op.results[0]) if op.results else None
        return ArenaStep(op, tuple(operands), result)

    def __call__(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        types = self.function.function_type.inputs.data
        check_arguments("main", types, arrays)
        batch = arrays[0].shape[0] if arrays else 1
        arena = np.zeros((batch, self.plan.peak_bytes), dtype=np.uint8)
        for slot, array in zip(self.argument_slots, arrays, strict=True):
            write(arena, slot, array)
        run = self.interpreter._impls.run
        for step in self.steps:
            if step.op.name == "dghw.constant":
                continue
            operands = tuple(
                read(self.constants, slot)[0] if constant else read(arena, slot)
                for constant, slot in step.operands
            )
            if step.result is None:  # func.return: the results, read back from the arena
                return [np.array(value) for value in operands]
            (value,) = run(self.interpreter, step.op, operands).values
            write(arena, step.result, np.asarray(value))
        raise AssertionError("@main ends with func.return")
