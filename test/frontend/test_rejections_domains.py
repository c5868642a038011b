"""torch.transpose and torch.slice on the axes their tensor domain allows, and where problems are
located (string padding, a helper method's line)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from graph_queries import line_of
from rejection_cases import IMAGE, Conv, _assert_problem, _line, _only_problem
from torch import nn

import dg
from dg.frontend.export import check
from dg.lowering import registry


class SequenceThen(nn.Module):
    """A Linear over [B, S, D] (a sequence-domain tensor); subclasses add the op under test."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)


class TransposeBatch(SequenceThen):
    def forward(self, x):
        return self.fc(x).transpose(0, 1)


class TransposeFeatureRank4(SequenceThen):
    def forward(self, x):
        return torch.transpose(self.fc(x).view(-1, 2, 2, 4, 2), 2, 3)


class SliceBatch(SequenceThen):
    def forward(self, x):
        return self.fc(x)[:1]


class SliceStep(SequenceThen):
    def forward(self, x):
        return self.fc(x)[:, ::2]


class SliceHalvesWithStep(SequenceThen):
    """Two subscripts on one line: the problem names the one with the step."""

    def forward(self, x):
        y = self.fc(x)
        return torch.cat((y[..., 4:], y[..., ::2]), dim=-1)


class SliceSpatial(Conv):
    def forward(self, x):
        return self.conv(x)[:, :2]


class SliceSpatialRows(Conv):
    def forward(self, x):
        return self.conv(x)[:, :, 1:5]


SEQUENCE = (2, 4, 8)


DOMAIN_CASES = {
    "transpose of the batch axis": (
        TransposeBatch, "transpose", "Tensor.transpose(0, 1) (aten.transpose.int)",
        "cannot move the batch axis", "x.transpose(-2, -1)", SEQUENCE,
    ),
    "transpose at feature rank 4": (
        TransposeFeatureRank4, "torch.transpose", "torch.transpose(2, 3) (aten.transpose.int)",
        "feature rank 2-3 only (rank without the batch axis), and this input has feature rank 4",
        "at most three feature axes", SEQUENCE,
    ),
    "slice of the batch axis": (
        SliceBatch, "[:1]", "self.fc(x)[:1] (aten.slice.Tensor(dim=0, start=0, end=1, step=1))",
        "cannot slice the batch axis", "along a feature axis", SEQUENCE,
    ),
    "slice with step 2": (
        SliceStep, "[:, ::2]",
        "self.fc(x)[:, ::2] (aten.slice.Tensor(dim=1, start=0, end=None, step=2))",
        "has step 2", "use step 1", SEQUENCE,
    ),
    "slice with step 2 after an ellipsis": (
        SliceHalvesWithStep, "torch.cat",
        "y[..., ::2] (aten.slice.Tensor(dim=2, start=0, end=None, step=2))",
        "has step 2", "use step 1", SEQUENCE,
    ),
    "slice of a spatial map's channels": (
        SliceSpatial, "[:, :2]",
        "self.conv(x)[:, :2] (aten.slice.Tensor(dim=1, start=0, end=2, step=1))",
        "slices a spatial feature map", "flatten the map first", IMAGE,
    ),
    "slice of a spatial map's rows": (
        SliceSpatialRows, "[:, :, 1:5]",
        "self.conv(x)[:, :, 1:5] (aten.slice.Tensor(dim=2, start=1, end=5, step=1))",
        "slices a spatial feature map", "slice sequence-domain tensors only", IMAGE,
    ),
}  # fmt: skip
"""Case -> (model, snippet on its line, op as reported, reason part, fix part, input shape)."""


@pytest.mark.parametrize("case", DOMAIN_CASES)
def test_transpose_and_slice_constraints(case):
    model, snippet, op, reason, fix, shape = DOMAIN_CASES[case]
    problem = _only_problem(model(), shape)
    row = registry.TRANSPOSE if "transpose" in case else registry.SLICE
    _assert_problem(problem, op, reason, _line(model, snippet), fix=fix)
    assert row.notes in problem.reason, "the message quotes the spec's rule"


class StringPadding(nn.Module):
    def __init__(self, kernel: int, padding: str):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, kernel, padding=padding)

    def forward(self, x):
        return self.conv(x)


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")
@pytest.mark.parametrize(("kernel", "padding"), [(3, "same"), (2, "same"), (2, "valid")])
def test_conv_string_padding(kernel, padding):
    assert check(StringPadding(kernel, padding), (torch.randn(IMAGE),)) == []


class HelperMethod(Conv):
    """Like torchvision's ResNet: `forward` calls a helper that holds the layers."""

    def forward(self, x):
        return self._forward_impl(x)

    def _forward_impl(self, x):
        return F.gelu(self.conv(x))


def test_location_is_the_line_in_the_helper_not_in_forward():
    problem = _only_problem(HelperMethod())
    assert problem.location == f"{__file__}:{line_of(HelperMethod._forward_impl, 'F.gelu')}"


class MmByWeight(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(8, 4))

    def forward(self, x):
        return torch.mm(x, self.weight)


class MmMethod(MmByWeight):
    def forward(self, x):
        return x.mm(self.weight)


@pytest.mark.parametrize("model, written", [(MmByWeight, "torch.mm"), (MmMethod, "Tensor.mm")])
def test_mm_is_rejected_with_the_constraint_and_the_replacement(model, written):
    problems = check(model(), (torch.randn(2, 8),))
    (problem,) = [p for p in problems if "aten.mm" in p.op]
    _assert_problem(
        problem, f"{written} (aten.mm.default)", registry.MM_REASON, _line(model, ".mm("),
        fix=registry.MM_FIX,
    )  # fmt: skip
    assert "feature rank 1" in problem.reason and "mixes the samples of a batch" in problem.reason
    assert "nn.Linear" in problem.fix and "torch.matmul" in problem.fix


class ClassicRotateHalf(SequenceThen):
    """RoPE as usually written: rotate_half negates the second half."""

    def __init__(self):
        super().__init__()
        self.register_buffer("cos", torch.rand(4, 8))
        self.register_buffer("sin", torch.rand(4, 8))

    def forward(self, x):
        y = self.fc(x)
        x1, x2 = y[..., :4], y[..., 4:]
        return y * self.cos + torch.cat((-x2, x1), dim=-1) * self.sin


def test_rotate_half_negation_says_to_fold_the_sign_into_the_sin_table():
    problem = _only_problem(ClassicRotateHalf(), SEQUENCE)
    _assert_problem(
        problem, "- (aten.neg.default)", "the device has no negation op",
        _line(ClassicRotateHalf, "torch.cat((-x2, x1)"),
        fix="fold the sign into the constant sin table",
    )  # fmt: skip
    assert "torch.cat((x2, x1), dim=-1) * sin_signed" in problem.fix
    assert "sin_signed = torch.cat((-sin_half, sin_half), dim=-1)" in problem.fix
    assert "dg.RotaryEmbedding" in problem.fix
    # The suggested formulation (dg.RotaryEmbedding's) is accepted.
    rope = dg.RotaryEmbedding(8, max_seq_len=4)
    assert check(rope, (torch.randn(2, 4, 8),)) == []
