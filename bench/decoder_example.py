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

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import time_digits_example  # noqa: E402

if __name__ == "__main__":
    time_digits_example("digits_decoder", "DigitsDecoder", __doc__.splitlines()[0])
