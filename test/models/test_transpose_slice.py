"""End-to-end model tests of the torch.transpose and torch.slice rows (issue 4, tensor domains).

Both only move stored values on their input's grid (the quantizer shares
it), so the device copies integers and the program must match the frozen
model within one output step on every element (`harness.assert_matches_frozen`),
in practice exactly. The tensors are sequence-domain: [B, S, D] from a Linear,
and [B, H, S, D] after reshaping to heads, which the device keeps NHWC like
every rank-4 value.
"""

from __future__ import annotations

import pytest
import torch
from harness import Compiled, Lambda, check_model
from torch import nn

from dg.dialects import dghw, dgq

SEQUENCE = (5, 8)
"""One sample: 5 positions of 8 features."""


def assert_compiled_through(compiled: Compiled, dgq_op: type, dghw_op: type) -> None:
    """The row really went through its own ops (and was not, say, folded into a neighbour)."""
    assert any(isinstance(op, dgq_op) for op in compiled.program.stages["dgq"].walk())
    assert any(isinstance(op, dghw_op) for op in compiled.program.dghw.walk())


class LinearThen(nn.Module):
    """Linear(8 -> 8) over [B, S, 8], then `tail`, then (optionally) Linear(*`head`)."""

    def __init__(self, tail, head: tuple[int, int] | None = None):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.tail = tail
        self.head = nn.Linear(*head) if head else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.tail(self.fc(x))
        return y if self.head is None else self.head(y)


def heads(y: torch.Tensor) -> torch.Tensor:
    """[B, S, 8] -> [B, 2, S, 4], the usual split into attention heads."""
    return y.view(y.shape[0], y.shape[1], 2, 4).transpose(1, 2)


TRANSPOSE_CASES = {
    "feature_rank2": (lambda: LinearThen(Lambda(lambda y: y.transpose(1, 2))), SEQUENCE),
    "feature_rank2_negative_dims": (
        lambda: LinearThen(Lambda(lambda y: torch.transpose(y, -1, -2)), (5, 6)),
        SEQUENCE,
    ),
    "feature_rank3_to_heads": (lambda: LinearThen(Lambda(heads)), SEQUENCE),
    "feature_rank3_last_two": (
        lambda: LinearThen(Lambda(lambda y: heads(y).transpose(-2, -1))),
        SEQUENCE,
    ),
    "heads_and_back_into_linear": (
        lambda: LinearThen(
            Lambda(lambda y: heads(y).transpose(1, 2).reshape(y.shape[0], y.shape[1], 8)), (8, 6)
        ),
        SEQUENCE,
    ),
}


@pytest.mark.parametrize("case", TRANSPOSE_CASES)
def test_transpose(case: str) -> None:
    make, shape = TRANSPOSE_CASES[case]
    compiled = check_model("torch.transpose", case, make(), [shape])
    if case == "heads_and_back_into_linear":
        # The two transposes cancel on the device (FoldTransposeOfTranspose).
        assert not any(isinstance(op, dghw.TransposeOp) for op in compiled.program.dghw.walk())
    else:
        assert_compiled_through(compiled, dgq.TransposeOp, dghw.TransposeOp)


def test_transpose_qat() -> None:
    make, shape = TRANSPOSE_CASES["feature_rank3_last_two"]
    check_model("torch.transpose", "feature_rank3_last_two_qat", make(), [shape], mode="qat")


class PatchTokens(nn.Module):
    """A conv feature map read as a sequence of patches (ViT): [B, C, H, W] -> [B, H*W, C].

    The flatten makes the spatial map a sequence-domain tensor, so it may be
    sliced: here the first `tokens` patches, then a Linear over the channels.
    """

    def __init__(self, tokens: int = 5):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 2, stride=2)
        self.fc = nn.Linear(8, 4)
        self.tokens = tokens

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        sequence = self.conv(x).flatten(2).transpose(1, 2)
        return self.fc(sequence[:, : self.tokens])


SLICE_CASES = {
    "conv_patches_as_tokens": (PatchTokens, (3, 6, 6)),
    "positions_prefix": (lambda: LinearThen(Lambda(lambda y: y[:, :3])), SEQUENCE),
    "positions_negative_start": (lambda: LinearThen(Lambda(lambda y: y[:, -2:]), (8, 4)), SEQUENCE),
    "features_range_into_linear": (
        lambda: LinearThen(Lambda(lambda y: y[..., 2:6]), (4, 3)),
        SEQUENCE,
    ),
    "rope_halves_cat": (
        lambda: LinearThen(Lambda(lambda y: torch.cat((y[..., 4:], y[..., :4]), dim=-1))),
        SEQUENCE,
    ),
    "heads_last_axis": (lambda: LinearThen(Lambda(lambda y: heads(y)[..., 1:3])), SEQUENCE),
    "flat_features": (lambda: LinearThen(Lambda(lambda y: y[:, 1:7])), (8,)),
}


@pytest.mark.parametrize("case", SLICE_CASES)
def test_slice(case: str) -> None:
    make, shape = SLICE_CASES[case]
    compiled = check_model("torch.slice / __getitem__[:n]", case, make(), [shape])
    assert_compiled_through(compiled, dgq.SliceOp, dghw.SliceOp)


def test_slice_qat() -> None:
    make, shape = SLICE_CASES["features_range_into_linear"]
    check_model("torch.slice / __getitem__[:n]", "features_range_qat", make(), [shape], mode="qat")
