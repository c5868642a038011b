"""Time the device model against the frozen model on the decoder example (digits_decoder.py).

`DigitsDecoder` (a pre-norm transformer block: dg.Norm, dg.SelfAttention with
RoPE, a ReLU MLP), PTQ-calibrated on scikit-learn's digits read as 8-row
sequences, then on a batch of held-out sequences: `program.run(x)` (the
bit-accurate device model) vs `frozen(x)` (the fake-quantized torch model it
must match) and the float model, side by side in one run: the first call and
the median of the repeats after it. Training does not change the timings, so
the weights stay as initialized (seeded).

    .venv/bin/python bench/decoder_example.py [--batch 256] [--repeats 10]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import torch

import dg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import measure, print_table  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "digits_decoder.py"


def load_example():
    spec = importlib.util.spec_from_file_location("digits_decoder", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()

    example = load_example()
    torch.manual_seed(0)
    x_train, x_test, _, _ = example.load_data(seed=0)
    model = example.DigitsDecoder().eval()
    prepared = dg.prepare_ptq(model, (x_train[:8],))
    with torch.no_grad():
        for i in range(0, 512, 128):
            prepared(x_train[i : i + 128])
    frozen = dg.freeze_quantization(prepared)
    program = dg.export(frozen, (x_train[:8],))

    x = x_test[: args.batch]
    if len(x) < args.batch:  # the held-out split has 450 sequences
        x = x.repeat((args.batch + len(x) - 1) // len(x), 1, 1)[: args.batch]
    with torch.no_grad():
        scale = program.output_qparams[0][0]
        lsb = ((program.run(x) - frozen(x)).abs() / scale).round().max().item()
        run_dg = measure(lambda: program.run(x), args.repeats)
        run_frozen = measure(lambda: frozen(x), args.repeats)
        run_float = measure(lambda: model(x), args.repeats)
    print(f"program vs frozen model: max {lsb:.0f} output LSB on a batch of {len(x)}")
    print_table(
        f"DigitsDecoder, batch {len(x)}, {torch.get_num_threads()} torch threads, "
        "first call, then median of repeats",
        [
            ("run", "program.run (device)", run_dg, "frozen(x) (fake quant)", run_frozen),
            ("run", "program.run (device)", run_dg, "float eager", run_float),
        ],
    )


if __name__ == "__main__":
    main()
