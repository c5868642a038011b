"""Time the device model against the frozen model on the demo network (examples/digits_cnn.py).

`DigitsCNN`, PTQ-calibrated on scikit-learn's digits, then on a batch of 256
held-out images: `program.run(x)` (the bit-accurate device model) vs
`frozen(x)` (the fake-quantized torch model it must match) and the float model,
side by side: the first call and the median of the repeats after it.

    .venv/bin/python bench/demo_model.py [--batch 256] [--repeats 10]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import time_digits_example  # noqa: E402

if __name__ == "__main__":
    time_digits_example("digits_cnn", "DigitsCNN", __doc__.splitlines()[0])
