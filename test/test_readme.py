"""The README's Python API examples run as written (they are what a new user copies first)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
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


def shell_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", README.read_text(), flags=re.DOTALL)


NOT_RUN_HERE = ("make ", "examples/digits_decoder.py", "--compare")
"""Shell lines this test leaves out: the make targets (`make test` is this run; demo and fuzz
take minutes), the decoder demo (minutes) and `--compare`, which needs the saved reference
models (test/test_demo_model.py runs it)."""


def test_readme_shell_commands_run(tmp_path, monkeypatch):
    """The README's shell commands run as written, on the files its Python example writes."""
    monkeypatch.chdir(tmp_path)
    exec(compile(block_with("import torch, dg"), str(README), "exec"), {"__name__": "readme"})
    venv_bin = Path(sys.executable).parent
    commands = [
        line.strip()
        for block in shell_blocks()
        for line in block.splitlines()
        if line.strip() and not any(skip in line for skip in NOT_RUN_HERE)
    ]
    assert any("dg-run model.dghw.mlir --float" in command for command in commands)
    for command in commands:
        done = subprocess.run(
            command.replace(".venv/bin/", f"{venv_bin}/"),
            shell=True,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, f"{command}\n{done.stderr}"
        assert done.stderr == "", f"{command}\n{done.stderr}"
    assert np.load(tmp_path / "y.npy").dtype == np.float32
