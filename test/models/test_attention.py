"""End-to-end model tests of `dg.SelfAttention` (with and without RoPE) and of the same
attention written out by hand with explicit matmul + softmax.

The standard: the program is within one output step of the frozen model on every
element (`assert_matches_frozen`). The hand-written model has the module's structure
and weights, so dg must compile it to the same program: the same integers out.
"""

from __future__ import annotations

import importlib.util
import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from harness import assert_matches_frozen, compile_model, inputs
from torch import nn

import dg

ROW = "dg.SelfAttention"
DIM, HEADS, SEQ_LEN = 16, 2, 6
SEQUENCE = (SEQ_LEN, DIM)


class ExplicitAttention(nn.Module):
    """`dg.SelfAttention` as a user would write it: Linear, heads, scores, softmax, @ v."""

    def __init__(self, rope: bool):
        super().__init__()
        self.q, self.k, self.v, self.out = (nn.Linear(DIM, DIM) for _ in range(4))
        head_dim = DIM // HEADS
        frequency = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).double() / head_dim))
        angles = torch.outer(torch.arange(SEQ_LEN).double(), frequency)
        self.rope = rope
        self.register_buffer("cos", angles.cos().repeat(1, 2).float(), persistent=False)
        sin_signed = torch.cat((-angles.sin(), angles.sin()), dim=-1).float()
        self.register_buffer("sin_signed", sin_signed, persistent=False)

    def rotate(self, x):
        half = x.shape[-1] // 2
        return x * self.cos + torch.cat((x[..., half:], x[..., :half]), dim=-1) * self.sin_signed

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = (
            f(x).view(b, s, HEADS, DIM // HEADS).transpose(1, 2) for f in (self.q, self.k, self.v)
        )
        if self.rope:
            q, k = self.rotate(q), self.rotate(k)
        scores = q @ k.transpose(-2, -1) / math.sqrt(DIM // HEADS)
        mixed = torch.softmax(scores, dim=-1) @ v
        return self.out(mixed.transpose(1, 2).reshape(b, s, DIM))


def _module(rope: bool) -> dg.SelfAttention:
    return dg.SelfAttention(DIM, HEADS, rope=rope, max_seq_len=SEQ_LEN if rope else None)


@pytest.mark.parametrize("rope, mode", [(False, "ptq"), (False, "qat"), (True, "qat")])
def test_self_attention(rope: bool, mode: str) -> None:
    compiled = compile_model(_module(rope), [SEQUENCE], mode=mode)
    _assert_attention_program(compiled.program.mlir(), rope)
    assert_matches_frozen(ROW, f"rope={rope}_{mode}", compiled)


def test_explicit_attention_compiles_like_the_module() -> None:
    """RoPE attention (PTQ) by the module and by hand: the same program, the same integers."""
    module = _module(rope=True)
    explicit = ExplicitAttention(rope=True)
    explicit.load_state_dict(module.state_dict())
    by_module, by_hand = compile_model(module, [SEQUENCE]), compile_model(explicit, [SEQUENCE])
    _assert_attention_program(by_hand.program.mlir(), rope=True)
    assert_matches_frozen(ROW, "rope=True_ptq", by_module)
    assert_matches_frozen("explicit matmul + softmax attention", "rope=True_ptq", by_hand)
    (x,) = inputs([SEQUENCE], 5, seed=7)
    with torch.no_grad():
        assert torch.equal(by_module.frozen(x), by_hand.frozen(x))
    assert np.array_equal(by_module.program.run(x).numpy(), by_hand.program.run(x).numpy())


def _assert_attention_program(text: str, rope: bool) -> None:
    assert text.count("dghw.matmul ") == 2 and "dghw.softmax" in text
    assert "dghw.mul " not in text or rope, "the score scale must fold into the matmul"
    assert text.count("dghw.mul ") == (4 if rope else 0), "RoPE: x * cos and swapped * sin"


def test_rope_needs_the_table_length() -> None:
    with pytest.raises(ValueError, match="max_seq_len"):
        dg.SelfAttention(DIM, HEADS, rope=True)
    with pytest.raises(ValueError, match=r"expected \[\.\.\., S, 8\] with S <= 6"):
        _module(rope=True)(torch.randn(1, SEQ_LEN + 1, DIM))


class CachedRope(nn.Module):
    """Linear -> RoPE -> Linear with Llama's habit: tables for 16 positions, sliced to S."""

    def __init__(self):
        super().__init__()
        self.inp, self.out = nn.Linear(DIM, DIM), nn.Linear(DIM, DIM)
        cos, sin_signed = dg.frontend.modules.rope_tables(16, DIM)
        self.register_buffer("cos_cached", cos, persistent=False)
        self.register_buffer("sin_cached", sin_signed, persistent=False)

    def forward(self, x):
        x, seq_len, half = self.inp(x), x.shape[1], DIM // 2
        cos, sin = self.cos_cached[:seq_len], self.sin_cached[:seq_len]
        return self.out(x * cos + torch.cat((x[..., half:], x[..., :half]), dim=-1) * sin)


def test_rope_tables_longer_than_the_sequence_are_sliced_at_compile_time() -> None:
    """A slice of a model constant is computed by the compiler: no slice reaches the device."""
    for case, model in [
        ("table_16_sequence_6", dg.SelfAttention(DIM, HEADS, rope=True, max_seq_len=16)),
        ("cached_tables_sliced", CachedRope()),
    ]:
        compiled = compile_model(model, [SEQUENCE], mode="ptq")
        text = compiled.program.mlir()
        muls = [line for line in text.splitlines() if "dghw.mul " in line]
        # x * table: the table operand has the sequence's S rows, not the 16 it was built with.
        assert len(muls) >= 2 and all(
            re.search(rf"tensor<(1x)?{SEQ_LEN}x[\dx]*xi8>\)", m) for m in muls
        )
        assert_matches_frozen(ROW, f"rope_{case}", compiled)


def test_rope_example_runs_within_one_step() -> None:
    """`examples/rope.py` compiles its RoPE block and matches the frozen model."""
    path = Path(__file__).resolve().parents[2] / "examples" / "rope.py"
    spec = importlib.util.spec_from_file_location("rope_example", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    assert example.max_lsb_difference() <= 1
