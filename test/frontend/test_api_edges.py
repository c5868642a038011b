"""Example inputs: a bare tensor is a one-tuple; a dtype dg does not compile for is refused."""

from __future__ import annotations

import inspect
import re

import pytest
import torch
from torch import nn

import dg


def small_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 3), nn.ReLU())


def test_a_bare_tensor_is_a_one_tuple() -> None:
    model, x = small_model(), torch.rand(2, 4)
    prepared = dg.prepare_qat(model, x)
    prepared(x)
    frozen = dg.freeze_quantization(prepared)
    program = dg.export(frozen, x)
    assert program.run(x).shape == (2, 3)
    assert dg.check(model, x) == []


def test_examples_that_are_not_a_tuple_are_refused_saying_so() -> None:
    with pytest.raises(TypeError, match=r"a tuple of example inputs.*\(e.g. \(x,\)\), got dict"):
        dg.prepare_ptq(small_model(), {"x": torch.rand(2, 4)})


@pytest.mark.parametrize(
    ("dtype", "cast"),
    [(torch.float64, "x.float()"), (torch.float16, "x.float()"), (torch.int64, "x.int()")],
)
@pytest.mark.parametrize("entry", ["prepare_qat", "prepare_ptq", "check"])
def test_an_example_of_another_dtype_is_refused(dtype: torch.dtype, cast: str, entry: str) -> None:
    x = torch.rand(2, 4).to(dtype)
    with pytest.raises(
        TypeError, match=rf"example input #0 is {dtype}: .* e\.g\. {re.escape(cast)}"
    ):
        getattr(dg, entry)(small_model(), (x,))


def test_export_refuses_a_float64_example() -> None:
    x = torch.rand(2, 4)
    prepared = dg.prepare_ptq(small_model(), (x,))
    prepared(x)
    frozen = dg.freeze_quantization(prepared)
    with pytest.raises(TypeError, match=r"example input #0 is torch.float64"):
        dg.export(frozen, (x.double(),))


def test_a_rejection_inside_nn_sequential_is_located_at_the_users_call() -> None:
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=2, dilation=2), nn.ReLU())
    x = torch.rand(2, 1, 8, 8)
    line = inspect.currentframe().f_lineno + 2  # type: ignore[union-attr]
    with pytest.raises(dg.ExportError) as caught:
        dg.prepare_ptq(model, (x,))
    (problem,) = caught.value.problems
    assert problem.location == f"{__file__}:{line}"
    assert str(problem).startswith(f"{__file__}:{line} (in 0): nn.Conv2d(dilation=2)")
    (checked,) = dg.check(model, (x,))
    assert checked.location == f"{__file__}:{line + 4}"
