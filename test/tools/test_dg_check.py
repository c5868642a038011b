"""`dg-check FILE.py:CLASS --input SHAPE`: exit 0 compiles, 1 does not, 2 usage error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
FRONTEND_TESTS = Path(__file__).parents[1] / "frontend"
ZOO = Path(__file__).parents[2] / "examples" / "zoo"


def dg_check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "dg-check"), *args], capture_output=True, text=True, check=False, timeout=300
    )


def test_mobilenet_v2_as_written_does_not_compile():
    done = dg_check(
        f"{ZOO / 'mobilenet_v2.py'}:MobileNetV2",
        "--input",
        "1x3x64x64",
        "--kwargs",
        '{"width_mult": 0.25, "num_classes": 10}',
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("dg cannot compile this model (35 problems, 1 kind):")
    assert "Traceback" not in done.stdout + done.stderr


def test_mobilenet_v2_with_relu_compiles(tmp_path):
    model = tmp_path / "model.py"
    model.write_text(
        "from torch import nn\n"
        "from mobilenet_v2 import MobileNetV2\n\n"
        "class Edited(MobileNetV2):\n"
        "    def __init__(self):\n"
        "        super().__init__(width_mult=0.25, num_classes=10, activation_layer=nn.ReLU)\n"
    )
    sys_path = f"{ZOO}"
    done = subprocess.run(
        [str(BIN / "dg-check"), f"{model}:Edited", "-i", "1x3x64x64"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={"PYTHONPATH": sys_path, "PATH": str(BIN)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "dg can compile this model" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nowhere.py:Model", "--input", "1x3"], "nowhere.py: no such file"),
        ([f"{FRONTEND_TESTS / 'vit_style.py'}:Missing", "--input", "1x3"], "defines no class"),
        ([f"{FRONTEND_TESTS / 'vit_style.py'}:ViT", "--input", "1xthree"], "is not a shape"),
        ([f"{FRONTEND_TESTS / 'vit_style.py'}:ViT"], "give the shape of every model input"),
        ([f"{FRONTEND_TESTS / 'vit_style.py'}:ViT", "-i", "1x3", "--kwargs", "{"], "not JSON"),
        (
            [f"{FRONTEND_TESTS / 'vit_style.py'}:ViT", "-i", "1x3", "--kwargs", '{"bad": 1}'],
            "ViT(**{'bad': 1}) failed: TypeError",
        ),
        (["just-a-file.py", "--input", "1x3"], "is not FILE.py:CLASS"),
    ],
)
def test_usage_errors_exit_2_without_a_traceback(args, message):
    done = dg_check(*args)
    assert done.returncode == 2
    assert message in done.stderr and done.stderr.startswith("dg-check: error: ")
    assert "Traceback" not in done.stderr


def test_bad_option_is_a_usage_error():
    done = dg_check("--no-such-option")
    assert done.returncode == 2 and "Traceback" not in done.stderr
