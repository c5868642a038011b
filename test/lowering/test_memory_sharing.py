"""`dghw-plan-memory`'s sharing decisions (`plan_memory`): which in-place writes it keeps.

`without_narrowing_writes` undoes an in-place write of a smaller result over a larger
tensor (an int8 rescale over its int32 accumulators) where both side by side still fit the
lower bound at that step, and keeps it where they would not. The lit cases of
test/lowering/dghw-plan-memory.mlir show the plans; these show the decision itself.
"""

from __future__ import annotations

from dg.lowering.memory_liveness import live_bytes, liveness
from dg.lowering.plan_memory import Group, main_function, sharing_groups, without_narrowing_writes
from dg.runtime.program import parse_dghw

WIDEN = "multiplier = array<i32: 1>, shift = array<i32: 0>, input_zp = 0 : i32, output_zp = 0 : i32"
TO_I32 = f"{{{WIDEN}, clamp_min = -2147483648 : i32, clamp_max = 2147483647 : i32}}"
TO_I8 = f"{{{WIDEN}, clamp_min = -128 : i32, clamp_max = 127 : i32}}"

# %narrow may write over %wide (its last use, 64 int32 -> 64 int8). At that step %x is
# live too (the bitwise op reads it later) when `x_lives_on`, else it died at %wide.
PROGRAM = """
func.func @main(%x: tensor<?x64xi8>) -> tensor<?x64xi8> {{
  %wide = dghw.rescale %x {to_i32} : tensor<?x64xi8> -> tensor<?x64xi32>
  %narrow = dghw.rescale %wide {to_i8} : tensor<?x64xi32> -> tensor<?x64xi8>
  %and = dghw.bitwise_tensor %narrow, {other} {{kind = "and"}}
      : (tensor<?x64xi8>, tensor<?x64xi8>) -> tensor<?x64xi8>
  func.return %and : tensor<?x64xi8>
}}
"""


def decide(x_lives_on: bool) -> tuple[list[Group], list[Group], int]:
    """(groups of the most sharing, groups after `without_narrowing_writes`, lower bound)."""
    other = "%x" if x_lives_on else "%narrow"
    module = parse_dghw(PROGRAM.format(to_i32=TO_I32, to_i8=TO_I8, other=other))
    function = main_function(module)
    assert function is not None
    live = liveness(function)
    shared = sharing_groups(live)
    totals = live_bytes(live, [[m.value for m in g.members] for g in shared])
    return shared, without_narrowing_writes(shared, list(totals), max(totals)), max(totals)


def names(groups: list[Group]) -> list[list[str]]:
    return sorted([m.value.name_hint or "" for m in g.members] for g in groups)


def test_a_narrowing_write_that_fits_the_bound_beside_its_operand_is_undone():
    shared, decided, bound = decide(x_lives_on=False)
    # %x (64) and %wide (256) at step 1 are the bound; %wide and %narrow at step 2 fit it.
    assert bound == 320
    assert names(shared) == [["wide", "narrow", "and"], ["x"]]
    assert names(decided) == [["narrow", "and"], ["wide"], ["x"]]


def test_a_narrowing_write_that_would_raise_the_bound_stays_in_place():
    shared, decided, bound = decide(x_lives_on=True)
    # At step 2 %x, %wide and %narrow side by side would be 384 bytes, over the bound.
    assert bound == 320
    assert names(decided) == names(shared) == [["wide", "narrow", "and"], ["x"]]
