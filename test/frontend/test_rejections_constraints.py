"""The constraints of supported rows (conv groups, pool padding and ceil mode, pad values, resize
sizes, cat axes, add operands, batch norm folds, dg.Flatten, planned rows) are errors that say
which form is accepted."""

from __future__ import annotations

import dataclasses

import pytest
import torch
import torch.nn.functional as F
from rejection_cases import IMAGE, Conv, _assert_problem, _line, _only_problem
from torch import nn

import dg
from dg.frontend import importer
from dg.frontend.export import check
from dg.frontend.ops import targets
from dg.lowering import registry


class GroupedConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 8, 3, groups=2)

    def forward(self, x):
        return self.conv(x)


class DepthMultiplierConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 8, 3, groups=4)

    def forward(self, x):
        return self.conv(x)


@pytest.mark.parametrize(("model", "groups"), [(GroupedConv, 2), (DepthMultiplierConv, 4)])
def test_conv_groups_say_which_form_is_accepted(model, groups):
    problem = _only_problem(model(), (2, 4, 8, 8))
    _assert_problem(
        problem, f"nn.Conv2d(groups={groups}) (aten.conv2d.default)", registry.CONV2D.notes,
        _line(model, "self.conv"), "conv", "groups=in_channels=out_channels",
    )  # fmt: skip
    assert f"got groups={groups} with 4 input and 8 output channels" in problem.reason


class PaddedMaxPool(Conv):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.ReLU(), nn.MaxPool2d(3, 2, padding=1))

    def forward(self, x):
        return self.features(self.conv(x))


class PadBeforeMaxPool(Conv):
    def forward(self, x):
        return F.max_pool2d(F.pad(self.conv(x), (1, 1, 1, 1)), 2)


class CeilModeMaxPool(Conv):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(2, ceil_mode=True)

    def forward(self, x):
        return self.pool(self.conv(x))


def test_max_pool_padding():
    # nn.Sequential runs the pool: the user's line is the one calling the Sequential.
    _assert_problem(
        _only_problem(PaddedMaxPool()), "nn.MaxPool2d(padding=1) (aten.max_pool2d.default)",
        registry.MAX_POOL2D.notes, _line(PaddedMaxPool, "self.features"), "features.1", "padding=0",
    )  # fmt: skip


def test_max_pool_after_pad():
    _assert_problem(
        _only_problem(PadBeforeMaxPool()), "F.pad (aten.pad.default)", registry.MAX_POOL2D.notes,
        _line(PadBeforeMaxPool, "F.pad"), "", "remove the F.pad",
    )  # fmt: skip


def test_max_pool_ceil_mode_that_reads_past_the_edge():
    problem = _only_problem(CeilModeMaxPool(), (2, 1, 7, 7))
    _assert_problem(
        problem, "nn.MaxPool2d(ceil_mode=True) (aten.max_pool2d.default)",
        registry.MAX_POOL2D.notes, _line(CeilModeMaxPool, "self.pool"), "pool", "ceil_mode=False",
    )  # fmt: skip
    assert "7x7 input" in problem.reason and "output 4x4 instead of 3x3" in problem.reason


def test_max_pool_ceil_mode_without_overhang_is_fine():
    assert check(CeilModeMaxPool(), (torch.randn(IMAGE),)) == []


class PadWithValue(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)

    def forward(self, x):
        return self.conv(F.pad(x, (1, 1, 1, 1), value=1.0))


def test_pad_value_must_be_zero():
    problem = _only_problem(PadWithValue())
    _assert_problem(
        problem, "F.pad(value=1) (aten.pad.default)", "only zero padding",
        _line(PadWithValue, "F.pad"), "", "value=0",
    )  # fmt: skip


class AvgPoolVariants(Conv):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool2d(3, 2, padding=1, ceil_mode=True, divisor_override=5)
        self.plain = nn.AvgPool2d(2, count_include_pad=False)

    def forward(self, x):
        return self.plain(self.pool(F.pad(self.conv(x), (1, 0, 1, 0))))


def test_avg_pool_ceil_mode_and_divisor_override_are_supported():
    assert check(AvgPoolVariants(), (torch.randn(2, 1, 9, 9),)) == []


class AdaptivePool(Conv):
    def __init__(self):
        super().__init__()
        self.head = nn.AdaptiveAvgPool2d(3)

    def forward(self, x):
        return self.head(self.conv(x))


def test_adaptive_pool_that_does_not_divide_says_the_sizes():
    problem = _only_problem(AdaptivePool())
    _assert_problem(
        problem, "nn.AdaptiveAvgPool2d(output_size=3) (aten.adaptive_avg_pool2d.default)",
        "the input size 8x8 does not divide evenly by the output size 3x3",
        _line(AdaptivePool, "self.head"), "head", "output sizes that divide 8: 1, 2, 4, 8",
    )  # fmt: skip
    assert check(AdaptivePool(), (torch.randn(2, 1, 9, 9),)) == []


class Interpolate(Conv):
    def __init__(self, mode: str):
        super().__init__()
        self.mode = mode

    def forward(self, x):
        return F.interpolate(self.conv(x), scale_factor=2, mode=self.mode)


@pytest.mark.parametrize(
    ("mode", "aten"),
    [("bilinear", "aten.upsample_bilinear2d.vec"), ("bicubic", "aten.upsample_bicubic2d.vec")],
)
def test_interpolate_mode_is_named(mode, aten):
    _assert_problem(
        _only_problem(Interpolate(mode)), f"F.interpolate(mode='{mode}') ({aten})",
        registry.INTERPOLATE.notes, _line(Interpolate, "F.interpolate"), "", 'mode="nearest"',
    )  # fmt: skip
    assert f"got mode='{mode}'" in _only_problem(Interpolate(mode)).reason


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_interpolate_nearest_modes_are_supported(mode):
    assert check(Interpolate(mode), (torch.randn(IMAGE),)) == []


class ResizeTo(Conv):
    def __init__(self, size: int):
        super().__init__()
        self.size = size

    def forward(self, x):
        return F.interpolate(self.conv(x), size=(self.size, self.size), mode="nearest")


def test_resize_whose_torch_rounding_differs_from_the_device_is_refused():
    # torch picks 26 -> 22 sources in float32, off by one from floor(oy * 26 / 22).
    problem = _only_problem(ResizeTo(22), shape=(2, 1, 26, 26))
    assert "float32 rounding" in problem.reason
    assert problem.location == _line(ResizeTo, "F.interpolate")
    assert problem.fix and "whole-number factor" in problem.fix
    assert check(ResizeTo(13), (torch.randn(2, 1, 26, 26),)) == []


class CatOnBatch(Conv):
    def forward(self, x):
        y = self.conv(x)
        return torch.cat([y, y], dim=0)


def test_cat_on_the_batch_axis():
    _assert_problem(
        _only_problem(CatOnBatch()), "torch.cat(dim=0) (aten.cat.default)", registry.CAT.notes,
        _line(CatOnBatch, "torch.cat"), "", "dim=1",
    )  # fmt: skip


class AddConstant(Conv):
    def forward(self, x):
        return self.conv(x) + 1.0


class AddParameter(Conv):
    def __init__(self):
        super().__init__()
        self.offset = nn.Parameter(torch.zeros(4, 8, 8))

    def forward(self, x):
        return self.conv(x) + self.offset


@pytest.mark.parametrize(
    ("model", "operand"),
    [(AddConstant, "the constant 1.0"), (AddParameter, "the parameter/constant 'offset'")],
)
def test_add_needs_two_activations(model, operand):
    problem = _only_problem(model())
    _assert_problem(
        problem, "+ (aten.add.Tensor)", registry.ADD.notes, _line(model, " + "), "", "bias"
    )
    assert f"the second operand is {operand}" in problem.reason


class BatchNormAfterPool(Conv):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(2)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        return self.bn(self.pool(self.conv(x)))


def test_batch_norm_after_anything_but_conv_or_linear():
    problem = _only_problem(BatchNormAfterPool())
    _assert_problem(
        problem, "nn.BatchNorm2d (aten.batch_norm.default)", registry.BATCH_NORM.notes,
        _line(BatchNormAfterPool, "self.bn"), "bn", registry.BATCH_NORM.fix,
    )  # fmt: skip
    assert "follows nn.MaxPool2d (aten.max_pool2d.default) 'pool'" in problem.reason


class SharedLinearOutput(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.bn = nn.BatchNorm1d(8)

    def forward(self, x):
        y = self.fc(x)
        return self.bn(y) + y


def test_linear_batch_norm_with_other_users_names_the_linear():
    problem = _only_problem(SharedLinearOutput(), (2, 8))
    linear = f"nn.Linear (aten.linear.default) 'fc' at {_line(SharedLinearOutput, 'self.fc')}"
    _assert_problem(
        problem, "nn.BatchNorm1d (aten.batch_norm.default)", "requires the linear have exactly "
        "one user", _line(SharedLinearOutput, "self.bn"), "bn", linear,
    )  # fmt: skip
    assert f"the {linear} it follows has 2 users" in problem.reason


class LinearBatchNormRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.bn = nn.BatchNorm1d(8)

    def forward(self, x):
        return F.relu(self.bn(self.fc(x)))


def test_linear_batch_norm_relu_is_fine():
    assert check(LinearBatchNormRelu(), (torch.randn(2, 8),)) == []


class ChannelsLastFlatten(Conv):
    def __init__(self):
        super().__init__()

        self.flatten = dg.Flatten()
        self.fc = nn.Linear(4 * 8 * 8, 2)

    def forward(self, x):
        return self.fc(self.flatten(self.conv(x)))


def test_dg_flatten_is_the_one_accepted_permute():
    assert check(ChannelsLastFlatten(), (torch.randn(IMAGE),)) == []


class UnknownOp(Conv):
    def forward(self, x):
        return torch.abs(self.conv(x))


def test_unknown_aten_op_is_named():
    problem = _only_problem(UnknownOp())
    assert problem.op == "torch.abs (aten.abs.default)"
    assert "not an op dg knows" in problem.reason
    assert problem.location == _line(UnknownOp, "torch.abs")


class MatMul(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        return torch.matmul(y, y.transpose(1, 2))


def test_planned_rows_are_rejected_until_implemented(monkeypatch):
    # Every row of the spec may be implemented by now: plan matmul again, without its handler.
    planned = dataclasses.replace(registry.MATMUL, status=registry.Status.PLANNED)
    rows = tuple(planned if row is registry.MATMUL else row for row in registry.ROWS)
    monkeypatch.setattr(registry, "ROWS", rows)
    for target in targets(registry.MATMUL):
        if target in importer.HANDLERS:
            monkeypatch.delitem(importer.HANDLERS, target)
    problem = _only_problem(MatMul(), (2, 4, 8))
    assert problem.op.startswith("torch.matmul (aten.")
    assert "does not implement yet" in problem.reason and "torch.matmul" in problem.reason
