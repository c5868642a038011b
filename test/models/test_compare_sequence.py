"""`Program.compare` on a transformer block: every layer of one module call pairs with its own
device value (attention's heads, RoPE's halves and the softmax's layout transposes share one
source line, and the device runs some of them in another order than the graph)."""

from __future__ import annotations

from harness import compile_model, inputs, with_scaled_rescale
from torch import nn

import dg

SEQUENCE = (6, 8)


class Block(nn.Module):
    """Embedding, pre-norm RoPE attention with a residual add, a ReLU MLP, a head."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(8, 16)
        self.norm = dg.Norm(16)
        self.attn = dg.SelfAttention(16, 2, rope=True, max_seq_len=6)
        self.fc = nn.Linear(16, 16)
        self.relu = nn.ReLU()
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        h = self.embed(x)
        h = h + self.attn(self.norm(h))
        h = h + self.relu(self.fc(h))
        return self.head(h)


def _compiled():
    model = Block()
    compiled = compile_model(model, [SEQUENCE])
    return model, compiled, inputs([SEQUENCE], 32, seed=5)


def test_every_layer_of_a_transformer_block_pairs_with_its_own_device_value():
    model, compiled, x = _compiled()
    report = compiled.program.compare(compiled.frozen, *x, float_model=model)
    # RoPE's constant tables are quantized too; on the device they are constants.
    assert all("sin" in name or "cos" in name for name in report.unmatched)
    # The layer names its frozen ops and the device ops computing it: they must agree.
    device_ops = {row.op: row.device_ops for row in report.rows}
    assert "softmax" in device_ops["softmax"]
    assert "concat" in device_ops["cat"]
    assert "matmul" in device_ops["matmul+mul"]
    norm = next(row for row in report.rows if row.layer == "norm")
    assert (norm.op, norm.device_ops) == ("norm", ("norm",))  # the body's ops are one layer
    assert report.first_bad is None
    for row in report.rows:
        assert row.max_steps <= 1 and row.own_steps <= 1, row
        assert row.sqnr_float_db is not None and row.sqnr_float_db > 20


def test_a_tampered_attention_projection_is_the_first_bad_layer():
    _, compiled, x = _compiled()
    program = with_scaled_rescale(compiled.program, "attn.v", 0.8)
    report = program.compare(compiled.frozen, *x)
    first = report.first_bad
    assert first is not None and first.layer == "attn.v" and first.own_steps > 1
    assert all(row.own_steps <= 1 for row in report.rows[: first.index])


class Stack(nn.Module):
    """Three alike pre-norm attention blocks called from one line: every layer of every block
    shares its source line with the same layer of the others."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(Block16() for _ in range(3))

    def forward(self, h):
        for block in self.blocks:
            h = block(h)
        return h


class Block16(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = dg.Norm(16, kind="rms")
        self.attn = dg.SelfAttention(16, 2, bias=False, rope=True, max_seq_len=6)

    def forward(self, h):
        return h + self.attn(self.norm(h))


STACKED = (6, 16)


def test_the_layers_of_repeated_blocks_pair_with_their_own_block():
    compiled = compile_model(Stack(), [STACKED])
    report = compiled.program.compare(compiled.frozen, *inputs([STACKED], 4, seed=5))
    blocks = [
        int(row.layer.split(".")[1]) for row in report.rows if row.layer.startswith("blocks.")
    ]
    assert blocks == sorted(blocks) and set(blocks) == {0, 1, 2}, blocks
    assert report.first_bad is None, dg.compare.verdict(report)
