"""Requantized FCs that read one input (an attention's q, k and v projections) as one step of
the plan (`sibling_fcs`, `SiblingFcs`): one GEMM of their weights side by side where every
member's requantization folds into its weights with one clamp, else each member's own step;
against the reference and the op-by-op walk, on both GEMM paths."""

from __future__ import annotations

import dghw_reference as ref
import dghw_testing as build
import numpy as np
import pytest
from xdsl.interpreter import Interpreter

from dg.runtime.exact import FLOAT_INT8_GEMM_MACS
from dg.runtime.interpreter import DeviceModel
from dg.runtime.kernels.weights import ACCUMULATE_THEN_RESCALE, SIBLING_FCS

pytestmark = pytest.mark.usefixtures("both_gemm_paths")

D = 32
"""The FCs' input and output width: the digits transformer's."""


def member(rng: np.random.Generator, clamp_min: int = -128, width: int = D):
    """One FC's weights [width, D], bias and per-channel rescale (m, s, output_zp, clamp_min)."""
    w = rng.integers(-128, 128, (width, D), dtype=np.int8)
    b = rng.integers(-(1 << 16), 1 << 16, width, dtype=np.int32)
    multipliers = rng.integers(1 << 30, (1 << 31) - 1, width).tolist()
    shifts = rng.integers(36, 40, width).tolist()
    return w, b, (multipliers, shifts, int(rng.integers(-20, 20)), clamp_min)


def siblings_module(members, input_zps, reshape_first: bool):
    """x [?, 8, D] int8 -> an FC and its rescale to int8 per member (its input zero point
    from `input_zps`); with `reshape_first`, the first result reshaped to [?, 8, 2, 16] right
    after its rescale, before the next FC. Returns every member's result."""
    x_type = build.batched(8, (0, 8, D))

    def ops(args):
        made = []
        for i, ((w, b, (m, s, zp, clamp_min)), input_zp) in enumerate(
            zip(members, input_zps, strict=True)
        ):
            shape = (0, 8, len(w))
            wc, bc = build.constant(w), build.constant(b)
            fc = build.fully_connected(
                args[0], wc.result, bc.result, build.batched(32, shape), input_zp, 0
            )
            out = build.rescale(fc.result, build.batched(8, shape), m, s, 0, zp, clamp_min, 127)
            made += [wc, bc, fc, out]
            if i == 0 and reshape_first:
                made.append(build.reshape(out.result, build.batched(8, (0, 8, 2, 16))))
        return made

    def results(made):
        return [op.results[0] for op in made if op.name in ("dghw.rescale", "dghw.reshape")][
            1 if reshape_first else 0 :
        ]

    return build.function_module([x_type], ops, results)


def expected(x: np.ndarray, members, input_zps) -> list[np.ndarray]:
    out = []
    for (w, b, (m, s, zp, clamp_min)), input_zp in zip(members, input_zps, strict=True):
        acc = ref.fully_connected(x, w, b, input_zp, 0)
        out.append(ref.rescale(acc, m, s, 0, zp, clamp_min, 127, 8))
    return out


def assert_reference(planned, observed, want) -> None:
    """Every result of the planned run and of the op-by-op one is the reference's."""
    for got, seen, exact in zip(planned, observed, want, strict=True):
        np.testing.assert_array_equal(got, exact)
        np.testing.assert_array_equal(seen, exact)


def run(module, x: np.ndarray) -> tuple[list, list, list]:
    """The planned run, the op-by-op one, and the plan's step names."""
    model = DeviceModel(module)
    planned = model([x])
    steps = [step.external for step in model.interpreter._plan(model.function.body.block).steps]
    observed = model([x], [Interpreter.Listener()])
    return planned, observed, steps


@pytest.mark.parametrize("batch", [1, 32])
def test_three_fcs_on_one_input_are_one_gemm(scaled_gemm_calls, batch):
    """q, k and v of the digits transformer's shape, per-channel multipliers, the first
    result read (reshaped) before the second FC: one step, one GEMM of [M, D] x [D, 3 D], the
    reference's integers."""
    rng = np.random.default_rng(batch)
    members = [member(rng) for _ in range(3)]
    x = rng.integers(-128, 128, (batch, 8, D), dtype=np.int8)
    x[0, 0] = -128
    module = siblings_module(members, [3, 3, 3], reshape_first=True)
    planned, observed, steps = run(module, x)
    want = expected(x, members, [3, 3, 3])
    want[0] = want[0].reshape(batch, 8, 2, 16)
    assert_reference(planned, observed, want)
    assert steps.count(SIBLING_FCS) == 1 and ACCUMULATE_THEN_RESCALE not in steps
    assert scaled_gemm_calls == [(batch * 8, 3 * D)]


def test_members_with_other_clamps_run_their_own_steps(scaled_gemm_calls):
    """A ReLU'd member (clamp_min = its zero point) has another clamp: the group is still one
    step, each member computed by its own step (three GEMMs), the reference's integers."""
    rng = np.random.default_rng(7)
    members = [member(rng), member(rng, clamp_min=0), member(rng)]
    x = rng.integers(-128, 128, (4, 8, D), dtype=np.int8)
    module = siblings_module(members, [0, 0, 0], reshape_first=False)
    planned, observed, steps = run(module, x)
    assert_reference(planned, observed, expected(x, members, [0, 0, 0]))
    assert steps.count(SIBLING_FCS) == 1
    assert scaled_gemm_calls == [(32, D)] * 3


@pytest.mark.parametrize("past", [0, 1])
def test_siblings_take_one_gemm_while_each_member_would_take_its_form(scaled_gemm_calls, past):
    """Members of D and 2 D outputs: one GEMM while the widest member's own GEMM is within
    `FLOAT_INT8_GEMM_MACS`; one item past it, each member's own step (the narrow one's form still
    folded, the wide one's not)."""
    rng = np.random.default_rng(past)
    members = [member(rng), member(rng, width=2 * D)]
    items = FLOAT_INT8_GEMM_MACS // (8 * D * 2 * D) + past
    x = rng.integers(-128, 128, (items, 8, D), dtype=np.int8)
    module = siblings_module(members, [-5, -5], reshape_first=False)
    planned, observed, steps = run(module, x)
    assert_reference(planned, observed, expected(x, members, [-5, -5]))
    assert steps.count(SIBLING_FCS) == 1
    assert scaled_gemm_calls == [(items * 8, D if past else 3 * D)]


def test_an_fc_of_another_input_zero_point_is_no_sibling():
    """Only FCs with the first one's input zero point share its rows: the third, of another
    zero point, runs as its own step."""
    rng = np.random.default_rng(3)
    members = [member(rng) for _ in range(3)]
    x = rng.integers(-128, 128, (2, 8, D), dtype=np.int8)
    module = siblings_module(members, [1, 1, 2], reshape_first=False)
    planned, observed, steps = run(module, x)
    assert_reference(planned, observed, expected(x, members, [1, 1, 2]))
    assert steps.count(SIBLING_FCS) == 1 and steps.count(ACCUMULATE_THEN_RESCALE) == 1
