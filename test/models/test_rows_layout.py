"""End to end, per supported row of the layout family: flatten, reshape, dg.Flatten, torch.cat,
F.interpolate and Dropout, each within one output step of the frozen model."""

from __future__ import annotations

from functools import cache

import pytest
import torch
import torch.nn.functional as F
from harness import (
    Compiled,
    Lambda,
    assert_matches_frozen,
    calls_matching,
    check_model,
    compile_model,
)
from row_models import IMAGE, ConvThen
from torch import nn

import dg


class ConvReshapeLinear(nn.Module):
    """conv (C=3, H=4, W=6 after the stride) -> a shape op -> linear on the last axis."""

    def __init__(self, reshape, features: int):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, stride=(2, 1), padding=1)
        self.reshape = reshape
        self.fc = nn.Linear(features, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.reshape(self.conv(x)))


SHAPE_CASES = {
    "torch.flatten": ("torch.flatten", lambda y: torch.flatten(y, 1), 72),
    "nn.Flatten": ("torch.flatten", nn.Flatten(), 72),
    "view_size0": ("torch.reshape / view", lambda y: y.view(y.size(0), -1), 72),
    "view_minus1": ("torch.reshape / view", lambda y: y.view(-1, 72), 72),
    "reshape_BC_HW": ("torch.reshape / view", lambda y: y.reshape(y.shape[0], 3, 24), 24),
    "flatten_2_3": ("torch.flatten", lambda y: torch.flatten(y, 2), 24),
}


@pytest.mark.parametrize("case", SHAPE_CASES)
def test_flatten_reshape_feeding_linear(case: str) -> None:
    """CHW order on an NHWC device: H, W and C all differ, so any misorder shows."""
    row, reshape, features = SHAPE_CASES[case]
    module = reshape if isinstance(reshape, nn.Module) else Lambda(reshape)
    check_model(row, case, ConvReshapeLinear(module, features), [(2, 8, 6)])


def test_reshape_output() -> None:
    """A reshape as the model's last op: the device result comes back in torch's order."""
    model = ConvThen(Lambda(lambda y: y.reshape(y.shape[0], 8, 2, 16)))
    check_model("torch.reshape / view", "model_output", model, [IMAGE])


@pytest.mark.parametrize("then_linear", [True, False], ids=["then_linear", "model_output"])
def test_dg_flatten(then_linear: bool) -> None:
    model = ConvReshapeLinear(dg.Flatten(), 72)
    if not then_linear:
        model.fc = nn.Identity()
    case = "conv_then_linear" if then_linear else "model_output"
    check_model("dg.Flatten", case, model, [(2, 8, 6)])


class TwoBranchCat(nn.Module):
    def __init__(self, dim: int, with_input: bool = False):
        super().__init__()
        self.a = nn.Conv2d(3, 3, 3, padding=1)
        self.b = nn.Conv2d(3, 3, 1)
        self.dim = dim
        self.with_input = with_input

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        branches = [self.a(x), F.relu(self.b(x))]
        if self.with_input:
            branches.append(x)
        return torch.cat(branches, dim=self.dim)


class LinearCat(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.a = nn.Linear(12, 6)
        self.b = nn.Linear(12, 4 if dim == -1 else 6)
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat((self.a(x), self.b(x)), self.dim)


CAT_CASES = {
    "channels": (lambda: TwoBranchCat(1), IMAGE),
    "height": (lambda: TwoBranchCat(2), IMAGE),
    "width_negative_dim": (lambda: TwoBranchCat(-1), IMAGE),
    "three_with_graph_input": (lambda: TwoBranchCat(1, with_input=True), IMAGE),
    "linear_features": (lambda: LinearCat(-1), (12,)),
    "BSD_sequence": (lambda: LinearCat(1), (5, 12)),
}


@pytest.mark.parametrize("case", CAT_CASES)
def test_cat(case: str) -> None:
    make, shape = CAT_CASES[case]
    check_model("torch.cat", case, make(), [shape])


def test_cat_needs_compiler_0_15() -> None:
    compiled = compile_model(TwoBranchCat(1), [IMAGE])
    with pytest.raises(dg.ExportError) as info:
        dg.export(compiled.frozen, (torch.randn(2, *IMAGE),), target_version="0.14.0")
    assert "0.15.0" in str(info.value) and "0.14.0" in str(info.value)


INTERPOLATE_CASES = {
    "scale_2": dict(scale_factor=2),
    "size_3x7_down_and_up": dict(size=(3, 7)),
}


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("case", INTERPOLATE_CASES)
def test_interpolate(case: str, mode: str) -> None:
    options = INTERPOLATE_CASES[case]
    model = ConvThen(Lambda(lambda y: F.interpolate(y, mode=mode, **options)))
    check_model(f'F.interpolate(mode="{mode}")', case, model, [(3, 4, 4)])


class WithDropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.drop2d = nn.Dropout2d(0.5)
        self.fc = nn.Linear(4 * 4 * 4, 6)
        self.drop = nn.Dropout(0.5)
        self.out = nn.Linear(6, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.drop2d(F.relu(self.conv(x)))
        y = self.drop(F.relu(self.fc(torch.flatten(y, 1))))
        return self.out(F.dropout(y, 0.2, training=self.training))


def dropouts_in_train_mode(gm: torch.fx.GraphModule) -> list[torch.fx.Node]:
    training = []
    for node in calls_matching(gm, "dropout"):
        train = node.kwargs.get("train", node.args[2] if len(node.args) > 2 else False)
        if train is not False:
            training.append(node)
    return training


def test_dropout_eval_model() -> None:
    check_model("Dropout", "eval_ptq", WithDropout(), [IMAGE])


@cache
def dropout_qat() -> Compiled:
    """`WithDropout` prepared by prepare_qat, i.e. captured in train mode, dropout and all."""
    return compile_model(WithDropout(), [IMAGE], mode="qat")


def test_dropout_prepared_in_train_mode() -> None:
    compiled = dropout_qat()
    assert not dropouts_in_train_mode(compiled.frozen)
    assert_matches_frozen("Dropout", "prepared_in_train_mode_qat", compiled)


def test_dropout_exported_in_train_mode() -> None:
    """A user who forgot .eval() before dg.export still gets the inference program."""
    frozen = dropout_qat().frozen
    frozen.train()
    try:
        program = dg.export(frozen, (torch.randn(2, *IMAGE),))
    finally:
        frozen.eval()
    exported = Compiled(frozen, program, (IMAGE,))
    assert_matches_frozen("Dropout", "dg.export_in_train_mode", exported)
