"""End to end, per supported row of the weights family: nn.Conv2d (dense, depthwise, after F.pad),
nn.Linear and the BatchNorm folds. Each model is within one output step of the frozen model on
a batch the export never saw (harness.assert_matches_frozen)."""

from __future__ import annotations

from functools import cache

import pytest
import torch
import torch.nn.functional as F
from harness import (
    Compiled,
    assert_matches_frozen,
    calls_matching,
    check_model,
    compile_model,
)
from row_models import IMAGE
from torch import nn

CONV_CASES = {
    "k3x5_s2x1_p1x2": dict(kernel_size=(3, 5), stride=(2, 1), padding=(1, 2)),
    "k4_s3_p3": dict(kernel_size=4, stride=3, padding=3),
    "k1_s2_no_bias": dict(kernel_size=1, stride=2, bias=False),
    "k3_same": dict(kernel_size=3, padding="same"),
    # torch pads an even kernel's "same" asymmetrically: one more row/column at the end.
    "k4x2_same": dict(kernel_size=(4, 2), padding="same"),
    "k2_valid": dict(kernel_size=2, padding="valid"),
}


@pytest.mark.parametrize("case", CONV_CASES)
def test_dense_conv(case: str) -> None:
    model = nn.Sequential(nn.Conv2d(3, 5, **CONV_CASES[case]))
    check_model("nn.Conv2d dense", case, model, [(3, 9, 10)])


class Depthwise(nn.Module):
    def __init__(self, stride: int, relu: bool):
        super().__init__()
        self.expand = nn.Conv2d(3, 6, 1)
        self.depthwise = nn.Conv2d(6, 6, 3, stride=stride, padding=1, groups=6)
        self.relu = relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.depthwise(self.expand(x))
        return F.relu(y) if self.relu else y


@pytest.mark.parametrize("stride, relu", [(1, True), (2, False)])
def test_depthwise_conv(stride: int, relu: bool) -> None:
    check_model(
        "nn.Conv2d depthwise",
        f"s{stride}{'_relu' if relu else ''}",
        Depthwise(stride, relu),
        [IMAGE],
    )


class Mlp(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.fc1 = nn.Linear(features, 10)
        self.fc2 = nn.Linear(10, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.relu(self.fc1(x)))


@pytest.mark.parametrize("shape", [(12,), (5, 12), (2, 3, 12)], ids=["BD", "BSD", "BTSD"])
def test_linear(shape: tuple[int, ...]) -> None:
    check_model("nn.Linear", "x".join(map(str, shape)), Mlp(12), [shape])


class LinearCalledTwice(nn.Module):
    """One Linear applied twice (tied weights): each call has its own input scale."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 12)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(F.relu(self.fc(x)))


@pytest.mark.parametrize("mode", ["ptq", "qat"])
def test_linear_called_twice_quantizes_each_call(mode: str) -> None:
    """Each call's int32 bias is on its own input scale x the weight scale (one bias node
    for both calls quantized the bias for the first call only, and export failed)."""
    compiled = check_model(
        "nn.Linear", f"called_twice_{mode}", LinearCalledTwice(), [(12,)], mode=mode
    )
    assert compiled.program.mlir().count("dghw.fully_connected ") == 2


class PadThenConv(nn.Module):
    def __init__(self, pad, first: bool, conv_padding: int = 0):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 1)
        self.conv = nn.Conv2d(4 if not first else 3, 5, 3, padding=conv_padding)
        self.pad = pad
        self.first = first

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x if self.first else self.stem(x)
        return self.conv(F.pad(y, self.pad))


PAD_CONV_CASES = {
    "asymmetric": ((1, 2, 0, 1), False, 0),
    "plus_own_padding": ((1, 1, 2, 2), False, 1),
    "on_graph_input": ((1, 1, 1, 1), True, 0),
    "explicit_value_0": ((2, 0, 0, 2), False, 0),
}


@pytest.mark.parametrize("case", PAD_CONV_CASES)
def test_pad_before_conv(case: str) -> None:
    pad, first, conv_padding = PAD_CONV_CASES[case]
    check_model("F.pad (before Conv2d)", case, PadThenConv(pad, first, conv_padding), [IMAGE])


def randomize_batch_norm(bn: nn.modules.batchnorm._BatchNorm, seed: int) -> None:
    """Statistics and affine parameters far from the identity, one gamma negative."""
    generator = torch.Generator().manual_seed(seed)
    n = bn.num_features
    with torch.no_grad():
        bn.running_mean.copy_(torch.randn(n, generator=generator))
        bn.running_var.copy_(torch.rand(n, generator=generator) * 2 + 0.2)
        bn.weight.copy_(torch.rand(n, generator=generator) + 0.5)
        bn.weight[0] = -bn.weight[0]
        bn.bias.copy_(torch.randn(n, generator=generator))


class ConvBn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(4)
        randomize_batch_norm(self.bn1, 1)
        randomize_batch_norm(self.bn2, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))


class LinearBn(nn.Module):
    def __init__(self, relu: bool):
        super().__init__()
        self.fc1 = nn.Linear(12, 8)
        self.bn = nn.BatchNorm1d(8)
        self.fc2 = nn.Linear(8, 3)
        self.relu = relu
        randomize_batch_norm(self.bn, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.bn(self.fc1(x))
        return self.fc2(F.relu(y) if self.relu else y)


class BatchNormNet(nn.Module):
    """Both folds in one model: Conv -> BN (freeze folds it) and Linear -> BN (dg.export does)."""

    def __init__(self):
        super().__init__()
        self.convs = ConvBn()
        self.fc = LinearBn(relu=True)
        self.fc.fc1 = nn.Linear(4 * 8 * 8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.convs(x), 1))


@cache
def batch_norm_net_qat() -> Compiled:
    """QAT, where torchao's conv-bn folding alone takes many seconds: compiled once."""
    return compile_model(BatchNormNet(), [IMAGE], mode="qat")


def batch_norm_inputs(gm: torch.fx.GraphModule) -> list[str]:
    """The op each batch norm of `gm` normalizes the output of."""
    return [str(n.args[0].target) for n in calls_matching(gm, "batch_norm")]


def test_conv_batch_norm_folds_in_freeze_qat() -> None:
    compiled = batch_norm_net_qat()
    assert batch_norm_inputs(compiled.frozen) == ["aten.linear.default"], (
        "a conv's batch norm is left in the frozen graph"
    )
    assert_matches_frozen("BatchNorm (Conv -> BN)", "qat", compiled)


def test_conv_batch_norm_folds_in_prepare_ptq() -> None:
    compiled = compile_model(ConvBn(), [IMAGE])
    assert not calls_matching(compiled.frozen, "batch_norm"), "batch norm left in the frozen graph"
    assert_matches_frozen("BatchNorm (Conv -> BN)", "ptq", compiled)


def test_linear_batch_norm_folds_in_export_qat() -> None:
    compiled = batch_norm_net_qat()
    assert batch_norm_inputs(compiled.frozen) == ["aten.linear.default"], "nothing left to fold"
    assert "dgtorch.batch_norm" in compiled.program.mlir("dgtorch")
    assert "batch_norm" not in compiled.program.mlir("dgq"), "dg.export did not fold it"
    assert_matches_frozen("BatchNorm (Linear -> BN)", "qat", compiled)


@pytest.mark.parametrize("relu", [False, True], ids=["bn", "bn_relu"])
def test_linear_batch_norm_ptq(relu: bool) -> None:
    """PTQ: torchao folds it already in prepare_pt2e, or dg.export does; either way exactly."""
    compiled = compile_model(LinearBn(relu), [(12,)])
    if calls_matching(compiled.frozen, "batch_norm"):
        assert "batch_norm" not in compiled.program.mlir("dgq"), "dg.export did not fold it"
    assert_matches_frozen(
        "BatchNorm (Linear -> BN)", f"ptq_{'relu' if relu else 'plain'}", compiled
    )
