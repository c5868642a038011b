"""`torch.mul` outside activation x constant tensor, and matmul outside activation x
activation with a scalar score scale: each is a `Problem` with op, reason, the user's
file:line and a fix (checked on the float model with `dg.check`)."""

from __future__ import annotations

import torch
from graph_queries import line_of
from torch import nn

from dg.frontend.errors import Problem
from dg.frontend.export import check
from dg.frontend.importer import MUL_ACTIVATIONS_FIX, SCORE_SCALE_FIX
from dg.lowering import registry

SEQUENCE = (2, 5, 8)
MUL = "torch.mul (aten.mul.Tensor)"


class TwoActivations(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k = nn.Linear(8, 8), nn.Linear(8, 8)

    def forward(self, x):
        return torch.mul(self.q(x), self.k(x))


class ZeroDimBuffer(nn.Module):
    """A 0-d tensor is a bare scalar, whatever container holds it."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.register_buffer("factor", torch.tensor(0.5))

    def forward(self, x):
        return torch.mul(self.fc(x), self.factor)


class EnlargingTable(nn.Module):
    """[B, 1, 8] x [5, 8] would make the activation larger: not a broadcast of the constant."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.register_buffer("table", torch.randn(5, 8))

    def forward(self, x):
        return torch.mul(self.fc(x), self.table)


def _only_problem(model: nn.Module, shape: tuple[int, ...]) -> Problem:
    problems = check(model, (torch.randn(shape),))
    assert len(problems) == 1, "\n".join(map(str, problems))
    return problems[0]


def _assert_located(problem: Problem, model: type[nn.Module]) -> None:
    assert problem.op == MUL
    assert problem.location == f"{__file__}:{line_of(model.forward, 'torch.mul')}"
    assert problem.location in str(problem)


def test_activation_times_activation() -> None:
    problem = _only_problem(TwoActivations(), SEQUENCE)
    _assert_located(problem, TwoActivations)
    assert "multiplying two activations is not supported" in problem.reason
    assert registry.MUL_CONST_TENSOR.notes in problem.reason
    assert problem.fix == MUL_ACTIVATIONS_FIX
    assert MUL_ACTIVATIONS_FIX in str(problem)


def test_zero_dim_tensor_is_a_bare_scalar() -> None:
    problem = _only_problem(ZeroDimBuffer(), SEQUENCE)
    _assert_located(problem, ZeroDimBuffer)
    assert problem.reason == registry.BARE_MUL.reason
    assert problem.fix == registry.BARE_MUL.fix


def test_constant_must_not_enlarge_the_activation() -> None:
    problem = _only_problem(EnlargingTable(), (2, 1, 8))
    _assert_located(problem, EnlargingTable)
    assert "the constant (shape [5, 8]) must broadcast to the activation (shape [1, 8]" in (
        problem.reason
    )
    assert problem.fix and "extent 1 on the axes it repeats" in str(problem)


# -- matmul and its score scale --------------------------------------------------------


class TensorScale(nn.Module):
    """A score scale that is a (0-dim) tensor, not a Python number.

    A table with axes is not a score scale but the torch.mul(x, const_tensor) row,
    which dg compiles (test/fuzz/test_random_graphs.py, REGRESSIONS).
    """

    def __init__(self):
        super().__init__()
        self.q, self.k = nn.Linear(8, 8), nn.Linear(8, 8)
        self.register_buffer("scale", torch.tensor(0.3))

    def forward(self, x):
        return torch.mul(torch.matmul(self.q(x), self.k(x).transpose(1, 2)), self.scale)


class ActivationScale(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.gate = nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 5)

    def forward(self, x):
        scores = torch.matmul(self.q(x), self.k(x).transpose(1, 2))
        return torch.mul(scores, self.gate(x))


class MatmulWithWeight(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.weight = nn.Parameter(torch.randn(8, 3))

    def forward(self, x):
        return torch.matmul(self.fc(x), self.weight)


class FeatureRank4(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        return torch.matmul(y.view(-1, 1, 1, 5, 8), y.view(-1, 1, 1, 8, 5))


class DivisionAlone(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return torch.div(self.fc(x), 2.0)


def _assert_problem_at(problem: Problem, model: type[nn.Module], snippet: str, op: str) -> None:
    assert problem.op == op
    assert problem.location == f"{__file__}:{line_of(model.forward, snippet)}"
    assert problem.fix and problem.fix in str(problem)


def test_score_scale_must_be_a_scalar_constant() -> None:
    problem = _only_problem(TensorScale(), SEQUENCE)
    _assert_problem_at(problem, TensorScale, "torch.mul", MUL)
    assert "the score scale after a matmul must be a scalar constant" in problem.reason
    assert "the parameter/constant 'scale'" in problem.reason
    assert problem.fix == SCORE_SCALE_FIX


def test_score_scale_must_not_be_an_activation() -> None:
    problem = _only_problem(ActivationScale(), SEQUENCE)
    _assert_problem_at(problem, ActivationScale, "torch.mul", MUL)
    assert problem.reason.endswith("must be a scalar constant, got an activation")


def test_matmul_with_a_weight_is_a_linear() -> None:
    problem = _only_problem(MatmulWithWeight(), SEQUENCE)
    _assert_problem_at(
        problem, MatmulWithWeight, "torch.matmul", "torch.matmul (aten.matmul.default)"
    )
    assert "only activation x activation is supported" in problem.reason
    assert "nn.Linear" in problem.fix


def test_matmul_feature_rank_4_is_rejected() -> None:
    problem = _only_problem(FeatureRank4(), SEQUENCE)
    _assert_problem_at(problem, FeatureRank4, "torch.matmul", "torch.matmul (aten.matmul.default)")
    assert "feature rank 2-3 per operand" in problem.reason
    assert "got [1, 1, 5, 8] and [1, 1, 8, 5]" in problem.reason


def test_division_outside_a_score_scale() -> None:
    problem = _only_problem(DivisionAlone(), SEQUENCE)
    assert problem.location == f"{__file__}:{line_of(DivisionAlone.forward, 'torch.div')}"
    assert "division is only supported as the score scale right after a matmul" in problem.reason
    assert problem.fix
