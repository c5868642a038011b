"""Every Not Supported row of the spec is a clear error at export, with its reason and a fix that
fits what the user wrote (other activations, fused attention, dilation)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F
from rejection_cases import IMAGE, Conv, _assert_problem, _line, _only_problem
from torch import nn

import dg
from dg.frontend.errors import Problem
from dg.frontend.export import check
from dg.frontend.importer.activations import RELU6_FIX, RELU6_REASON, SMOOTH_ACTIVATION_FIX
from dg.lowering import registry
from dg.lowering.registry import OpRow


class Permute(Conv):
    def forward(self, x):
        return self.conv(x).permute(0, 2, 3, 1)


class StandalonePad(Conv):
    def forward(self, x):
        return F.pad(self.conv(x), (1, 1, 1, 1))


class Expand(Conv):
    def __init__(self):
        super().__init__(channels=1)

    def forward(self, x):
        return self.conv(x).expand(-1, 4, -1, -1)


class Repeat(Conv):
    def forward(self, x):
        return self.conv(x).repeat(1, 2, 1, 1)


class BareMul(Conv):
    def forward(self, x):
        return torch.mul(self.conv(x), 0.5)


class StandaloneRelu(Conv):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        return F.relu(self.pool(self.conv(x)))


class ConvTranspose(Conv):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 4, 2, stride=2)

    def forward(self, x):
        return self.up(self.conv(x))


class ScaledDotProductAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 8)

    def forward(self, x):
        return F.scaled_dot_product_attention(self.q(x), self.k(x), self.v(x))


class MultiheadAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x):
        return self.attn(x, x, x, need_weights=False)[0]


class DilatedConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=2, dilation=2))

    def forward(self, x):
        return self.features(x)


@dataclass(frozen=True)
class Case:
    """A model using a rejected op at `snippet`, and what its problem must say."""

    model: type[nn.Module]
    snippet: str
    op: str
    row: OpRow
    module_path: str = ""
    shape: tuple[int, ...] = IMAGE


NOT_SUPPORTED_CASES = {
    "permute": Case(
        Permute, "permute", "Tensor.permute(0, 2, 3, 1) (aten.permute.default)", registry.PERMUTE
    ),
    "standalone pad": Case(
        StandalonePad, "F.pad", "F.pad (aten.pad.default)", registry.STANDALONE_PAD
    ),
    "expand": Case(Expand, "expand", "Tensor.expand (aten.expand.default)", registry.EXPAND),
    "repeat": Case(Repeat, "repeat", "Tensor.repeat (aten.repeat.default)", registry.REPEAT),
    "bare mul": Case(BareMul, "torch.mul", "torch.mul (aten.mul.Tensor)", registry.BARE_MUL),
    "standalone relu": Case(
        StandaloneRelu, "F.relu", "F.relu (aten.relu.default)", registry.STANDALONE_RELU
    ),
    "conv transpose": Case(
        ConvTranspose, "self.up", "nn.ConvTranspose2d (aten.conv_transpose2d.input)",
        registry.CONV_TRANSPOSE2D, "up",
    ),
    "sdpa": Case(
        ScaledDotProductAttention, "F.scaled_dot_product_attention",
        "F.scaled_dot_product_attention (aten.scaled_dot_product_attention.default)",
        registry.FUSED_ATTENTION, shape=(2, 4, 8),
    ),
    "multihead attention": Case(
        MultiheadAttention, "self.attn", "nn.MultiheadAttention", registry.FUSED_ATTENTION,
        "attn", shape=(2, 4, 8),
    ),
    "dilated conv": Case(
        DilatedConv, "self.features", "nn.Conv2d(dilation=2) (aten.conv2d.default)",
        registry.DILATED_CONV2D, "features.0",
    ),
}  # fmt: skip


def test_every_not_supported_row_has_a_case():
    rows = {case.row.op for case in NOT_SUPPORTED_CASES.values()} | {"Other activations"}
    assert rows == {
        row.op for row in registry.ROWS if row.section is registry.Section.NOT_SUPPORTED
    }


@pytest.mark.parametrize("case", NOT_SUPPORTED_CASES.values(), ids=NOT_SUPPORTED_CASES.keys())
def test_not_supported_row(case: Case):
    problem = _only_problem(case.model(), case.shape)
    location = _line(case.model, case.snippet)
    _assert_problem(problem, case.op, case.row.reason, location, case.module_path, case.row.fix)


class SelfAttentionInstead(nn.Module):
    """`MultiheadAttention` and `ScaledDotProductAttention` as the fix says to write them."""

    def __init__(self):
        super().__init__()
        self.attn = dg.SelfAttention(8, 2)

    def forward(self, x):
        return self.attn(x)


@pytest.mark.parametrize("model", [ScaledDotProductAttention, MultiheadAttention])
def test_fused_attention_fix_names_a_replacement_that_compiles(model):
    problem = _only_problem(model(), (2, 4, 8))
    assert problem.fix is not None
    assert "dg.SelfAttention(embed_dim, num_heads)" in problem.fix
    assert "dg.SelfAttention" in problem.reason
    assert check(SelfAttentionInstead(), (torch.randn(2, 4, 8),)) == []


def test_dilation_is_caught_at_export_unlike_the_reference():
    problem = _only_problem(DilatedConv())
    assert problem.reason.startswith("Dilation (dilation != 1) is not supported")
    assert "rejects it at export" in problem.reason


class Activations(Conv):
    def __init__(self):
        super().__init__()
        self.relu6 = nn.ReLU6()
        self.gelu = nn.GELU()

    def forward(self, x):
        y = self.conv(x)
        return (
            F.gelu(y),
            torch.tanh(y),
            F.silu(y),
            F.hardswish(y),
            F.leaky_relu(y),
            F.relu6(y),
            F.hardtanh(y),
            F.elu(y),
            F.mish(y),
            F.hardsigmoid(y),
            F.softplus(y),
            self.relu6(y),
            self.gelu(y),
        )


ACTIVATIONS = {
    "F.gelu": ("aten.gelu.default", "F.gelu(y)", ""),
    "torch.tanh": ("aten.tanh.default", "torch.tanh(y)", ""),
    "F.silu": ("aten.silu.default", "F.silu(y)", ""),
    "F.hardswish": ("aten.hardswish.default", "F.hardswish(y)", ""),
    "F.leaky_relu": ("aten.leaky_relu.default", "F.leaky_relu(y)", ""),
    "F.relu6": ("aten.relu6.default", "F.relu6(y)", ""),
    "F.hardtanh": ("aten.hardtanh.default", "F.hardtanh(y)", ""),
    "F.elu": ("aten.elu.default", "F.elu(y)", ""),
    "F.mish": ("aten.mish.default", "F.mish(y)", ""),
    "F.hardsigmoid": ("aten.hardsigmoid.default", "F.hardsigmoid(y)", ""),
    "F.softplus": ("aten.softplus.default", "F.softplus(y)", ""),
    "nn.ReLU6": ("aten.hardtanh.default", "self.relu6(y)", "relu6"),
    "nn.GELU": ("aten.gelu.default", "self.gelu(y)", "gelu"),
}
"""Activation as written -> (its ATen op, its line in `Activations.forward`, module path)."""


@pytest.fixture(scope="module")
def activation_problems() -> list[Problem]:
    return check(Activations(), (torch.randn(IMAGE),))


def test_every_other_activation_is_reported_at_once(activation_problems):
    assert [p.op for p in activation_problems] == [
        f"{written} ({aten})" for written, (aten, _, _) in ACTIVATIONS.items()
    ]


@pytest.mark.parametrize("written", ACTIVATIONS)
def test_other_activation(written, activation_problems):
    aten, snippet, module_path = ACTIVATIONS[written]
    op = f"{written} ({aten})"
    (problem,) = [p for p in activation_problems if p.op == op and snippet in _source(p)]
    row = registry.OTHER_ACTIVATIONS
    location = _line(Activations, snippet)
    reason, fix = FITTING_FIXES.get(written, (row.reason, row.fix))
    _assert_problem(problem, op, reason, location, module_path, fix)
    if written not in FITTING_FIXES:
        assert all(name in problem.fix for name in ("relu", "sigmoid", "softmax"))
    assert "fusion tail" in problem.fix or written in ("F.relu6", "nn.ReLU6")


FITTING_FIXES = {
    "F.relu6": (RELU6_REASON, RELU6_FIX),
    "nn.ReLU6": (RELU6_REASON, RELU6_FIX),
    **{
        written: (registry.OTHER_ACTIVATIONS.reason, SMOOTH_ACTIVATION_FIX)
        for written in ("F.gelu", "nn.GELU", "F.silu", "F.hardswish")
    },
}
"""Activations with a fix of their own: ReLU6 is nn.ReLU, a smooth one a ReLU fusion tail."""


def test_fitting_fixes_name_relu():
    assert "nn.ReLU" in RELU6_FIX and "retrain" in RELU6_FIX and "recalibrate" in RELU6_FIX
    assert "nn.ReLU" in SMOOTH_ACTIVATION_FIX and "fusion tail" in SMOOTH_ACTIVATION_FIX


def test_hardtanh_clipping_at_0_and_6_is_relu6():
    class Clip(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3)

        def forward(self, x):
            return F.hardtanh(self.conv(x), 0.0, 6.0)

    (problem,) = check(Clip(), (torch.randn(IMAGE),))
    assert problem.reason == RELU6_REASON and problem.fix == RELU6_FIX


def _source(problem: Problem) -> str:
    """The line of code a problem points at."""
    file, line = problem.location.rsplit(":", 1)
    with open(file) as source:
        return source.read().splitlines()[int(line) - 1]
