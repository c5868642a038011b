"""ExportError / Problem / check: every problem reported at once, at the user's line."""

from __future__ import annotations

import os

import pytest
import torch
import torch.nn.functional as F
from graph_queries import line_of
from slice_models import SliceNet, frozen_slice_net, prepared_slice_net, slice_inputs
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from dg.frontend.errors import ExportError, Problem
from dg.frontend.export import check
from dg.frontend.importer import import_graph
from dg.frontend.prepare import (
    export_with_dynamic_batch,
    freeze_quantization,
    prepare_ptq,
    prepare_qat,
)
from dg.frontend.quantizer import DgQuantizer
from dg.program import export


def _frozen_ptq(model: nn.Module, example: torch.Tensor) -> torch.fx.GraphModule:
    """`model` quantized with dg's quantizer but without dg.prepare_ptq's checks.

    (dg.prepare_ptq would refuse these models; the frozen-model path must
    report their problems just as well.)
    """
    torch.manual_seed(0)
    exported = export_with_dynamic_batch(model, (example,), train=False)
    prepared = prepare_pt2e(exported, DgQuantizer(is_qat=False))
    with torch.no_grad():
        prepared(example)
    return freeze_quantization(prepared)


def _problems(gm: torch.fx.GraphModule) -> list[Problem]:
    with pytest.raises(ExportError) as info:
        import_graph(gm, ())
    return info.value.problems


class TwoUnsupported(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3), nn.GELU())
        self.fc = nn.Linear(4 * 6 * 6, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.tanh(self.features(x))
        return self.fc(y.flatten(1))


def test_export_error_lists_every_unsupported_op_at_its_line():
    problems = _problems(_frozen_ptq(TwoUnsupported(), slice_inputs(2)))
    assert [p.op for p in problems] == [
        "nn.GELU (aten.gelu.default)",
        "torch.tanh (aten.tanh.default)",
    ]
    gelu, tanh = problems
    # nn.Sequential runs the GELU; the user's line is the one calling the Sequential.
    assert gelu.location == f"{__file__}:{line_of(TwoUnsupported.forward, 'torch.tanh')}"
    assert gelu.module_path == "features.1"
    assert tanh.location == f"{__file__}:{line_of(TwoUnsupported.forward, 'torch.tanh')}"
    assert all("not supported" in p.reason for p in problems)


class GeluThenTanh(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = F.gelu(x)
        return torch.tanh(x)


def test_export_error_message_names_each_problem_at_its_line():
    with pytest.raises(ExportError) as info:
        import_graph(_frozen_ptq(GeluThenTanh(), slice_inputs(2)), ())
    lines = str(info.value).splitlines()
    assert lines[0] == "dg cannot compile this model (2 problems):"
    gelu_line = line_of(GeluThenTanh.forward, "F.gelu")
    tanh_line = line_of(GeluThenTanh.forward, "torch.tanh")
    here = os.path.relpath(__file__)
    assert lines[1].startswith("  F.gelu (aten.gelu.default): ")
    assert lines[2] == f"    at {here}:{gelu_line}"
    assert lines[3].startswith("    fix: replace it with nn.ReLU")
    assert lines[4].startswith("  torch.tanh (aten.tanh.default): ")
    assert lines[5] == f"    at {here}:{tanh_line}"
    assert len(lines) == 7


def test_never_quantized_model_says_how_to_quantize():
    gm = export_with_dynamic_batch(SliceNet(), (slice_inputs(2),), train=False)
    problems = _problems(gm)
    assert len(problems) == 1
    (problem,) = problems
    assert "never quantized" in problem.reason
    assert "dg.prepare_qat" in problem.fix and "dg.freeze_quantization" in problem.fix


@pytest.mark.parametrize("mode", ["qat", "ptq"])
def test_prepared_but_not_frozen_model_says_to_freeze(mode):
    (problem,) = _problems(prepared_slice_net(mode))
    assert "not frozen" in problem.reason and "dg.freeze_quantization" in problem.fix


class StandaloneRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(x)
        return self.conv(x)


def test_standalone_relu_is_reported():
    (problem,) = _problems(_frozen_ptq(StandaloneRelu(), slice_inputs(2)))
    assert problem.op == "F.relu (aten.relu.default)"
    assert problem.location == f"{__file__}:{line_of(StandaloneRelu.forward, 'F.relu')}"
    assert "fusion tail" in problem.reason


class BatchChangingReshape(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.fc = nn.Linear(32, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x).reshape(-1, 32)
        return self.fc(y)


def test_reshape_across_the_batch_axis_is_reported():
    (problem,) = _problems(_frozen_ptq(BatchChangingReshape(), slice_inputs(2)))
    assert problem.op.endswith("(aten.reshape.default)") or problem.op.endswith(
        "(aten.view.default)"
    )
    assert "batch-axis" in problem.reason
    assert problem.location == f"{__file__}:{line_of(BatchChangingReshape.forward, 'reshape')}"


def test_problem_and_error_text():
    first = Problem("F.gelu (aten.gelu.default)", "is not supported", "m.py:3", "act", "use relu")
    second = Problem("", "the model was never quantized")
    assert (
        str(first) == "m.py:3 (in act): F.gelu (aten.gelu.default): is not supported Fix: use relu"
    )
    text = str(ExportError([first, second]))
    assert text.splitlines() == [
        "dg cannot compile this model (2 problems):",
        "  F.gelu (aten.gelu.default): is not supported",
        "    at m.py:3 (in act)",
        "    fix: use relu",
        "  the model was never quantized",
    ]


def test_check_a_float_model_before_quantizing():
    model = SliceNet().train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    assert check(model, (slice_inputs(2),)) == []
    # Checking folds batch norm in a copy of the graph, never in the user's model.
    assert model.training
    for key, value in model.state_dict().items():
        assert torch.equal(value, before[key]), key
    problems = check(TwoUnsupported(), (slice_inputs(2),))
    assert [p.op for p in problems] == [
        "nn.GELU (aten.gelu.default)",
        "torch.tanh (aten.tanh.default)",
    ]


def test_check_a_frozen_model():
    assert check(frozen_slice_net("ptq"), (slice_inputs(2),)) == []
    float_graph = export_with_dynamic_batch(SliceNet(), (slice_inputs(2),), train=False)
    assert "never quantized" in check(float_graph, ())[0].reason


class ThreeUnsupported(nn.Module):
    """A CNN a new user might write: three ops dg cannot compile, in three places."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU())
        self.pool = nn.MaxPool2d(3, 2, padding=1)
        self.head = nn.AdaptiveAvgPool2d(2)  # of a 3x3 feature map
        self.fc = nn.Linear(4 * 2 * 2, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.pool(self.stem(x))
        y = F.hardswish(y)
        return self.fc(self.head(y).flatten(1))


THREE_PROBLEMS = [
    ("nn.MaxPool2d(padding=1) (aten.max_pool2d.default)", "self.pool", "pool"),
    ("F.hardswish (aten.hardswish.default)", "F.hardswish", ""),
    ("nn.AdaptiveAvgPool2d(output_size=2) (aten.adaptive_avg_pool2d.default)", "self.head", "head"),
]


def _assert_three_problems(problems: list[Problem]) -> None:
    assert [(p.op, p.location, p.module_path) for p in problems] == [
        (op, f"{__file__}:{line_of(ThreeUnsupported.forward, snippet)}", path)
        for op, snippet, path in THREE_PROBLEMS
    ]
    assert all(p.fix for p in problems)


def test_a_model_mixing_three_unsupported_ops_reports_all_three():
    with pytest.raises(ExportError) as info:
        import_graph(_frozen_ptq(ThreeUnsupported(), slice_inputs(2)), ())
    _assert_three_problems(info.value.problems)
    assert str(info.value).startswith("dg cannot compile this model (3 problems):")
    _assert_three_problems(check(ThreeUnsupported(), (slice_inputs(2),)))


@pytest.mark.parametrize("prepare", [prepare_qat, prepare_ptq])
def test_prepare_checks_the_model_before_training(prepare):
    with pytest.raises(ExportError) as info:
        prepare(ThreeUnsupported(), (slice_inputs(2),))
    _assert_three_problems(info.value.problems)


class Concat(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(1, 2, 3, padding=1)
        self.b = nn.Conv2d(1, 2, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.a(x), self.b(x)], dim=1)


def test_cat_requires_compiler_0_15():
    frozen = _frozen_ptq(Concat(), slice_inputs(2))
    export(frozen, (slice_inputs(2),))  # the current compiler is fine
    with pytest.raises(ExportError) as info:
        export(frozen, (slice_inputs(2),), target_version="0.14.0")
    (problem,) = info.value.problems
    assert "concat" in problem.op
    assert "0.15.0" in problem.reason and "0.14.0" in problem.reason
    assert f"{__file__}:{line_of(Concat.forward, 'torch.cat')}" in problem.location
