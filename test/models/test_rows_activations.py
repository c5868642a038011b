"""End to end, per supported row of the activations and sequence families on images: softmax and
sigmoid on the fixed grid, F.relu as a fusion tail, and the element-wise add, each within one
output step of the frozen model."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from harness import (
    Lambda,
    assert_matches_frozen,
    check_model,
    compile_model,
    output_qparams,
)
from row_models import IMAGE, ConvThen
from torch import nn

FIXED_GRID = (1 / 256, -128)


class LinearThen(nn.Module):
    def __init__(self, tail, features: int = 12, out: int = 6):
        super().__init__()
        self.fc = nn.Linear(features, out)
        self.tail = tail

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.tail(self.fc(x))


FIXED_GRID_CASES = {
    "torch.softmax_linear": (lambda: LinearThen(Lambda(lambda y: torch.softmax(y, -1))), (12,)),
    "F.softmax_BSD": (lambda: LinearThen(Lambda(lambda y: F.softmax(y, dim=-1))), (5, 12)),
    "F.softmax_channels": (lambda: ConvThen(Lambda(lambda y: F.softmax(y, dim=1))), IMAGE),
    "F.softmax_width": (lambda: ConvThen(Lambda(lambda y: F.softmax(y, dim=3))), IMAGE),
    "torch.sigmoid_conv": (lambda: ConvThen(Lambda(torch.sigmoid)), IMAGE),
}


FIXED_GRID_RUNS = [
    *((case, "ptq") for case in FIXED_GRID_CASES),
    ("F.softmax_BSD", "qat"),
    ("torch.sigmoid_conv", "qat"),
]
"""Every case with PTQ; QAT (fake quantizers, not observers) for one softmax and one sigmoid."""


@pytest.mark.parametrize("case, mode", FIXED_GRID_RUNS)
def test_softmax_sigmoid_on_the_fixed_grid(case: str, mode: str) -> None:
    make, shape = FIXED_GRID_CASES[case]
    row = "torch.softmax / F.softmax" if "softmax" in case else "torch.sigmoid"
    compiled = compile_model(make(), [shape], mode=mode)
    (scale, zero_point) = output_qparams(compiled.frozen)[0]
    assert (scale, zero_point) == pytest.approx(FIXED_GRID), "the quantizer must pin the grid"
    assert_matches_frozen(row, f"{case}_{mode}", compiled)


class Residual(nn.Module):
    def __init__(self, relu: bool):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 3, 3, padding=1)
        self.conv2 = nn.Conv2d(3, 3, 3, padding=1)
        self.relu = relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv1(x)
        z = self.conv2(y) + y
        return F.relu(z) if self.relu else z


RELU_CASES = {
    "after_conv": (lambda: ConvThen(nn.ReLU()), IMAGE),
    "after_linear": (lambda: LinearThen(Lambda(F.relu)), (12,)),
    "after_add": (lambda: Residual(relu=True), IMAGE),
}


@pytest.mark.parametrize("case", RELU_CASES)
def test_relu_tail(case: str) -> None:
    make, shape = RELU_CASES[case]
    check_model("F.relu (fusion tail)", case, make(), [shape])


class TwoInputAdd(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


class InputPlusConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x) + x


ADD_CASES = {
    "two_convs": (lambda: Residual(relu=False), [IMAGE]),
    "graph_input_plus_conv": (InputPlusConv, [IMAGE]),
    "two_graph_inputs": (TwoInputAdd, [(4, 6), (4, 6)]),
}


@pytest.mark.parametrize("case", ADD_CASES)
def test_elementwise_add(case: str) -> None:
    make, shapes = ADD_CASES[case]
    check_model("Element-wise +", case, make(), shapes)
