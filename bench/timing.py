"""Timing helpers shared by the benchmarks: first-call and median wall times, and a table."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    """Wall times of one function: its first (cold) call, and the median of the repeats after."""

    first: float
    median: float


def measure(function: Callable[[], object], repeats: int) -> Timing:
    """Time one cold call of `function` (the warm-up), then the median of `repeats` calls."""
    started = time.perf_counter()
    function()
    first = time.perf_counter() - started
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return Timing(first, statistics.median(times))


def print_table(title: str, rows: Sequence[tuple[str, str, Timing, str, Timing]]) -> None:
    """Rows of (step, dg side, its timing, torch side, its timing), with dg / torch ratios."""
    print(f"\n{title}")
    print("| step | dg | first s | median s | torch | first s | median s | dg/torch (median) |")
    print("|---|---|---|---|---|---|---|---|")
    for step, dg_name, dg_t, torch_name, torch_t in rows:
        print(
            f"| {step} | {dg_name} | {dg_t.first:.4f} | {dg_t.median:.4f} | {torch_name} "
            f"| {torch_t.first:.4f} | {torch_t.median:.4f} | {dg_t.median / torch_t.median:.1f} |"
        )


def measure_side_by_side(
    functions: Sequence[Callable[[], object]],
    repeats: int,
    clock: Callable[[], float] = time.perf_counter,
) -> list[Timing]:
    """`measure` for several functions at once, interleaved: one call of each per round.

    On a shared, noisy machine a slow stretch then hits every function alike,
    so the ratio of two medians is steadier than that of two separate runs.
    `clock` may be `time.process_time`: CPU time does not count the time other
    processes hold the core, which on an oversubscribed machine inflates long
    calls (preempted) more than short ones (that fit in one time slice).
    """
    firsts = []
    for function in functions:  # every warm-up before any timed round
        started = clock()
        function()
        firsts.append(clock() - started)
    times: list[list[float]] = [[] for _ in functions]
    for _ in range(repeats):
        for function, own in zip(functions, times, strict=True):
            started = clock()
            function()
            own.append(clock() - started)
    return [Timing(first, statistics.median(own)) for first, own in zip(firsts, times, strict=True)]
