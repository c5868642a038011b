"""`make bench`: the benchmark table of issue 5 section 5, every figure a side-by-side ratio.

Each row times dg and a baseline in the same process run, interleaved (one
call of each per round, `timing.measure_side_by_side`), and reports the ratio
of the medians after a warm-up call, its target, and whether it is met:

- device speed: `program.run(x)` (the bit-accurate device model) vs the float
  model in PyTorch fp32 eager, on ResNet-18 (full width, 64x64), the digits
  demo CNN and, when `examples/digits_decoder.py` exists, the digits
  transformer; batch 1 and 32. The largest output difference against the
  frozen (fake-quant) model is printed beside it, in output steps (LSB);
- export speed: `dg.export(frozen)` vs `torch.export.export(float model)`;
- dg-opt: the full pipeline (`dg-opt -p dg-pipeline`) on ResNet-18's dgtorch
  module vs `xdsl-opt` parsing and printing the same file, both drivers in
  this process, so interpreter start-up and imports are not counted;
- memory: peak RSS while `dg.export` runs, in a fresh subprocess, against the
  bytes of the model's fp32 weights;
- scaling: `dg.export` time of chains of 10..320 conv blocks, and the slope of
  log(time) over log(blocks).

The networks are untrained (weights at initialization, PTQ-calibrated on
random or held-out data): speed does not depend on what the weights say.

    .venv/bin/python bench/bench.py [--repeats 7] [--only device,export,dg-opt,memory,scaling]
                                    [--threads 1] [--also-threads 2]
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

import dg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "test" / "models"))
import timing  # noqa: E402
from timing import Timing, load_example  # noqa: E402
from user_models import resnet18  # noqa: E402

RESNET_INPUT = (3, 64, 64)
DEVICE_BATCHES = (1, 32)
CHAIN_LENGTHS = (10, 20, 40, 80, 160, 320)
SECTIONS = ("device", "export", "dg-opt", "memory", "scaling")
CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
CLOCK = CLOCKS["cpu"]
"""What every row measures; `--clock` sets it (see `timing.measure_side_by_side`)."""


def measure_side_by_side(functions: list[Callable[[], object]], repeats: int) -> list[Timing]:
    return timing.measure_side_by_side(functions, repeats, CLOCK)


@dataclass(frozen=True)
class Row:
    """One line of the table: dg's median against the baseline's, and the target on the ratio."""

    benchmark: str
    case: str
    dg: str
    baseline: str
    ratio: float
    target: float | None
    """Largest acceptable ratio; None: reported, no target."""
    note: str = ""

    def verdict(self) -> str:
        if self.target is None:
            return "reported"
        return "met" if self.ratio <= self.target else "not met"


# -- networks ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Network:
    """A float model, its frozen PTQ quantization and its program, with a batch maker."""

    name: str
    model: nn.Module
    frozen: torch.fx.GraphModule
    program: dg.Program
    example: tuple[torch.Tensor, ...]
    batch: Callable[[int], torch.Tensor]


def quantize(model: nn.Module, example: torch.Tensor, calibration: list[torch.Tensor]):
    prepared = dg.prepare_ptq(model, (example,))
    with torch.no_grad():
        for x in calibration:
            prepared(x)
    return dg.freeze_quantization(prepared)


def repeat_to(x: torch.Tensor, n: int) -> torch.Tensor:
    """The first `n` rows of `x`, repeated if it has fewer."""
    return x.repeat((n + len(x) - 1) // len(x), *([1] * (x.dim() - 1)))[:n]


def resnet18_network() -> Network:
    torch.manual_seed(0)
    model = resnet18(num_classes=1000, maxpool_padding=0)
    model.train()
    with torch.no_grad():  # settle batch norm statistics, as in a trained model
        for _ in range(3):
            model(torch.randn(16, *RESNET_INPUT))
    model.eval()
    example = torch.randn(2, *RESNET_INPUT)
    frozen = quantize(model, example, [torch.randn(16, *RESNET_INPUT) for _ in range(3)])
    data = torch.randn(max(DEVICE_BATCHES), *RESNET_INPUT)
    return Network(
        "ResNet-18 64x64",
        model,
        frozen,
        dg.export(frozen, (example,)),
        (example,),
        lambda n: repeat_to(data, n),
    )


def digits_network(name: str, example_name: str, model_class: str) -> Network | None:
    """A digits example (its `load_data` and model class), PTQ-calibrated on its training split."""
    module = load_example(example_name)
    if module is None:
        return None
    torch.manual_seed(0)
    x_train, x_test, _, _ = module.load_data(0)
    model = getattr(module, model_class)().eval()
    example = x_train[:8]
    frozen = quantize(model, example, [x_train[i : i + 128] for i in range(0, 512, 128)])
    return Network(
        name,
        model,
        frozen,
        dg.export(frozen, (example,)),
        (example,),
        lambda n: repeat_to(x_test, n),
    )


def networks() -> list[Network]:
    found = [
        resnet18_network(),
        digits_network("digits CNN (demo)", "digits_cnn", "DigitsCNN"),
        optional_network("digits transformer", "digits_decoder", "DigitsDecoder"),
    ]
    return [n for n in found if n is not None]


def optional_network(name: str, example_name: str, model_class: str) -> Network | None:
    """An example that may not exist yet, or not compile yet: skipped with a message, not fatal."""
    try:
        return digits_network(name, example_name, model_class)
    except Exception as error:  # a benchmark of the rest is still worth printing
        first_line = (str(error).strip().splitlines() or [repr(error)])[0]
        print(f"skipped {name} (examples/{example_name}.py): {type(error).__name__}: {first_line}")
        return None


# -- benchmarks -------------------------------------------------------------------------


def max_lsb(network: Network, x: torch.Tensor) -> int:
    """Largest |device - frozen| over the output, in output quantization steps."""
    scale = network.program.output_qparams[0][0]
    with torch.no_grad():
        diff = (network.program.run(x) - network.frozen(x)).abs() / scale
    return int(diff.round().max().item())


DEVICE_ROW_SECONDS = 0.5
"""Time a device row's rounds take at least, where `--repeats` rounds take less: a call of a
millisecond gets hundreds of rounds, not seven, and the medians steady on this noisy
machine. With seven rounds the digits transformer at batch 32 read 1.49 to 1.62 in seven
runs of one afternoon."""

MAX_DEVICE_ROUNDS = 500


def device_speed(nets: list[Network], repeats: int) -> list[Row]:
    return [device_row(net, batch, repeats) for net in nets for batch in DEVICE_BATCHES]


def device_row(net: Network, batch: int, repeats: int) -> Row:
    x = net.batch(batch)
    with torch.no_grad():
        sides = [lambda: net.program.run(x), lambda: net.model(x)]
        rounds = device_rounds(sides, repeats)
        device, eager = timing.measure_side_by_side(sides, rounds, CLOCK, warm_up=False)
    return Row(
        "device speed",
        f"{net.name}, batch {batch}",
        f"{device.median * 1e3:.2f} ms",
        f"{eager.median * 1e3:.2f} ms fp32 eager",
        device.median / eager.median,
        1.5,
        f"max {max_lsb(net, x)} LSB vs frozen; {rounds} rounds",
    )


def device_rounds(sides: list[Callable[[], object]], repeats: int) -> int:
    """Rounds for a device row: `repeats`, or as many as fill `DEVICE_ROW_SECONDS` (at most
    `MAX_DEVICE_ROUNDS`), judged by one round after each side's warm-up call."""
    for side in sides:
        side()
    started = time.perf_counter()
    for side in sides:
        side()
    one_round = time.perf_counter() - started
    return max(repeats, min(MAX_DEVICE_ROUNDS, int(DEVICE_ROW_SECONDS / max(one_round, 1e-9))))


def export_speed(nets: list[Network], repeats: int) -> list[Row]:
    return [export_row(net, repeats) for net in nets]


def export_row(net: Network, repeats: int) -> Row:
    dg_export, torch_export = measure_side_by_side(
        [
            lambda: dg.export(net.frozen, net.example),
            lambda: torch.export.export(net.model, net.example),
        ],
        repeats,
    )
    return Row(
        "export speed",
        net.name,
        f"{dg_export.median:.3f} s dg.export",
        f"{torch_export.median:.3f} s torch.export",
        dg_export.median / torch_export.median,
        1.0,
        f"first calls {dg_export.first:.3f} s / {torch_export.first:.3f} s",
    )


def dg_opt_speed(resnet: Network, repeats: int) -> list[Row]:
    from xdsl.xdsl_opt_main import xDSLOptMain

    from dg.tools import dg_opt

    with tempfile.TemporaryDirectory() as tmp:
        source, output = Path(tmp) / "resnet18.dgtorch.mlir", str(Path(tmp) / "out.mlir")
        source.write_text(resnet.program.mlir("dgtorch"))

        def pipeline() -> None:
            if dg_opt.main([str(source), "-p", "dg-pipeline", "-o", output]) != 0:
                raise RuntimeError("dg-opt failed on the ResNet-18 dgtorch module")

        def parse_print() -> None:
            xDSLOptMain(args=[str(source), "-o", output]).run()

        full, baseline = measure_side_by_side([pipeline, parse_print], repeats)
        size = source.stat().st_size
    return [
        Row(
            "dg-opt",
            f"ResNet-18 dgtorch .mlir ({size / 2**20:.1f} MiB)",
            f"{full.median:.2f} s -p dg-pipeline",
            f"{baseline.median:.2f} s xdsl-opt parse+print",
            full.median / baseline.median,
            1.3,
        )
    ]


def weight_bytes(model: nn.Module) -> int:
    return sum(p.numel() * p.element_size() for p in model.parameters())


def export_memory_child() -> None:
    """In a fresh process: ResNet-18's export, and the kB of RSS before it and its peak during it.

    Writing 5 to /proc/self/clear_refs resets the peak (VmHWM) to the current RSS,
    so the peak read afterwards is the export's, not the quantization's before it.
    """
    net = resnet18_network()
    # Freed heap back to the OS first, so that RSS is live data: otherwise the export
    # reuses memory the calibration freed and its peak barely shows.
    timing.reset_peak_rss()
    before = timing.resident_kib("VmRSS")
    dg.export(net.frozen, net.example)
    peak = timing.resident_kib("VmHWM")
    print(json.dumps({"before": before, "peak": peak, "weights": weight_bytes(net.model)}))


def export_memory() -> list[Row]:
    child = subprocess.run(
        [sys.executable, __file__, "--memory-child"], capture_output=True, text=True, check=True
    )
    m = json.loads(child.stdout.strip().splitlines()[-1])
    growth = (m["peak"] - m["before"]) * 1024
    return [
        Row(
            "memory",
            "ResNet-18 dg.export, peak RSS growth",
            f"{growth / 2**20:.0f} MiB (peak {m['peak'] / 2**10:.0f} MiB)",
            f"{m['weights'] / 2**20:.0f} MiB fp32 weights",
            growth / m["weights"],
            None,
        )
    ]


def conv_chain(blocks: int, channels: int = 8) -> nn.Sequential:
    layers: list[nn.Module] = []
    for _ in range(blocks):
        layers += [nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU()]
    return nn.Sequential(*layers).eval()


def chain_export_time(blocks: int, example: torch.Tensor, repeats: int) -> float:
    torch.manual_seed(0)
    frozen = quantize(conv_chain(blocks), example, [torch.randn(8, 8, 8, 8)])
    (export,) = measure_side_by_side([lambda: dg.export(frozen, (example,))], repeats)
    return export.median


def scaling(repeats: int) -> list[Row]:
    example = torch.randn(2, 8, 8, 8)
    times = [chain_export_time(blocks, example, repeats) for blocks in CHAIN_LENGTHS]
    slope = float(np.polyfit(np.log(CHAIN_LENGTHS), np.log(times), 1)[0])
    listing = ", ".join(f"{n}: {t:.2f}" for n, t in zip(CHAIN_LENGTHS, times, strict=True))
    return [
        Row(
            "scaling",
            f"dg.export, {CHAIN_LENGTHS[0]}..{CHAIN_LENGTHS[-1]} conv blocks",
            f"exponent {slope:.2f}",
            f"s per length: {listing}",
            slope,
            1.1,
        )
    ]


def device_speed_again(nets: list[Network], threads: int, repeats: int) -> list[Row]:
    """The device rows at `threads` threads, in wall time (CPU time would count the threads'
    waiting), printed as their own table."""
    global CLOCK
    set_threads(threads)
    CLOCK = CLOCKS["wall"]
    rows = device_speed(nets, repeats)
    print(
        f"\nThe device rows at {threads} torch and BLAS threads; wall time, medians of at "
        f"least {repeats} interleaved rounds (a row's count in its note) after a warm-up\n"
    )
    print_rows(rows)
    return rows


def set_threads(threads: int) -> None:
    """The same thread count for torch's kernels and numpy's BLAS, so both sides get alike."""
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(threads)
    threadpool_limits(threads)


def print_rows(rows: list[Row]) -> None:
    print("| benchmark | case | dg | baseline | dg / baseline | target | verdict | note |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        target = "-" if r.target is None else f"<= {r.target}"
        print(
            f"| {r.benchmark} | {r.case} | {r.dg} | {r.baseline} | {r.ratio:.2f} "
            f"| {target} | {r.verdict()} | {r.note} |"
        )


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="timed rounds after the warm-up")
    parser.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch and BLAS threads (default 1: on a shared machine, waiting threads "
        "of a multi-threaded kernel make every timing erratic)",
    )
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="cpu",
        help="cpu: process CPU time (default; with one thread, the work done, whatever else "
        "runs on the machine); wall: elapsed time",
    )
    parser.add_argument(
        "--quick", action="store_true", help="device and export sections only, 3 rounds"
    )
    parser.add_argument(
        "--also-threads",
        type=int,
        help="then the device section again at this many threads, in wall time (CPU time "
        "would count the threads' waiting), on the same compiled networks",
    )
    parser.add_argument("--memory-child", action="store_true", help=argparse.SUPPRESS)
    return parser


def main() -> None:
    parser = argument_parser()
    args = parser.parse_args()
    if args.memory_child:
        export_memory_child()
        return
    if args.quick:
        args.repeats = min(args.repeats, 3)
        args.only = ",".join(s for s in args.only.split(",") if s in ("device", "export"))
    sections = args.only.split(",")
    if unknown := set(sections) - set(SECTIONS):
        parser.error(f"unknown sections {sorted(unknown)}; choose from {', '.join(SECTIONS)}")

    set_threads(args.threads)
    global CLOCK
    CLOCK = CLOCKS[args.clock]
    nets = networks() if {"device", "export", "dg-opt"} & set(sections) else []
    rows: list[Row] = []
    if "device" in sections:
        rows += device_speed(nets, args.repeats)
    if "export" in sections:
        rows += export_speed(nets, max(3, args.repeats // 2))
    if "dg-opt" in sections:
        rows += dg_opt_speed(nets[0], max(3, args.repeats // 2))
    if "memory" in sections:
        rows += export_memory()
    if "scaling" in sections:
        rows += scaling(3)
    print(
        f"\ndg {dg.__version__}, torch {torch.__version__}, {torch.get_num_threads()} torch "
        f"and BLAS threads; {args.clock} time, medians of {args.repeats} interleaved rounds "
        "after a warm-up (device rows: at least as many, filling "
        f"{DEVICE_ROW_SECONDS} s; the count in the note)\n"
    )
    print_rows(rows)
    if args.also_threads and "device" in sections:
        rows += device_speed_again(nets, args.also_threads, args.repeats)
    if any(math.isnan(r.ratio) for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
