"""The report of a real model's problems: complete (every op judged on its own), grouped, and
with the fix that fits what the user wrote (issue 13)."""

from __future__ import annotations

import os
import runpy
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from graph_queries import line_of
from torch import nn
from vit_style import Attention, Block, ViT

import dg
from dg.frontend.errors import Problem, compact_paths, group_problems, report
from dg.frontend.export import check
from dg.lowering import registry

ZOO_MOBILENET = Path(__file__).parents[2] / "examples" / "zoo" / "mobilenet_v2.py"
mobilenet = runpy.run_path(str(ZOO_MOBILENET))
"""The zoo's MobileNetV2, written as torchvision writes it: ReLU6 unless told otherwise."""
MobileNetV2, InvertedResidual = mobilenet["MobileNetV2"], mobilenet["InvertedResidual"]

VIT_FILE = os.path.abspath(ViT.__module__.replace(".", "/") + ".py")


@pytest.fixture(scope="module")
def vit_problems() -> list[Problem]:
    torch.manual_seed(0)
    return check(ViT().eval(), (torch.randn(1, 3, 32, 32),))


def _at(problems: list[Problem], function: object, snippet: str) -> list[Problem]:
    line = line_of(function, snippet)
    return [p for p in problems if p.location.endswith(f"vit_style.py:{line}")]


def test_vit_reports_every_problem_each_at_its_line(vit_problems):
    expand = _at(vit_problems, ViT.forward, "# dg: expand")
    assert [p.op for p in expand] == ["Tensor.expand (aten.expand.default)"]
    norms = [p for p in vit_problems if p.op.startswith("nn.LayerNorm")]
    assert sorted(p.module_path for p in norms) == [
        "blocks.0.norm1",
        "blocks.0.norm2",
        "blocks.1.norm1",
        "blocks.1.norm2",
        "norm",
    ]
    assert all(p.fix and "dg.Norm" in p.fix for p in norms)
    gelus = [p for p in vit_problems if p.op.startswith("nn.GELU")]
    assert [p.module_path for p in gelus] == ["blocks.0.act", "blocks.1.act"]
    assert all("fusion tail" in (p.fix or "") and "nn.ReLU" in (p.fix or "") for p in gelus)
    sdpa = _at(vit_problems, Attention.forward, "# dg: fused attention")
    assert len(sdpa) == 2 and all("dg.SelfAttention" in (p.fix or "") for p in sdpa)
    permutes = _at(vit_problems, Attention.forward, "# dg: rank-4 permute")
    assert [p.op for p in permutes] == ["Tensor.permute(0, 2, 1, 3) (aten.permute.default)"] * 2
    assert all(p.reason == registry.PERMUTE.reason for p in permutes)
    unbinds = [p for p in vit_problems if p.op.startswith("Tensor.unbind")]
    # The permute before it moved the batch axis: axis 0 holds q, k and v.
    assert len(unbinds) == 2 and all("moved to axis 1" in p.reason for p in unbinds)
    assert all("chunk(3, dim=-1)" in (p.fix or "") for p in unbinds)
    (cat,) = _at(vit_problems, ViT.forward, "# dg: class token")
    assert "not a parameter" in cat.reason and "x.mean(1)" in (cat.fix or "")
    (position,) = _at(vit_problems, ViT.forward, "# dg: position embedding")
    assert "pos_embed" in position.reason and "rope=True" in (position.fix or "")
    assert not [p for p in vit_problems if "getitem" in p.op or "slice" in p.op]
    assert all(p.location for p in vit_problems)


def test_vit_norm_lines_are_the_calls_of_the_norms(vit_problems):
    norm1 = [p for p in vit_problems if p.module_path == "blocks.0.norm1"]
    assert norm1[0].location.endswith(f":{line_of(Block.forward, 'self.norm1(x)')}")


def test_mobilenet_v2_as_written_is_one_grouped_entry():
    torch.manual_seed(0)
    model = MobileNetV2(width_mult=0.25, num_classes=10).eval()
    with pytest.raises(dg.ExportError) as info:
        dg.prepare_ptq(model, (torch.randn(1, 3, 64, 64),))
    problems = info.value.problems
    assert len(problems) == 35  # one per place, for programs that read them
    assert all(p.op == "nn.ReLU6 (aten.hardtanh_.default)" for p in problems)
    text = str(info.value)
    lines = text.splitlines()
    assert len(lines) <= 10, text
    assert lines[0] == "dg cannot compile this model (35 problems, 1 kind):"
    assert lines[1].startswith("  nn.ReLU6 (aten.hardtanh_.default) [35 places]: clips at 0 and 6")
    assert text.count("fix:") == 1 and "nn.ReLU" in lines[-1] and "recalibrate" in lines[-1]
    forward_line = line_of(MobileNetV2.forward, "x = self.features(x)")
    assert f"mobilenet_v2.py:{forward_line} (in features.{{0, 18}}.2)" in text
    expand_line = line_of(InvertedResidual.forward, "return self.conv(x)")
    assert f"mobilenet_v2.py:{expand_line} (in features." in text
    named = set()
    for line in lines:
        if "(in features." in line:
            named |= _expanded(line.split("(in ", 1)[1].rstrip(")"))
    assert named == {p.module_path for p in problems}


def test_mobilenet_v2_with_nn_relu_compiles():
    model = MobileNetV2(width_mult=0.25, num_classes=10, activation_layer=torch.nn.ReLU)
    assert check(model.eval(), (torch.randn(1, 3, 64, 64),)) == []


def _expanded(text: str) -> set[str]:
    """The module paths `compact_paths` wrote as `text` (inverse, for the test)."""
    if "{" not in text:
        return set(_ranges(text))
    head, _, rest = text.partition("{")
    depth, parts, current = 0, [], ""
    body, tail = _split_brace(rest)
    for char in body:
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        current += char
    parts.append(current.strip())
    return {path for part in parts for path in _expanded(f"{head}{part}{tail}")}


def _split_brace(rest: str) -> tuple[str, str]:
    depth = 1
    for i, char in enumerate(rest):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 0:
            return rest[:i], rest[i + 1 :]
    raise AssertionError(rest)


def _ranges(path: str) -> list[str]:
    paths = [""]
    for part in path.split("."):
        if "-" in part and all(p.isdigit() for p in part.strip("{}").split("-")):
            first, last = (int(p) for p in part.strip("{}").split("-"))
            options = [str(i) for i in range(first, last + 1)]
        else:
            options = [part]
        paths = [f"{p}.{o}" if p else o for p in paths for o in options]
    return paths


def test_compact_paths():
    assert compact_paths(["features.0.2", "features.18.2"]) == "features.{0, 18}.2"
    assert compact_paths(["features.0.2", "features.1.conv"]) == "features.{0.2, 1.conv}"
    assert compact_paths([f"layers.{i}.act" for i in (0, 1, 2, 4)]) == "layers.{0-2, 4}.act"
    assert compact_paths(["a.b", "a.b"]) == "a.b"
    assert compact_paths(["blocks.1.conv.0", "blocks.1.conv.1", "blocks.2.conv.0"]) == (
        "blocks.{1.conv.{0-1}, 2.conv.0}"
    )


def test_groups_keep_order_and_places():
    first = Problem("F.gelu (aten.gelu.default)", "why", "m.py:3", "a.0", "fix it")
    other = Problem("torch.tanh (aten.tanh.default)", "why not", "m.py:4")
    second = Problem("F.gelu (aten.gelu.default)", "why", "m.py:3", "a.1", "fix it")
    groups = group_problems([first, other, second])
    assert [g.op for g in groups] == [first.op, other.op]
    assert groups[0].places == (("m.py:3", "a.0"), ("m.py:3", "a.1"))
    assert report([first, other, second]).splitlines() == [
        "dg cannot compile this model (3 problems, 2 kinds):",
        "  F.gelu (aten.gelu.default) [2 places]: why",
        "    at m.py:3 (in a.{0-1})",
        "    fix: fix it",
        "  torch.tanh (aten.tanh.default): why not",
        "    at m.py:4",
    ]


class TopkThenGelu(nn.Module):
    """An op dg does not know that returns two tensors, and a problem after it."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.out = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values, _ = torch.topk(self.fc(x), 4, dim=-1)  # dg: topk
        return F.gelu(self.out(values))  # dg: gelu


def test_an_unknown_op_returning_two_tensors_hides_nothing():
    problems = check(TopkThenGelu(), (torch.randn(2, 8, 16),))
    assert [p.op.split(" (")[0] for p in problems] == ["torch.topk", "F.gelu"]
    assert problems[0].location.endswith(f":{line_of(TopkThenGelu.forward, '# dg: topk')}")
    assert problems[1].location.endswith(f":{line_of(TopkThenGelu.forward, '# dg: gelu')}")
