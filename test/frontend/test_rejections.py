"""Every Not-Supported row, and every constraint of a supported row, is a `Problem` that names
the op as written and its ATen name, gives the spec's reason, the user's file:line, the module
path and a fix.

The checks run on the float model (`dg.check`, and `dg.prepare_*` before training), so these
tests need no quantization; `test_problems.py` covers the frozen-model path.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F
from graph_queries import line_of
from torch import nn

import dg
from dg.frontend import importer
from dg.frontend.errors import Problem
from dg.frontend.export import check
from dg.frontend.importer.activations import RELU6_FIX, RELU6_REASON, SMOOTH_ACTIVATION_FIX
from dg.frontend.ops import targets
from dg.lowering import registry
from dg.lowering.registry import OpRow

IMAGE = (2, 1, 8, 8)


def _only_problem(model: nn.Module, shape: tuple[int, ...] = IMAGE) -> Problem:
    problems = check(model, (torch.randn(shape),))
    assert len(problems) == 1, "\n".join(map(str, problems))
    return problems[0]


def _line(model: type[nn.Module], snippet: str) -> str:
    return f"{__file__}:{line_of(model.forward, snippet)}"


def _assert_problem(
    problem: Problem,
    op: str,
    reason: str,
    location: str,
    module_path: str = "",
    fix: str = "",
) -> None:
    assert problem.op == op
    assert reason in problem.reason
    assert problem.location == location
    assert problem.module_path == module_path
    assert problem.fix and fix in problem.fix
    # The message the user reads carries all of it.
    for part in (op, location, fix):
        assert part in str(problem)


class Conv(nn.Module):
    """A conv front end; subclasses add the op under test after it."""

    def __init__(self, channels: int = 4):
        super().__init__()
        self.conv = nn.Conv2d(1, channels, 3, padding=1)


# -- the Not Supported rows ---------------------------------------------------------


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


# -- constraints of supported rows -----------------------------------------------------


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
        import dg

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


# -- torch.transpose and torch.slice (issue 4: tensor domains) ---------------------------


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


# -- torch.mm (issue 4) ------------------------------------------------------------------


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


# -- RoPE's rotate_half (issue 4) --------------------------------------------------------


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
