"""A normal session prints nothing that is not dg's own (dg.frontend.third_party).

Each test runs a fresh Python: the messages come from importing torchao, once per process.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

BIN = Path(sys.executable).parent

SESSION = textwrap.dedent(
    """
    import logging, warnings
    import numpy as np, torch, dg
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Flatten(),
                          nn.Linear(8 * 8 * 8, 10))
    x = torch.rand(4, 1, 8, 8)
    prepared = dg.prepare_ptq(model, (x,))
    prepared(x)
    frozen = dg.freeze_quantization(prepared)
    program = dg.export(frozen, (x,))
    program.run(x)
    program.save("model.mlir", reference=frozen, float_model=model)
    dg.load("model.mlir").run(x)
    np.save("x.npy", x.numpy())
    np.save("x8.npy", program.quantize_inputs(x)[0])
    # The user's own warnings and the dependencies' other messages still reach the user.
    warnings.warn("the user's warning", FutureWarning)
    logging.getLogger("torchao").warning("another torchao message")
    """
)


def test_a_session_and_dg_run_print_nothing_but_the_users_own(tmp_path: Path) -> None:
    session = subprocess.run(
        [sys.executable, "-c", SESSION], cwd=tmp_path, capture_output=True, text=True
    )
    assert session.returncode == 0, session.stderr
    lines = session.stderr.splitlines()
    assert lines == ["<string>:20: FutureWarning: the user's warning", "another torchao message"]
    for args in (["--float"], ["--compare"]):
        run = subprocess.run(
            [
                str(BIN / "dg-run"),
                "model.mlir",
                "-i",
                "x.npy" if args == ["--float"] else "x8.npy",
                *args,
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert run.returncode == 0, run.stderr
        assert run.stderr == "", args
        assert run.stdout
