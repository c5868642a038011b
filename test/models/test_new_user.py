"""dg tried as a new user would: torchvision's ResNet-18, VGG and SqueezeNet, copied unchanged.

The unmodified definitions fail, before any training, with every problem at
once, each naming the op as written, its line in the user's file (the zoo's definition), the
submodule and the edit to make. After exactly those edits (constructor flags
of `user_models`) the models compile and run within one output step of the
frozen model.
"""

from __future__ import annotations

import inspect
import os
import re

import pytest
import torch
import user_models
from harness import DEEP_MAX_LSB, assert_matches_frozen, compile_model, line_of
from torch import nn
from user_models import pasted_squeezenet, resnet18, small_vgg_bn

import dg

RESNET_INPUT = (3, 64, 64)
VGG_INPUT = (3, 32, 32)
SQUEEZENET_INPUT = (3, 34, 34)
"""34 -> stem 16 -> pools with ceil_mode read past the edge at 16, 8 and 4."""


def where(function: object, snippet: str) -> str:
    """``file:line`` of the one line of `function` containing `snippet`: the user's code (the
    definitions are the zoo's, examples/zoo/)."""
    return f"{inspect.getsourcefile(function)}:{line_of(function, snippet)}"  # type: ignore[arg-type]


CHECK_BATCH = 4


def example(shape: tuple[int, ...], batch: int = 2) -> tuple[torch.Tensor]:
    return (torch.randn(batch, *shape, generator=torch.Generator().manual_seed(5)),)


def settle_batch_norm(model: nn.Module, shape: tuple[int, ...]) -> nn.Module:
    """Running statistics of real activations, as a trained model has; returns it in eval mode."""
    model.train()
    with torch.no_grad():
        for seed in range(3):
            model(torch.randn(8, *shape, generator=torch.Generator().manual_seed(seed)))
    return model.eval()


def mentions_size(text: str, size: tuple[int, int]) -> bool:
    """Whether `text` gives the 2-D size `size`, written 4x4, 4×4, (4, 4) or [4, 4]."""
    h, w = size
    return re.search(rf"\b{h}\s*[x×,]\s*{w}\b", text) is not None


def problems_of(model: nn.Module, shape: tuple[int, ...], prepare) -> list[dg.Problem]:
    """dg.check's problems, which `prepare` (dg.prepare_qat or dg.prepare_ptq) raises as well."""
    problems = dg.check(model, example(shape))
    with pytest.raises(dg.ExportError) as info:
        prepare(model, example(shape))
    assert [str(p) for p in info.value.problems] == [str(p) for p in problems]
    return problems


def assert_problem(
    problem: dg.Problem,
    *,
    written: str,
    aten: str,
    location: str,
    module_path: str,
    says: tuple[str, ...],
) -> None:
    text = str(problem)
    assert written in problem.op and aten in problem.op, text
    assert problem.location == location, text
    assert problem.module_path == module_path, text
    assert problem.fix, f"no fix offered: {text}"
    for words in says:
        assert words.lower() in text.lower(), f"{words!r} missing: {text}"


# -- the unmodified definitions -------------------------------------------------------------


def test_resnet18_as_written_asks_to_drop_maxpool_padding() -> None:
    (problem,) = problems_of(resnet18(width=8, num_classes=10), RESNET_INPUT, dg.prepare_qat)
    assert_problem(
        problem,
        written="nn.MaxPool2d",
        aten="aten.max_pool2d",
        location=where(user_models.ResNet._forward_impl, "self.maxpool(x)"),
        module_path="maxpool",
        says=("padding",),
    )


def test_vgg_as_written_asks_for_a_divisible_adaptive_pool() -> None:
    (problem,) = problems_of(small_vgg_bn(), VGG_INPUT, dg.prepare_qat)
    assert_problem(
        problem,
        written="nn.AdaptiveAvgPool2d",
        aten="aten.adaptive_avg_pool2d",
        location=where(user_models.VGG.forward, "self.avgpool(x)"),
        module_path="avgpool",
        says=(),
    )
    # 32x32 in, three 2x2 max pools: a 4x4 map that (7, 7) does not divide.
    assert mentions_size(str(problem), (4, 4)), problem
    assert mentions_size(str(problem), (7, 7)), problem


def test_squeezenet_as_written_reports_relu6_and_every_overhanging_pool() -> None:
    problems = problems_of(pasted_squeezenet(num_classes=10), SQUEEZENET_INPUT, dg.prepare_ptq)
    features = where(user_models.SqueezeNet.forward, "self.features(x)")
    assert [p.module_path for p in problems] == [
        "features.1",
        "features.2",
        "features.5",
        "features.8",
    ], "\n".join(map(str, problems))
    relu6, *pools = problems
    assert_problem(
        relu6,
        written="nn.ReLU6",
        aten="aten.hardtanh",
        location=features,
        module_path="features.1",
        says=("relu", "sigmoid", "softmax"),
    )
    for pool in pools:
        assert_problem(
            pool,
            written="nn.MaxPool2d",
            aten="aten.max_pool2d",
            location=features,
            module_path=pool.module_path,
            says=("ceil_mode",),
        )


def test_squeezenet_error_names_every_problem_once() -> None:
    """One ExportError, one entry per problem (nothing dropped; only alike ones merged)."""
    model = pasted_squeezenet(num_classes=10)
    with pytest.raises(dg.ExportError) as info:
        dg.prepare_ptq(model, example(SQUEEZENET_INPUT))
    assert len(info.value.problems) == 4
    lines = str(info.value).splitlines()
    places = [line for line in lines if line.startswith("    at ")]
    assert len(places) == 4  # every pool's message names its own sizes: no two alike
    user_file = os.path.relpath(str(inspect.getsourcefile(user_models.SqueezeNet)))
    assert all(f"{user_file}:" in line for line in places)


# -- after the edits dg asked for ----------------------------------------------------------
# (dg.prepare_ptq runs dg.check's checks and raises on any problem: compiling is the proof.)


def test_resnet18_after_edits_matches_frozen() -> None:
    model = settle_batch_norm(resnet18(width=8, num_classes=10, maxpool_padding=0), RESNET_INPUT)
    compiled = compile_model(model, [RESNET_INPUT], steps=2)
    assert_matches_frozen(
        "ResNet-18 (new user)", "width8_64x64", compiled, batch=CHECK_BATCH, max_lsb=DEEP_MAX_LSB
    )


def test_vgg_after_edits_matches_frozen() -> None:
    model = settle_batch_norm(small_vgg_bn(avgpool_size=(2, 2)), VGG_INPUT)
    compiled = compile_model(model, [VGG_INPUT], steps=2)
    assert_matches_frozen(
        "VGG-bn (new user)", "small_32x32", compiled, batch=CHECK_BATCH, max_lsb=DEEP_MAX_LSB
    )


def test_squeezenet_after_edits_matches_frozen() -> None:
    model = pasted_squeezenet(num_classes=10, stem_activation=nn.ReLU, ceil_mode=False)
    compiled = compile_model(model, [SQUEEZENET_INPUT], steps=2)
    assert_matches_frozen(
        "SqueezeNet 1.1 (new user)",
        "shrink4_34x34",
        compiled,
        batch=CHECK_BATCH,
        max_lsb=DEEP_MAX_LSB,
    )
