"""RoPE on the dg device: the rotation written with the sign in the constant sin table.

The classic rotary embedding is ``x * cos + rotate_half(x) * sin`` with
``rotate_half(x) = cat(-x2, x1)``. dg has no negation of an activation, so the
sign goes into the constant table instead:

    cat(-x2, x1) * cat(sin, sin)  ==  cat(x2, x1) * cat(-sin, sin)  =:  cat(x2, x1) * sin_signed

Every op is then a dg row: slices of the last axis, torch.cat, activation times
a constant table, add. `dg.RotaryEmbedding(head_dim, max_seq_len)` is this
module; the one below spells it out. The script calibrates a tiny model (Linear,
RoPE, Linear) with PTQ, compiles it, runs it on the bit-accurate device model,
and prints the largest difference from the frozen torch model in output steps
(LSB). It also shows the classic formulation's error message.

    python examples/rope.py
"""

from __future__ import annotations

import torch
from torch import nn

import dg

SEQ_LEN, DIM = 8, 16


def rope_tables(seq_len: int, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``cos`` and ``sin_signed = cat(-sin_half, sin_half)``, each [seq_len, dim]."""
    frequency = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
    angles = torch.outer(torch.arange(seq_len).float(), frequency)
    cos = torch.cat((angles.cos(), angles.cos()), dim=-1)
    sin_signed = torch.cat((-angles.sin(), angles.sin()), dim=-1)
    return cos, sin_signed


class RopeBlock(nn.Module):
    """Linear, the rotary embedding in dg's formulation, Linear."""

    def __init__(self, classic: bool = False):
        super().__init__()
        self.inp, self.out = nn.Linear(DIM, DIM), nn.Linear(DIM, DIM)
        cos, sin_signed = rope_tables(SEQ_LEN, DIM)
        self.register_buffer("cos", cos)
        self.register_buffer("sin_signed", sin_signed)
        self.register_buffer("sin", sin_signed.abs())  # the classic layout: cat(sin, sin)
        self.classic = classic

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.inp(x)
        x1, x2 = y[..., : DIM // 2], y[..., DIM // 2 :]
        if self.classic:  # rejected: -x2 is a negation
            rotated = y * self.cos + torch.cat((-x2, x1), dim=-1) * self.sin
        else:
            rotated = y * self.cos + torch.cat((x2, x1), dim=-1) * self.sin_signed
        return self.out(rotated)


def max_lsb_difference(seed: int = 0) -> int:
    """Calibrate, compile and run `RopeBlock`; the largest |device - frozen| in output LSB."""
    torch.manual_seed(seed)
    example = (torch.randn(2, SEQ_LEN, DIM),)
    model = RopeBlock().eval()
    prepared = dg.prepare_ptq(model, example)
    with torch.no_grad():
        for _ in range(4):
            prepared(torch.randn(16, SEQ_LEN, DIM))
    frozen = dg.freeze_quantization(prepared)
    program = dg.export(frozen, example)
    x = torch.randn(32, SEQ_LEN, DIM)
    with torch.no_grad():
        expected = frozen(x)
    actual = program.run(x)
    ((scale, _),) = program.output_qparams
    return int(((actual - expected).abs() / scale).round().max())


def main() -> None:
    print(f"RoPE block on the device model: max difference {max_lsb_difference()} LSB")
    print("The classic rotate_half, cat((-x2, x1)) * sin, is rejected:")
    for problem in dg.check(RopeBlock(classic=True), (torch.randn(2, SEQ_LEN, DIM),)):
        print(f"  {problem}")


if __name__ == "__main__":
    main()
