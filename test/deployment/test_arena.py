"""The device model inside its memory plan (`run(..., arena=True)`, `dg.runtime.arena`)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from small_cnn import float_and_program, inputs
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, i64

import dg
from dg.lowering.memory_liveness import OFFSET_ATTR, liveness, may_share
from dg.lowering.plan_memory import PlanMemoryPass, main_function
from dg.runtime.arena import ArenaDeviceModel
from dg.runtime.program import ProgramError


def program() -> dg.Program:
    return float_and_program()[1]


def device_inputs(batch: int, seed: int) -> np.ndarray:
    return program().quantize_inputs(inputs(batch, seed))[0]


def test_arena_runs_are_bit_identical_to_the_normal_run():
    x = inputs(5, seed=3)
    normal, arena = program().run(x), program().run(x, arena=True)
    assert normal.dtype == arena.dtype and bool((normal == arena).all())
    assert not bool((normal[0] == normal[1]).all()), "the outputs must depend on the input"
    arrays = device_inputs(3, seed=4)
    assert np.array_equal(program().run_int(arrays), program().run_int(arrays, arena=True))


def test_every_op_reads_and_writes_its_planned_slice():
    """A plan with one tensor moved onto bytes still to be read (the verifier bypassed)
    changes the results: the arena run does read what the plan says."""
    planned = program().dghw.clone()
    PlanMemoryPass().apply(Context(), planned)
    arrays = device_inputs(4, seed=5)
    expected = program().run_int(arrays)
    assert np.array_equal(ArenaDeviceModel(planned)([arrays])[0], expected)
    function = main_function(planned)
    assert function is not None
    ops = [op for op in function.body.block.ops if OFFSET_ATTR in op.attributes]
    ops = [op for op in ops if op.name != "dghw.constant"]
    # The first tensor read again after a later op wrote its result: put that result on it.
    victim, clobber = next(
        (a, b)
        for i, a in enumerate(ops)
        for b in ops[i + 1 :]
        if any(use.operation.is_before_in_block(b) is False for use in a.results[0].uses)
        and b not in (use.operation for use in a.results[0].uses)
    )
    clobber.attributes[OFFSET_ATTR] = IntegerAttr(victim.attributes[OFFSET_ATTR].value.data, i64)
    corrupted = ArenaDeviceModel(planned)([arrays])[0]
    assert not np.array_equal(corrupted, expected)


def test_a_saved_plan_is_kept_by_load_and_a_wrong_one_is_refused(tmp_path):
    planned = program().dghw.clone()
    PlanMemoryPass().apply(Context(), planned)
    path = tmp_path / "planned.mlir"
    dg.Program.from_dghw(planned).save(path)
    loaded = dg.load(path)
    assert loaded.memory_plan == program().memory_plan
    arrays = device_inputs(2, seed=6)
    assert np.array_equal(loaded.run_int(arrays, arena=True), program().run_int(arrays))
    # One op's result moved onto a tensor live beside it (bytes it may not share): refused.
    plan = loaded.memory_plan
    results = [b for b in plan.buffers if not b.op.startswith("argument")]
    live = liveness(results[0].value.owner.parent_op())
    index, target = next(
        (i, a)
        for i, b in enumerate(results)
        for a in plan.buffers
        if a.first <= b.last
        and b.first <= a.last
        and a.offset != b.offset
        and not may_share(a.value, b.value, live)
    )
    lines = path.read_text().splitlines()
    op_lines = [
        n for n, line in enumerate(lines) if OFFSET_ATTR in line and "dghw.constant" not in line
    ][1:]  # the first is @main's signature (the arguments)
    line = lines[op_lines[index]]
    lines[op_lines[index]] = re.sub(
        rf"{OFFSET_ATTR} = \d+ :", f"{OFFSET_ATTR} = {target.offset} :", line
    )
    path.write_text("\n".join(lines))
    with pytest.raises(ProgramError, match="memory-plan|share bytes"):
        dg.load(path)
