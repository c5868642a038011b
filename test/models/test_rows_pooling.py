"""End to end, per supported row of the pooling family: nn.AvgPool2d (with F.pad folded in),
nn.MaxPool2d and adaptive average pooling, each within one output step of the frozen model."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from harness import (
    Lambda,
    assert_matches_frozen,
    check_model,
    compile_model,
)
from row_models import IMAGE, ConvThen
from torch import nn

import dg

AVG_POOL_CASES = {
    "k2": (None, dict(kernel_size=2)),
    "k3_s2_p1_include_pad": (None, dict(kernel_size=3, stride=2, padding=1)),
    "k3_s2_p1_exclude_pad": (
        None,
        dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    ),
    "fpad_fold_include_pad": ((1, 1, 1, 1), dict(kernel_size=3, stride=1)),
    # The F.pad zeros are real input to torch: they count even with count_include_pad=False.
    "fpad_fold_exclude_pad": ((1, 2, 0, 1), dict(kernel_size=3, stride=2, count_include_pad=False)),
    "ceil_mode_overhang": (None, dict(kernel_size=3, stride=2, ceil_mode=True)),
    "ceil_mode_p1_include_pad": (None, dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    "ceil_mode_p1_exclude_pad": (
        None,
        dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    ),
    "divisor_override": (None, dict(kernel_size=2, divisor_override=3)),
    "divisor_override_p1": (None, dict(kernel_size=3, stride=2, padding=1, divisor_override=5)),
}


class PadThenPool(nn.Module):
    def __init__(self, pad, pool: nn.Module):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.pad = pad
        self.pool = pool

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        if self.pad is not None:
            y = F.pad(y, self.pad)
        return self.pool(y)


@pytest.mark.parametrize("case", AVG_POOL_CASES)
def test_avg_pool2d(case: str) -> None:
    pad, options = AVG_POOL_CASES[case]
    check_model("nn.AvgPool2d", case, PadThenPool(pad, nn.AvgPool2d(**options)), [IMAGE])


def test_avg_pool2d_fpad_and_own_padding_excluded() -> None:
    """F.pad zeros count, the pool's own padding does not: compile exactly or refuse clearly."""
    pool = nn.AvgPool2d(2, stride=2, padding=1, count_include_pad=False)
    model = PadThenPool((1, 0, 1, 0), pool)
    try:
        compiled = compile_model(model, [IMAGE])
    except dg.ExportError as error:
        assert any("avg_pool" in p.op or "AvgPool2d" in p.op for p in error.problems), error
        return
    assert_matches_frozen("nn.AvgPool2d", "fpad_and_own_padding_exclude_pad", compiled)


MAX_POOL_CASES = {
    "k3_s2": ((3, 9, 9), dict(kernel_size=3, stride=2)),
    "k2x3_s1x2": (IMAGE, dict(kernel_size=(2, 3), stride=(1, 2))),
    # ceil_mode that never reads past the edge is no padding: 7 = 2 * 2 + 3.
    "ceil_mode_exact": ((3, 7, 7), dict(kernel_size=3, stride=2, ceil_mode=True)),
}


@pytest.mark.parametrize("case", MAX_POOL_CASES)
def test_max_pool2d(case: str) -> None:
    shape, options = MAX_POOL_CASES[case]
    check_model("nn.MaxPool2d", case, ConvThen(nn.MaxPool2d(**options)), [shape])


ADAPTIVE_CASES = {
    "nn_1x1": (nn.AdaptiveAvgPool2d((1, 1)), (3, 4, 4)),
    "nn_2x4_of_8x8": (nn.AdaptiveAvgPool2d((2, 4)), IMAGE),
    "F_int_4_of_8x8": (Lambda(lambda y: F.adaptive_avg_pool2d(y, 4)), IMAGE),
    "F_identity_size": (Lambda(lambda y: F.adaptive_avg_pool2d(y, (8, 8))), IMAGE),
}


@pytest.mark.parametrize("case", ADAPTIVE_CASES)
def test_adaptive_avg_pool2d_divisible(case: str) -> None:
    pool, shape = ADAPTIVE_CASES[case]
    check_model("AdaptiveAvgPool2d (divisible)", case, ConvThen(pool), [shape])


class ResNetHead(nn.Module):
    """The head of a ResNet: global average pool, flatten, fc."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.avgpool(F.relu(self.conv(x)))
        return self.fc(torch.flatten(x, 1))


def test_adaptive_avg_pool2d_resnet_head() -> None:
    check_model("AdaptiveAvgPool2d (divisible)", "resnet_head", ResNetHead(), [IMAGE])
