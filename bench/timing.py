"""Helpers shared by the benchmarks: first-call and median wall times, a table, the examples,
the process's resident set."""

from __future__ import annotations

import argparse
import ctypes
import gc
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def resident_kib(field: str = "VmRSS") -> int:
    """The process's resident set (VmRSS) or its peak since the last reset (VmHWM), in KiB."""
    status = Path("/proc/self/status").read_text().splitlines()
    return int(next(s for s in status if s.startswith(field + ":")).split()[1])


def reset_peak_rss() -> None:
    """Return freed heap to the OS, then make the peak (VmHWM) the current RSS (writing 5 to
    /proc/self/clear_refs): RSS is then live data, and a later peak is the next step's own."""
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    Path("/proc/self/clear_refs").write_text("5")


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
    warm_up: bool = True,
) -> list[Timing]:
    """`measure` for several functions at once, interleaved: one call of each per round.

    On a shared, noisy machine a slow stretch then hits every function alike,
    so the ratio of two medians is steadier than that of two separate runs.
    `clock` may be `time.process_time`: CPU time does not count the time other
    processes hold the core, which on an oversubscribed machine inflates long
    calls (preempted) more than short ones (that fit in one time slice).
    Without `warm_up` (the caller ran each function already), `first` is nan.
    """
    firsts = []
    for function in functions:  # every warm-up before any timed round
        started = clock()
        if warm_up:
            function()
        firsts.append(clock() - started if warm_up else float("nan"))
    times: list[list[float]] = [[] for _ in functions]
    for _ in range(repeats):
        for function, own in zip(functions, times, strict=True):
            started = clock()
            function()
            own.append(clock() - started)
    return [Timing(first, statistics.median(own)) for first, own in zip(firsts, times, strict=True)]


def load_example(name: str) -> ModuleType | None:
    """examples/<name>.py as a module, or None while it does not exist.

    `name` may name a subfolder's file ("zoo/index"). The module is registered in
    `sys.modules` (as its path with dots) while it runs, which dataclasses need.
    """
    path = ROOT / "examples" / f"{name}.py"
    if not path.exists():
        return None
    key = name.replace("/", ".")
    spec = importlib.util.spec_from_file_location(key, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module


def time_digits_example(example_name: str, model_class: str, description: str) -> None:
    """The device model vs frozen(x) vs float eager on a digits example, side by side in one run.

    The example's model (seeded, untrained: training does not change the timings)
    is PTQ-calibrated on its training split, then timed on a batch of held-out
    inputs, repeated to the batch size when the split is smaller.
    """
    import torch

    import dg

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()

    example = load_example(example_name)
    assert example is not None, f"examples/{example_name}.py is missing"
    torch.manual_seed(0)
    x_train, x_test, _, _ = example.load_data(seed=0)
    model = getattr(example, model_class)().eval()
    prepared = dg.prepare_ptq(model, (x_train[:8],))
    with torch.no_grad():
        for i in range(0, 512, 128):
            prepared(x_train[i : i + 128])
    frozen = dg.freeze_quantization(prepared)
    program = dg.export(frozen, (x_train[:8],))

    x = x_test[: args.batch]
    if len(x) < args.batch:  # the held-out split has 450 inputs
        copies = (args.batch + len(x) - 1) // len(x)
        x = x.repeat(copies, *[1] * (x.dim() - 1))[: args.batch]
    with torch.no_grad():
        scale = program.output_qparams[0][0]
        lsb = ((program.run(x) - frozen(x)).abs() / scale).round().max().item()
        run_dg = measure(lambda: program.run(x), args.repeats)
        run_frozen = measure(lambda: frozen(x), args.repeats)
        run_float = measure(lambda: model(x), args.repeats)
    print(f"program vs frozen model: max {lsb:.0f} output LSB on a batch of {len(x)}")
    print_table(
        f"{model_class}, batch {len(x)}, {torch.get_num_threads()} torch threads, "
        "first call, then median of repeats",
        [
            ("run", "program.run (device)", run_dg, "frozen(x) (fake quant)", run_frozen),
            ("run", "program.run (device)", run_dg, "float eager", run_float),
        ],
    )
