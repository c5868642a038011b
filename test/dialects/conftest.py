"""Make the scalar reference (test/reference) importable from the dialect tests."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reference"))
