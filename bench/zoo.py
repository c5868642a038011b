"""`make bench`, the model zoo: every network of examples/zoo/ at its real size, side by side.

Per network (examples/zoo/index.py: random weights, PTQ-calibrated on random
batches) and per batch (1 and 32), measured in this one run, interleaved (one
call of each side per round), at 1 thread and again at 2 threads for every
side (torch's intra-op threads and numpy's BLAS, `bench.set_threads`):

- the device model (`program.run`), the frozen model (fake quant) and the float
  model in fp32 eager: median wall times of at least `--rounds` rounds and `ROW_SECONDS`
  (fewer rounds when a row's calls are long: `TIMED_SECONDS`), and device / eager
  (target <= 1.5); each
  side is warmed up first, at batch 32 only where a call is short (otherwise the
  batch-1 row's warm-up stands: `WARM_UP_BELOW_SECONDS`); the frozen model, a
  reference, is timed at 1 thread where a call is cheap (`FROZEN_SECONDS`);
- the largest difference of the device from the frozen model, in output steps
  (on the batch's first `LSB_ITEMS` items, from the device's timed calls);
- the peak RSS of the process during the device's first call on the batch;
- dg.export of the frozen model against torch.export of the float model.

Then the biggest network (VGG-16-BN, 138 M weights): `program.save`, `dg.load`,
the loaded program's first run (which prepares every constant), wall and CPU
times, and the peak RSS of each step and of that whole flow against the RSS
of the frozen model alone.

The device model takes int8 GEMMs where this CPU has int8 dot-product
instructions (VNNI) and they check out exact, else float32 GEMMs; the header
says which. `--gemms float32` forces the float32 GEMMs, as on a CPU without
VNNI, so one machine measures both.

    .venv/bin/python bench/zoo.py [--quick] [--only resnet18,vit_tiny] [--rounds 3] [--no-big]
                                  [--gemms cpu|float32|int8]
    .venv/bin/python bench/zoo.py --only vgg16_bn --big-only   # the big-model flow alone
"""

from __future__ import annotations

import argparse
import gc
import itertools
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import TypeVar

import torch

import dg
from dg.runtime.int8_gemm import int8_gemms, int8_gemms_enabled

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from timing import load_example, reset_peak_rss, resident_kib  # noqa: E402

from bench import set_threads  # noqa: E402

T = TypeVar("T")

ZOO = load_example("zoo/index").ZOO  # type: ignore[union-attr]
BATCHES = (1, 32)
THREADS = (1, 2)
QUICK = ("resnet18", "mobilenet_v2", "vit_tiny", "llama_s128")
"""`--quick`: one network of each kind (residual, depthwise, vision and language transformer)."""
BIGGEST = "vgg16_bn"
TIMED_SECONDS = 3.0
"""A row's timed rounds stop after about this long (at least one round)."""
ROW_SECONDS = 1.0
"""A row's timed rounds go on past `--rounds` until about this long: a batch-1 row of tens
of milliseconds gets tens of rounds, not three, and its median steadies on this noisy
machine (MobileNetV2 at batch 1 read 1.01 to 1.58 with three, in five runs)."""
WARM_UP_BELOW_SECONDS = 2.0
"""A batch-32 row warms its sides up only when the device's batch-1 time says a call takes
less than this: a longer call's first-call costs (preparing constants, primitives) were paid
by the batch-1 row's warm-up, and a warm-up of VGG-16 at batch 32 took a minute."""
FROZEN_SECONDS = 3.0
"""The frozen (fake-quant) model is timed at one thread only, at a batch where its time per
item (from its call on the reference items) says one call takes at most this; elsewhere the
row gives that estimate (VGG-16: ~4 s an item). It is the reference, not a target."""
LSB_ITEMS = 4
"""The difference from the frozen model is measured on the batch's first items: the frozen
model runs once per network on the first items of the shared inputs (the reference), and
each row compares the device's output of its timed calls with it."""
CALIBRATION = {"batches": 1, "batch_size": 8}
"""PTQ calibration of each network (the zoo's default is 2 batches of 8; speed does not
depend on the scales, and calibrating VGG-16 took a minute)."""


def rss_gib(field: str = "VmRSS") -> float:
    """The process's resident set (VmRSS) or its peak since the last reset (VmHWM), in GiB."""
    return resident_kib(field) / 2**20


class Compiled:
    """A zoo network: float model, frozen model and program, and dg.export / torch.export times."""

    def __init__(self, name: str):
        entry = ZOO[name]
        self.name, self.shape = name, entry.shape()
        self.model = entry.build()
        example = (torch.randn(2, *self.shape),)
        prepared = dg.prepare_ptq(self.model, example)
        with torch.no_grad():
            for batch in entry.calibration(**CALIBRATION):
                prepared(batch)
        self.frozen = dg.freeze_quantization(prepared)
        del prepared
        started = time.perf_counter()
        self.program = dg.export(self.frozen, example)
        self.dg_export = time.perf_counter() - started
        started = time.perf_counter()
        torch.export.export(self.model, example)
        self.torch_export = time.perf_counter() - started
        generator = torch.Generator().manual_seed(0)
        self.inputs = torch.randn(max(BATCHES), *self.shape, generator=generator)
        """Every row's batch is the first items of these: the rows share one reference."""
        started = time.perf_counter()
        with torch.no_grad():
            self.reference = self.frozen(self.inputs[:LSB_ITEMS])
        self.frozen_per_item = (time.perf_counter() - started) / LSB_ITEMS
        """The frozen model's time per item, from its one call on the reference items."""
        self.device_per_item: dict[int, float] = {}
        """The device's batch-1 time, by thread count (`time_row`)."""


def time_row(net: Compiled, batch: int, rounds: int) -> str:
    """One table line: the sides on one batch, side by side (module docstring)."""
    x = net.inputs[:batch]
    threads = torch.get_num_threads()
    sides: dict[str, Callable[[], torch.Tensor]] = {
        "device": lambda: net.program.run(x),
        "frozen": lambda: net.frozen(x),
        "eager": lambda: net.model(x),
    }
    frozen_estimate = net.frozen_per_item * batch
    if threads != 1 or frozen_estimate > FROZEN_SECONDS:
        del sides["frozen"]
    # The batch-1 row warmed every side up; a batch whose device call is long skips its own.
    warm = net.device_per_item.get(threads, math.inf) * batch < WARM_UP_BELOW_SECONDS
    if batch == 1 or warm:
        for name, call in sides.items():
            if name != "device":
                with torch.no_grad():
                    call()
    seconds, output, peak = timed_rounds(sides, rounds, warm_device=batch == 1 or warm)
    if batch == 1:
        net.device_per_item[threads] = seconds["device"]
    lsb = max_lsb(net, output[:LSB_ITEMS])
    device, eager = seconds["device"], seconds["eager"]
    if "frozen" in seconds:
        frozen = f"{seconds['frozen'] * 1e3:.1f}"
    elif threads != 1:
        frozen = "- (1-thread rows)"
    else:
        frozen = f"~{frozen_estimate * 1e3:.0f} (estimate, not timed)"
    return (
        f"| {net.name} | {batch} | {threads} | {device * 1e3:.1f} | "
        f"{frozen} | {eager * 1e3:.1f} | {device / eager:.2f} | {lsb} | {peak:.2f} |"
    )


def timed_rounds(
    sides: dict[str, Callable[[], torch.Tensor]], rounds: int, warm_device: bool
) -> tuple[dict[str, float], torch.Tensor, float]:
    """Median wall time of each side over interleaved rounds (one call of each per round): at
    least `rounds` and `ROW_SECONDS`, no more after `TIMED_SECONDS`; the device's output, and
    the peak RSS (GiB) of its first call: its warm-up, or round 1's call without one."""
    times: dict[str, list[float]] = {name: [] for name in sides}
    with torch.no_grad():
        reset_peak_rss()
        first = time.perf_counter()
        output = sides["device"]()
        first_call = time.perf_counter() - first
        peak = rss_gib("VmHWM")
        started = time.perf_counter() if warm_device else first
        for round in itertools.count():
            for name, call in sides.items():
                if name == "device" and round == 0 and not warm_device:
                    times[name].append(first_call)  # round 1's device call is the one above
                    continue
                called = time.perf_counter()
                call()
                times[name].append(time.perf_counter() - called)
            elapsed = time.perf_counter() - started
            if elapsed > TIMED_SECONDS or (round + 1 >= rounds and elapsed > ROW_SECONDS):
                break
    return {name: statistics.median(t) for name, t in times.items()}, output, peak


def max_lsb(net: Compiled, output: torch.Tensor) -> int:
    """The largest |device - frozen| of the device's `output` (the batch's first items) against
    the frozen model's on the same items, in output steps."""
    difference = (output - net.reference[: len(output)]).abs()
    return int(round(float((difference / net.program.output_qparams[0][0]).max())))


def big_model_rows(net: Compiled) -> list[str]:
    """save, load, the loaded program's first run, and the flow's peak RSS (module docstring):
    per step (VmHWM reset before it) and over the whole flow, against the frozen model alone."""
    del net.program
    reset_peak_rss()
    frozen_alone = rss_gib()
    x = torch.randn(1, *net.shape)
    rows: list[tuple[str, float, float, float]] = []
    """(step, wall s, CPU s, peak RSS GiB) per step."""

    def timed(step: str, run: Callable[[], T]) -> T:
        reset_peak_rss()
        started, cpu = time.perf_counter(), time.process_time()
        result = run()
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        rows.append((step, wall, cpu, rss_gib("VmHWM")))
        return result

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{net.name}.mlir"
        program = timed("dg.export", lambda: dg.export(net.frozen, (x,)))
        timed("program.save", partial(program.save, path))
        size = os.path.getsize(path) / 1e6
        del program
        gc.collect()
        loaded = timed(f"dg.load ({size:.0f} MB)", lambda: dg.load(path))
    timed("first run of the loaded program (batch 1)", lambda: loaded.run(x))
    timed("second run (batch 1)", lambda: loaded.run(x))
    lines = [
        "| step | wall s | CPU s | target | peak RSS GiB (x frozen alone) |",
        "|---|---|---|---|---|",
    ]
    targets = {"program.save": "<= 5", "dg.load": "<= 5", "first run": "<= 3"}
    for step, wall, cpu, peak in rows:
        target = next((t for key, t in targets.items() if step.startswith(key)), "-")
        ratio = peak / frozen_alone
        lines.append(f"| {step} | {wall:.2f} | {cpu:.2f} | {target} | {peak:.2f} ({ratio:.2f}x) |")
    peak = max(row[3] for row in rows)
    lines.append(
        f"| peak RSS of export+save+load+run / frozen model alone | {peak:.2f} / "
        f"{frozen_alone:.2f} GiB = {peak / frozen_alone:.2f}x | | <= 1.5x | |"
    )
    return lines


def gemm_path(choice: str) -> str:
    """The device's GEMMs in this run, as the header says them."""
    path = "int8" if int8_gemms_enabled() else "float32"
    return f"{path} (this CPU's choice)" if choice == "cpu" else f"{path} (forced)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    parser.add_argument("--only", help="comma-separated zoo names")
    parser.add_argument(
        "--rounds", type=int, default=3, help="least timed rounds per row (within TIMED_SECONDS)"
    )
    parser.add_argument("--no-big", action="store_true", help="skip the big-model flow")
    parser.add_argument(
        "--big-only", action="store_true", help=f"only the big-model flow ({BIGGEST})"
    )
    parser.add_argument(
        "--gemms",
        choices=("cpu", "float32", "int8"),
        default="cpu",
        help="the device's GEMMs: this CPU's choice (default), or forced",
    )
    args = parser.parse_args()
    with ExitStack() as forced:
        if args.gemms != "cpu":  # around every run: weights keep the choice they were prepared with
            forced.enter_context(int8_gemms(args.gemms == "int8"))
        run_zoo(args, parser)


def run_zoo(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """`main` after its arguments are read."""
    if args.big_only:
        set_threads(1)
        print(f"{BIGGEST} (138 M weights), 1 thread:\n")
        print("\n".join(big_model_rows(Compiled(BIGGEST))))
        return
    names = args.only.split(",") if args.only else list(QUICK if args.quick else ZOO)
    if unknown := set(names) - set(ZOO):
        parser.error(f"unknown networks {sorted(unknown)}; the zoo has {', '.join(ZOO)}")

    set_threads(1)
    nets = []
    for name in names:
        started = time.perf_counter()
        nets.append(Compiled(name))
        print(
            f"{name}: quantized and exported in {time.perf_counter() - started:.0f} s", flush=True
        )
    print(
        f"\ndg {dg.__version__}, torch {torch.__version__}; wall times, medians of at least "
        f"{args.rounds} interleaved rounds and {ROW_SECONDS:.0f} s a row (fewer rounds past "
        f"{TIMED_SECONDS:.0f} s) after a "
        f"warm-up; threads: torch intra-op and BLAS, every side; PTQ on {CALIBRATION}; "
        f"device GEMMs: {gemm_path(args.gemms)}; the machine is shared (noisy)\n"
    )
    print(
        "| network | batch | threads | device ms | frozen ms | eager fp32 ms | device / eager "
        "| max LSB vs frozen | peak RSS GiB (device run) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for threads in THREADS:
        set_threads(threads)
        for net in nets:
            for batch in BATCHES:
                print(time_row(net, batch, args.rounds), flush=True)
    set_threads(1)
    print("\n| network | dg.export s | torch.export s | dg / torch |")
    print("|---|---|---|---|")
    for net in nets:
        print(
            f"| {net.name} | {net.dg_export:.2f} | {net.torch_export:.2f} | "
            f"{net.dg_export / net.torch_export:.2f} |"
        )
    if not args.no_big and not args.quick:
        big = next((n for n in nets if n.name == BIGGEST), None) or Compiled(BIGGEST)
        nets.clear()  # the other networks are done: free their memory before the flow
        print(f"\n{BIGGEST} (138 M weights), 1 thread:\n")
        print("\n".join(big_model_rows(big)))


if __name__ == "__main__":
    main()
