"""The fuzzer's arena check: every random graph also runs inside its memory plan."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType

from dg.runtime.interpreter import numpy_dtype
from dg.runtime.program import Program

ARENA_BATCH = 3
ARENA_SEED = 7


def arena_mismatch(program: Program) -> str:
    """ "" if `run_int(..., arena=True)` equals the normal run bit for bit, else what differs."""
    rng = np.random.default_rng(ARENA_SEED)
    arrays = []
    for t in program.main.function_type.inputs:
        assert isinstance(t, TensorType)
        shape = [ARENA_BATCH if d == DYNAMIC_INDEX else d for d in t.get_shape()]
        info = np.iinfo(numpy_dtype(t))
        arrays.append(rng.integers(info.min, info.max, shape, endpoint=True, dtype=info.dtype))
    normal = program.run_int(*arrays)
    arena = program.run_int(*arrays, arena=True)
    normal = list(normal) if isinstance(normal, list) else [normal]
    arena = list(arena) if isinstance(arena, list) else [arena]
    for i, (want, got) in enumerate(zip(normal, arena, strict=True)):
        if got.dtype != want.dtype or not np.array_equal(got, want):
            differ = int(np.count_nonzero(np.asarray(got) != np.asarray(want)))
            return f"output {i}: the arena run differs from the normal run in {differ} elements"
    return ""
