"""End-to-end model tests of `torch.mul(x, const_tensor)`: an activation times a constant table.

The constant is quantized int8 per tensor; the device multiplies centred
integers exactly (`dghw.mul`) and rescales once, so the program must be within
one output step of the frozen model on every element (`assert_matches_frozen`).
"""

from __future__ import annotations

import pytest
import torch
from harness import assert_matches_frozen, calls_matching, compile_model
from torch import nn

ROW = "torch.mul(x, const_tensor)"
SEQUENCE = (5, 8)
"""[S, D] per sample: 5 positions of 8 features."""


def rope_tables(positions: int, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """RoPE's cos/sin tables [positions, dim] (each frequency twice, the usual layout)."""
    inverse_frequency = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
    angles = torch.outer(torch.arange(positions).float(), inverse_frequency)
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos(), angles.sin()


class LinearTimesTable(nn.Module):
    """Linear, then times a constant table; `table_first` writes `table * y`."""

    def __init__(self, table: torch.Tensor, table_first: bool = False):
        super().__init__()
        self.fc = nn.Linear(SEQUENCE[1], SEQUENCE[1])
        self.register_buffer("table", table)
        self.table_first = table_first

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x)
        return torch.mul(self.table, y) if self.table_first else torch.mul(y, self.table)


class RopeLikeSum(nn.Module):
    """The cos/sin half of RoPE: q * cos + k * sin, then a Linear."""

    def __init__(self):
        super().__init__()
        self.q, self.k = nn.Linear(8, 8), nn.Linear(8, 8)
        cos, sin = rope_tables(*SEQUENCE)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        self.out = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.q(x) * self.cos + self.k(x) * self.sin)


class ConvTimesChannelScale(nn.Module):
    """conv, then times a per-channel constant [C, 1, 1] (broadcast over NCHW)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.register_buffer("scale", torch.tensor([0.5, -1.5, 2.0, 0.25]).reshape(4, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x) * self.scale


class FlatTableViewed(nn.Module):
    """Linear, then times a table kept flat and reshaped in forward (a layout op on a constant)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(SEQUENCE[1], SEQUENCE[1])
        self.register_buffer("flat", _cos().flatten(), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x) * self.flat.view(SEQUENCE)


def _cos() -> torch.Tensor:
    return rope_tables(*SEQUENCE)[0]


def _sin_row() -> torch.Tensor:
    return rope_tables(*SEQUENCE)[1][None]  # [1, S, D]: extent 1 on the batch axis


CASES = {
    "cos_SxD": (lambda: LinearTimesTable(_cos()), SEQUENCE),
    "table_first_1xSxD": (lambda: LinearTimesTable(_sin_row(), table_first=True), SEQUENCE),
    "row_D": (lambda: LinearTimesTable(torch.linspace(-2.0, 3.0, 8)), SEQUENCE),
    "rope_cos_sin_sum": (RopeLikeSum, SEQUENCE),
    "conv_channel_scale": (ConvTimesChannelScale, (3, 8, 8)),
    "table_viewed_in_forward": (FlatTableViewed, SEQUENCE),
}

RUNS = [*((case, "ptq") for case in CASES), ("rope_cos_sin_sum", "qat")]


@pytest.mark.parametrize("case, mode", RUNS)
def test_mul_by_constant_tensor(case: str, mode: str) -> None:
    make, shape = CASES[case]
    compiled = compile_model(make(), [shape], mode=mode)
    muls = calls_matching(compiled.frozen, "mul")
    assert muls, "the frozen model must keep the multiplication"
    assert compiled.program.mlir().count("dghw.mul ") == len(muls)
    assert_matches_frozen(ROW, f"{case}_{mode}", compiled)


def test_constant_is_quantized_per_tensor_symmetric() -> None:
    compiled = compile_model(LinearTimesTable(_cos()), [SEQUENCE])
    (mul,) = calls_matching(compiled.frozen, "mul")
    (dequantize,) = [a for a in mul.args if a.args[0].op == "get_attr"]
    assert "dequantize_per_tensor" in str(dequantize.target)
    scale, zero_point = dequantize.args[1], dequantize.args[2]
    assert zero_point == 0
    assert scale == pytest.approx(1.0 / 127, rel=1e-6)  # max |cos| = 1 is the top of the grid
