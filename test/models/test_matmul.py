"""End-to-end model tests of torch.matmul / bmm / mm of two activations, with the attention
score scale (`* s` or `/ sqrt(d)`) folded into the matmul's requantization.

The standard: the program is within one output step of the frozen model on every
element (`assert_matches_frozen`), and the scale leaves no op of its own on the device.
"""

from __future__ import annotations

import math

import pytest
import torch
from harness import assert_matches_frozen, calls_matching, compile_model
from torch import nn

ROW = "torch.matmul / torch.bmm / torch.mm"
SEQUENCE = (5, 8)


class Scores(nn.Module):
    """Attention scores q @ k^T of two Linear projections, optionally scaled."""

    def __init__(self, product, scale=None):
        super().__init__()
        self.q, self.k = nn.Linear(8, 8), nn.Linear(8, 8)
        self.product, self.scale = product, scale

    def forward(self, x):
        s = self.product(self.q(x), self.k(x).transpose(1, 2))
        return s if self.scale is None else self.scale(s)


class HeadsThenValues(nn.Module):
    """Attention at feature rank 3: [B, H, S, d] heads, scaled scores, softmax, times v,
    then an output Linear."""

    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 8)
        self.out = nn.Linear(8, 8)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = (f(x).view(b, s, 2, 4).transpose(1, 2) for f in (self.q, self.k, self.v))
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(4)
        mixed = torch.matmul(torch.softmax(scores, dim=-1), v)  # [B, 2, S, 4]
        return self.out(mixed.transpose(1, 2).reshape(b, s, 8))


CASES = {
    "matmul": lambda: Scores(torch.matmul),
    "matmul_times_scale": lambda: Scores(torch.matmul, lambda s: s * 0.35),
    "scale_times_matmul": lambda: Scores(torch.matmul, lambda s: 0.35 * s),
    "bmm_div_sqrt_d": lambda: Scores(torch.bmm, lambda s: s / math.sqrt(8)),
    "operator_at": lambda: Scores(lambda a, b: a @ b, lambda s: s * 0.125),
    "heads_then_values": HeadsThenValues,
}

RUNS = [*((case, "ptq") for case in CASES), ("heads_then_values", "qat")]


@pytest.mark.parametrize("case, mode", RUNS)
def test_matmul_of_activations(case: str, mode: str) -> None:
    compiled = compile_model(CASES[case](), [SEQUENCE], mode=mode)
    matmuls = [
        n for fragment in ("matmul", "bmm") for n in calls_matching(compiled.frozen, fragment)
    ]
    assert matmuls, "the frozen model must keep the matmul"
    text = compiled.program.mlir()
    assert text.count("dghw.matmul ") == len(matmuls)
    assert "dghw.mul " not in text, "the score scale must fold into the matmul's rescale"
    assert_matches_frozen(ROW, f"{case}_{mode}", compiled)


def test_scale_folds_into_the_requantization_multiplier() -> None:
    """`* 0.25` becomes the factor of `dgq.matmul`, not an op of its own."""
    compiled = compile_model(Scores(torch.matmul, lambda s: s * 0.25), [SEQUENCE])
    dgq_text = compiled.program.mlir("dgq")
    assert "dgq.matmul" in dgq_text and "factor = 2.500000e-01 : f64" in dgq_text
