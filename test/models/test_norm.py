"""End-to-end model tests of `dg.Norm` (layer norm and RMS norm over the last axis).

The standard: the program is within one output step of the frozen model on every
element (`assert_matches_frozen`); the norm is one `dghw.norm` on the device, its
weight and bias folded into that op's integer multiplier and bias.
"""

from __future__ import annotations

import inspect

import pytest
import torch
from harness import QUANTIZE_PER_TENSOR, assert_matches_frozen, compile_model
from torch import nn

import dg
from dg.dialects import dgtorch
from dg.frontend.modules import norm_path

ROW = "dg.Norm(dim, eps, kind)"
SEQUENCE = (5, 16)


def learned(norm: dg.Norm) -> dg.Norm:
    """A norm whose weight and bias are not the identity they start as (as after training)."""
    with torch.no_grad():
        norm.weight.uniform_(-1.5, 1.5)
        if norm.bias is not None:
            norm.bias.uniform_(-0.5, 0.5)
    return norm


class LinearNormLinear(nn.Module):
    """Returns the norm's own output too, so its LSB difference is measured directly."""

    def __init__(self, kind: str):
        super().__init__()
        self.up = nn.Linear(16, 32)
        self.norm = learned(dg.Norm(32, kind=kind))
        self.down = nn.Linear(32, 8)

    def forward(self, x):
        normalized = self.norm(self.up(x))
        return normalized, self.down(normalized)


class PreNormBlock(nn.Module):
    """A pre-norm residual block: x + Linear(Norm(x))."""

    def __init__(self, kind: str):
        super().__init__()
        self.norm = learned(dg.Norm(16, kind=kind))
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        return x + self.fc(self.norm(x))


class FeatureVectorNorm(nn.Module):
    """A [B, D] input (feature rank 1), with an eps far above the variance of some rows."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 12)
        self.norm = learned(dg.Norm(12, eps=0.5, kind="layer"))

    def forward(self, x):
        return self.norm(self.fc(x.flatten(1)))


RUNS = [
    ("linear_norm_linear", "layer", "ptq"),
    ("linear_norm_linear", "rms", "ptq"),
    ("linear_norm_linear", "layer", "qat"),
    ("linear_norm_linear", "rms", "qat"),
    ("pre_norm_block", "layer", "qat"),
]
MODELS = {"linear_norm_linear": LinearNormLinear, "pre_norm_block": PreNormBlock}


@pytest.mark.parametrize("case, kind, mode", RUNS)
def test_norm(case: str, kind: str, mode: str) -> None:
    compiled = compile_model(MODELS[case](kind), [SEQUENCE], mode=mode)
    text = compiled.program.mlir()
    assert text.count("dghw.norm ") == 1 and f'kind = "{kind}"' in text
    assert_matches_frozen(ROW, f"{case}_{kind}_{mode}", compiled)


def test_norm_of_a_feature_vector_with_a_large_eps() -> None:
    compiled = compile_model(FeatureVectorNorm(), [(4, 4)])
    assert_matches_frozen(ROW, "feature_vector_large_eps_layer_ptq", compiled)
    (norm,) = [op for op in compiled.program.stages["dgtorch"].walk() if op.name == "dgtorch.norm"]
    assert isinstance(norm, dgtorch.NormOp)
    # One op at the user's line, `return self.norm(self.fc(x.flatten(1)))`.
    line = inspect.getsourcelines(FeatureVectorNorm.forward)[1] + 1
    assert f'"{__file__}":{line}:0' in str(norm.location)
    text = compiled.program.mlir("dgtorch")
    assert "dgtorch.mul" not in text and "dgtorch.add" not in text
    # The frozen model quantizes the norm's output and nothing inside the norm: its weight
    # and bias stay float, read by the body's ops as they are.
    body = {n for n in compiled.frozen.graph.nodes if norm_path(n) is not None}
    quantized = [n.args[0] for n in compiled.frozen.graph.nodes if n.target in QUANTIZE_PER_TENSOR]
    assert [n for n in quantized if n in body] == [max(body, key=order(compiled.frozen))]
    parameters = {a for n in body for a in n.all_input_nodes if a.op == "get_attr"}
    assert {str(p.target) for p in parameters} == {"norm.weight", "norm.bias"}


def order(gm):
    positions = {n: i for i, n in enumerate(gm.graph.nodes)}
    return positions.__getitem__
