"""The README's Python API examples run as written (they are what a new user copies first)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


def block_with(marker: str) -> str:
    (block,) = [b for b in python_blocks() if marker in b]
    return block


@pytest.mark.parametrize("marker", ["dg.prepare_qat(model", "class Mix(dg.LogicLayer)"])
def test_readme_example_runs(marker, tmp_path, monkeypatch):
    """Each self-contained example after the first, which brings the imports, runs clean."""
    monkeypatch.chdir(tmp_path)  # program.save writes model.mlir to the working directory
    setup = block_with("import torch, dg")
    example = block_with(marker)
    code = setup if example == setup else setup + example
    exec(compile(code, str(README), "exec"), {"__name__": "readme"})
