"""Offsets for buffers with known lifetimes: the placement half of `dghw-plan-memory`.

A *group* is a set of tensors sharing one offset (`plan_memory.sharing_groups`); each
member has its own size and live steps. Group g at offset o and group h at offset p
conflict when a member of g and a member of h are live at a common step and their bytes
meet. Every such member pair forbids o in (p - size_g, p + size_h); all those intervals
contain p, so per pair of groups one interval suffices, with the largest sizes: the
`Conflicts` table, computed once.

Placement is greedy (TFLite Micro's and TVM USMP's `greedy_by_size`): in a given order,
each group takes the lowest offset no placed group forbids. Several orders are tried,
then a hill climb (TVM USMP's `hill_climb`) swaps pairs of the best order and keeps a
swap that does not grow the arena, for a fixed number of tries or until the arena meets
the lower bound. Random choices come from a fixed seed: a plan is reproducible.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dg.lowering.memory_liveness import Lifetime

HILL_CLIMB_TRIES = 300
"""Swaps the hill climb tries after the greedy orders (each is one greedy placement)."""

SEED = 0


@dataclass(frozen=True)
class Conflicts:
    """Per group: its extent (largest member), live steps, and who forbids which offsets."""

    sizes: tuple[int, ...]
    first: tuple[int, ...]
    last: tuple[int, ...]
    pairs: tuple[tuple[tuple[int, int, int], ...], ...]
    """Per group g: (h, a, b), g's offset not in (offset_h - a, offset_h + b)."""


def conflicts(groups: Sequence[Sequence[Lifetime]]) -> Conflicts:
    """The conflict table of `groups` (module docstring)."""
    first = tuple(min(m.first for m in g) for g in groups)
    last = tuple(max(m.last for m in g) for g in groups)
    pairs: list[list[tuple[int, int, int]]] = [[] for _ in groups]
    for i, g in enumerate(groups):
        for j in range(i + 1, len(groups)):
            if first[i] > last[j] or first[j] > last[i]:
                continue
            a = b = 0
            for x in g:
                for y in groups[j]:
                    if x.overlaps(y):
                        a, b = max(a, x.size), max(b, y.size)
            if a:
                pairs[i].append((j, a, b))
                pairs[j].append((i, b, a))
    sizes = tuple(max(m.size for m in g) for g in groups)
    return Conflicts(sizes, first, last, tuple(tuple(p) for p in pairs))


def free_offsets(forbidden: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(offset, slack) of each free place, lowest first: 0 or the end of an interval, held
    by no interval, and the bytes from there to the next interval's start (-1: none above;
    0: the group would end exactly where a buffer begins)."""
    starts = sorted(lo for lo, _ in forbidden)
    free = []
    for offset in sorted({0, *(hi for _, hi in forbidden)}):
        if any(lo < offset < hi for lo, hi in forbidden):
            continue
        above = [lo for lo in starts if lo >= offset]
        free.append((offset, above[0] - offset if above else -1))
    return free


def place(order: Sequence[int], table: Conflicts, best_fit: bool = False) -> tuple[int, list[int]]:
    """Greedy placement in `order`: (arena size, offset of each group).

    Each group takes the lowest free offset (first fit) or, with `best_fit`, the one with
    the least slack below a placed buffer (the lowest when none has a buffer above).
    """
    offsets = [-1] * len(table.sizes)
    for g in order:
        forbidden = [
            (offsets[h] - a, offsets[h] + b) for h, a, b in table.pairs[g] if offsets[h] >= 0
        ]
        free = free_offsets(forbidden)
        bounded = [(slack, o) for o, slack in free if slack >= 0]
        offsets[g] = min(bounded)[1] if best_fit and bounded else free[0][0]
    arena = max((o + s for o, s in zip(offsets, table.sizes, strict=True)), default=0)
    return arena, offsets


def _orders(table: Conflicts) -> dict[str, Callable[[int], tuple[int, ...]]]:
    degree = [sum(table.sizes[h] for h, _, _ in pairs) for pairs in table.pairs]
    return {
        "size": lambda g: (-table.sizes[g], table.first[g]),
        "size x lifetime": lambda g: (
            -table.sizes[g] * (table.last[g] - table.first[g] + 1),
            table.first[g],
        ),
        "size, then lifetime": lambda g: (-table.sizes[g], table.first[g] - table.last[g]),
        "lifetime": lambda g: (table.first[g] - table.last[g], -table.sizes[g]),
        "first step": lambda g: (table.first[g], -table.sizes[g]),
        "conflicts": lambda g: (-degree[g], -table.sizes[g]),
    }


def best_placement(
    table: Conflicts, lower_bound: int, tries: int | None = None
) -> tuple[int, list[int]]:
    """The smallest arena the greedy orders and `tries` hill-climb steps (default
    `HILL_CLIMB_TRIES`) find: (size, offsets)."""
    groups = range(len(table.sizes))
    best_order: list[int] = []
    best_fit = False
    best: tuple[int, list[int]] | None = None
    for key in _orders(table).values():
        order = sorted(groups, key=key)
        for fit in (False, True):
            found = place(order, table, fit)
            if best is None or found[0] < best[0]:
                best, best_order, best_fit = found, order, fit
    assert best is not None
    rng = random.Random(SEED)
    for _ in range((HILL_CLIMB_TRIES if tries is None else tries) if len(best_order) > 1 else 0):
        if best[0] <= lower_bound:
            break
        i, j = rng.sample(range(len(best_order)), 2)
        order = list(best_order)
        if rng.random() < 0.5:
            order[i], order[j] = order[j], order[i]
        else:  # one group placed earlier, the others keeping their order
            order.insert(min(i, j), order.pop(max(i, j)))
        found = place(order, table, best_fit)
        if found[0] <= best[0]:
            best, best_order = found, order
    return best
