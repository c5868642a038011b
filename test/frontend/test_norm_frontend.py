"""`dg.Norm` in the frontend: the module's float semantics, its body accepted as one op,
the same ops rejected outside it, and the problems of a misplaced norm (checked on the float
model with `dg.check`, and on a quantized one with `dg.export`)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from graph_queries import line_of
from torch import nn

import dg
from dg.frontend.export import check
from dg.lowering import registry

SEQUENCE = (2, 5, 16)


@pytest.mark.parametrize("kind", ["layer", "rms"])
def test_float_semantics_are_torchs_norms(kind: str) -> None:
    norm = dg.Norm(16, eps=1e-4, kind=kind)
    with torch.no_grad():
        norm.weight.uniform_(-2, 2)
        if norm.bias is not None:
            norm.bias.uniform_(-1, 1)
    x = torch.randn(3, 4, 16) * 5 + 2
    if kind == "layer":
        expected = F.layer_norm(x, (16,), norm.weight, norm.bias, 1e-4)
    else:
        expected = F.rms_norm(x, (16,), norm.weight, 1e-4)
    torch.testing.assert_close(norm(x), expected, rtol=1e-5, atol=1e-5)
    assert [name for name, _ in norm.named_parameters()] == (
        ["weight", "bias"] if kind == "layer" else ["weight"]
    )


def test_bad_arguments_are_value_errors() -> None:
    with pytest.raises(ValueError, match="dg.Norm: kind must be one of layer, rms, got 'batch'"):
        dg.Norm(8, kind="batch")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="dg.Norm: dim must be a positive int, got 0"):
        dg.Norm(0)
    with pytest.raises(ValueError, match="dg.Norm: eps must be positive, got 0.0"):
        dg.Norm(8, eps=0.0)


class NormBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.norm = dg.Norm(16)

    def forward(self, x):
        return self.norm(self.fc(x))


class NormThenBareScalar(nn.Module):
    """The norm's body multiplies by scalars and tensors; the `* 0.5` after it is the user's."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.norm = dg.Norm(16, kind="rms")

    def forward(self, x):
        return self.norm(self.fc(x)) * 0.5


class HandWrittenNorm(nn.Module):
    """The same ops as dg.Norm's body, outside it: each is its own problem."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        y = self.fc(x)
        return y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + 1e-5)


def test_the_body_of_a_norm_is_accepted() -> None:
    assert check(NormBlock(), (torch.randn(SEQUENCE),)) == []


def test_a_bare_scalar_mul_outside_the_norm_is_still_rejected() -> None:
    (problem,) = check(NormThenBareScalar(), (torch.randn(SEQUENCE),))
    assert problem.reason == registry.BARE_MUL.reason
    assert problem.location == f"{__file__}:{line_of(NormThenBareScalar.forward, '* 0.5')}"


def test_the_norms_ops_are_rejected_outside_it() -> None:
    problems = check(HandWrittenNorm(), (torch.randn(SEQUENCE),))
    line = f"{__file__}:{line_of(HandWrittenNorm.forward, 'torch.rsqrt')}"
    assert problems and all(p.location == line for p in problems)
    names = " ".join(p.op for p in problems)
    assert "aten.mean.dim" in names and "aten.rsqrt.default" in names


def test_a_hand_written_norm_names_each_op_and_points_to_dg_norm() -> None:
    """mean and rsqrt are named as written, with the row's reason and the dg.Norm fix."""
    problems = check(HandWrittenNorm(), (torch.randn(SEQUENCE),))
    by_op = {p.op: p for p in problems}
    for op in ("Tensor.mean (aten.mean.dim)", "torch.rsqrt (aten.rsqrt.default)"):
        assert by_op[op].reason == registry.NORM_BUILDING_BLOCKS.reason
        assert 'dg.Norm(d, kind="rms")' in (by_op[op].fix or "")


class TorchNorms(nn.Module):
    """torch's own normalizations and a subtraction, each on its own line."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.layer_norm = nn.LayerNorm(16)
        self.rms_norm = nn.RMSNorm(16)

    def forward(self, x):
        y = self.layer_norm(self.fc(x))
        z = self.rms_norm(y)
        return self.fc(z) - y


def test_torchs_normalizations_and_subtraction_are_problems_with_a_fix() -> None:
    problems = check(TorchNorms(), (torch.randn(SEQUENCE),))
    forward = TorchNorms.forward
    found = {(p.op, p.location) for p in problems}
    assert found == {
        ("nn.LayerNorm (aten.layer_norm.default)", f"{__file__}:{line_of(forward, 'layer_norm(')}"),
        ("nn.RMSNorm (aten.rms_norm.default)", f"{__file__}:{line_of(forward, 'rms_norm(')}"),
        ("- (aten.sub.Tensor)", f"{__file__}:{line_of(forward, ' - y')}"),
    }
    by_row = {p.op.split(" ")[0]: p for p in problems}
    assert by_row["nn.LayerNorm"].reason == registry.TORCH_NORMALIZATION.reason
    assert 'dg.Norm(d, eps=eps, kind="layer")' in (by_row["nn.LayerNorm"].fix or "")
    assert by_row["-"].reason == registry.SUBTRACTION.reason
    assert "negate the weight and bias" in (by_row["-"].fix or "")


class NormOfAFeatureMap(nn.Module):
    """A norm of an NCHW map normalizes its width: not what a layer norm of channels means."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.norm = dg.Norm(6)

    def forward(self, x):
        return self.norm(self.conv(x))


class NormOfHeads(nn.Module):
    """[B, H, S, d] heads: feature rank 3."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.norm = dg.Norm(4)

    def forward(self, x):
        return self.norm(self.fc(x).view(x.shape[0], 5, 4, 4))


def test_a_norm_of_a_spatial_feature_map_is_a_problem() -> None:
    (problem,) = check(NormOfAFeatureMap(), (torch.randn(2, 1, 6, 6),))
    assert problem.op == "dg.Norm"
    assert problem.module_path == "norm"
    assert problem.location == f"{__file__}:{line_of(NormOfAFeatureMap.forward, 'self.norm(')}"
    assert "sequence tensors only" in problem.reason and "spatial feature map" in problem.reason
    assert "its input [B, 4, 6, 6] is a spatial feature map" in problem.reason
    assert problem.fix and "dg.Flatten()" in problem.fix


def test_a_norm_of_a_spatial_feature_map_is_an_export_error_too() -> None:
    x = torch.randn(2, 1, 6, 6)
    with pytest.raises(dg.ExportError, match="dg.Norm: normalizes the last axis of sequence"):
        dg.prepare_ptq(NormOfAFeatureMap(), (x,))


def test_a_norm_at_feature_rank_3_is_a_problem() -> None:
    (problem,) = check(NormOfHeads(), (torch.randn(SEQUENCE),))
    assert problem.op == "dg.Norm"
    assert "normalizes the last axis of [B, D] or [B, S, D] tensors" in problem.reason
    assert problem.reason.endswith("and its input is [B, 5, 4, 4]")


def test_a_dim_that_is_not_the_last_axis_is_torchs_own_error() -> None:
    norm = dg.Norm(8)
    with pytest.raises(RuntimeError):
        norm(torch.randn(2, 5, 16))
