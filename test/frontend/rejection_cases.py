"""What the rejection tests share: a small image, the conv the cases build on, and checks of a
problem's op, reason, fix and location."""

from __future__ import annotations

import inspect

import torch
from graph_queries import line_of
from torch import nn

from dg.frontend.errors import Problem
from dg.frontend.export import check

IMAGE = (2, 1, 8, 8)


def _only_problem(model: nn.Module, shape: tuple[int, ...] = IMAGE) -> Problem:
    problems = check(model, (torch.randn(shape),))
    assert len(problems) == 1, "\n".join(map(str, problems))
    return problems[0]


def _line(model: type[nn.Module], snippet: str) -> str:
    """`file:line` of `snippet` in `model.forward`, in the test module that defines it."""
    return f"{inspect.getsourcefile(model)}:{line_of(model.forward, snippet)}"


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
