"""Make the model harness (test/models) and the scalar reference (test/reference) importable."""

import sys
from pathlib import Path

TEST = Path(__file__).resolve().parents[1]
for directory in ("models", "reference"):
    sys.path.insert(0, str(TEST / directory))
