"""Time dg on a full-width ResNet-18-shaped network at 64x64 against torch, side by side.

The network is torchvision's ResNet-18 (test/models/user_models.py) with the one
edit dg asks for (a stem max pool without padding), PTQ-calibrated on random
data. Measured in one run, first call and median of the repeats after it:

- compile: `dg.export(frozen)` vs `torch.export.export(float model)`, the
  first call (the program dg.export would compile once) and repeated;
- run: `program.run(x)` (the bit-accurate device model) vs PyTorch eager fp32,
  and the frozen (fake-quantized) model for reference.

    .venv/bin/python bench/resnet18.py [--batch 8] [--repeats 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

import dg

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "models"))
from timing import measure, print_table  # noqa: E402
from user_models import resnet18  # noqa: E402

INPUT = (3, 64, 64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--export-repeats", type=int, default=3)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = resnet18(num_classes=1000, maxpool_padding=0)
    model.train()
    with torch.no_grad():  # settle batch norm statistics, as in a trained model
        for _ in range(3):
            model(torch.randn(16, *INPUT))
    model.eval()
    example = (torch.randn(2, *INPUT),)
    x = torch.randn(args.batch, *INPUT)

    started = time.perf_counter()
    prepared = dg.prepare_ptq(model, example)
    with torch.no_grad():
        for _ in range(3):
            prepared(torch.randn(16, *INPUT))
    frozen = dg.freeze_quantization(prepared)
    print(f"quantize (prepare_ptq + calibrate + freeze): {time.perf_counter() - started:.1f} s")

    program = dg.export(frozen, example)
    scale = program.output_qparams[0][0]
    with torch.no_grad():
        lsb = ((program.run(x) - frozen(x)).abs() / scale).round().max().item()
    print(f"program vs frozen model: max {lsb:.0f} output LSB on a batch of {args.batch}")

    # torch.export first: its cold call also pays for torch's one-time tracing setup.
    export_torch = measure(lambda: torch.export.export(model, example), args.export_repeats)
    export_dg = measure(lambda: dg.export(frozen, example), args.export_repeats)
    with torch.no_grad():
        run_dg = measure(lambda: program.run(x), args.repeats)
        run_eager = measure(lambda: model(x), args.repeats)
        run_frozen = measure(lambda: frozen(x), args.repeats)

    print_table(
        f"ResNet-18 (full width), {INPUT[1]}x{INPUT[2]} input, batch {args.batch}, "
        f"{torch.get_num_threads()} torch threads; first call, then median of repeats",
        [
            ("compile", "dg.export", export_dg, "torch.export.export", export_torch),
            ("run", "program.run (device)", run_dg, "eager fp32", run_eager),
            ("run", "program.run (device)", run_dg, "frozen (fake quant)", run_frozen),
        ],
    )
    print(f"\nprogram.run per image: {run_dg.median / args.batch * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
