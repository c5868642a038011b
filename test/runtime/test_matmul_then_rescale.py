"""A matmul with the per-tensor rescale to int8 that reads it, planned as one step
(`requantized_matmul`): the fused step against the op-by-op walk and the scalar reference,
on attention-sized heads, on one caller's thread and on two, on both GEMM paths."""

from __future__ import annotations

import dghw_reference as ref
import dghw_testing as build
import numpy as np
import pytest
import torch
from xdsl.dialects.builtin import IntegerAttr, i32
from xdsl.interpreter import Interpreter

from dg.dialects import dghw
from dg.runtime.int8_gemm import int8_gemms
from dg.runtime.interpreter import DeviceModel
from dg.runtime.kernels import sequence
from dg.runtime.kernels.sequence import MATMUL_THEN_RESCALE
from dg.runtime.threads import torch_threads

pytestmark = pytest.mark.usefixtures("both_gemm_paths")

RESCALE = ([1518500250], [38], 0, 5, -128, 127)
"""multiplier, shift, input_zp, output_zp, clamp_min, clamp_max: a step of about 2^7 sums,
so the results spread over the int8 range and beyond its clamp."""


def requantized_matmul_module(lhs_shape, rhs_shape, zero_points, rescale_uses: int = 1):
    """matmul(lhs, rhs) then `rescale_uses` rescales of it (`RESCALE`), each a result."""
    result_shape = (*lhs_shape[:-1], rhs_shape[-1])
    arg_types = [build.batched(8, lhs_shape), build.batched(8, rhs_shape)]
    multiplier, shift, input_zp, output_zp, low, high = RESCALE

    def ops(args):
        properties = {"lhs_zp": IntegerAttr(zero_points[0], i32)}
        properties["rhs_zp"] = IntegerAttr(zero_points[1], i32)
        matmul = dghw.MatmulOp.build(
            operands=args, properties=properties, result_types=[build.batched(32, result_shape)]
        )
        y_type = build.batched(8, result_shape)
        rescales = [
            build.rescale(matmul.result, y_type, multiplier, shift, input_zp, output_zp, low, high)
            for _ in range(rescale_uses)
        ]
        return [matmul, *rescales]

    return build.function_module(arg_types, ops, lambda built: [op.results[0] for op in built[1:]])


def attention_operands() -> list[tuple[np.ndarray, np.ndarray, tuple[int, int]]]:
    """Q @ K^T and P @ V of 2 items, 3 heads, S = 128, D = 64: strided per-head views of
    [B, S, H, D] maps, as attention makes them, with zero points on both sides."""
    rng = np.random.default_rng(5)
    q, k, v = (rng.integers(-128, 128, (2, 128, 3, 64), dtype=np.int8) for _ in range(3))
    p = rng.integers(-128, 128, (2, 3, 128, 128), dtype=np.int8)
    return [
        (q.transpose(0, 2, 1, 3), k.transpose(0, 2, 3, 1), (5, -7)),
        (p, v.transpose(0, 2, 1, 3), (-128, 3)),
    ]


def expected(lhs: np.ndarray, rhs: np.ndarray, zero_points: tuple[int, int]) -> np.ndarray:
    return ref.rescale(ref.matmul(lhs, rhs, *zero_points), *RESCALE, 8)


@pytest.mark.parametrize("group", [sequence.MATMUL_GROUP, 1 << 14], ids=["groups", "matrices"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", [0, 1], ids=["scores", "values"])
def test_fused_step_matches_reference(monkeypatch, group, threads, case) -> None:
    """At the default `MATMUL_GROUP` (the 6 heads in one group, or several) and at one
    matrix per group (6 groups, in two runs on two threads)."""
    monkeypatch.setattr(sequence, "MATMUL_GROUP", group)
    lhs, rhs, zero_points = attention_operands()[case]
    model = DeviceModel(requantized_matmul_module(lhs.shape, rhs.shape, zero_points))
    with torch_threads(threads):
        (fused,) = model([lhs, rhs])
    steps = model.interpreter._plan(model.function.body.block).steps
    assert [step.external for step in steps].count(MATMUL_THEN_RESCALE) == 1
    (op_by_op,) = model([lhs, rhs], [Interpreter.Listener()])
    want = expected(lhs, rhs, zero_points)
    assert len(np.unique(want)) > 200  # the rescale's results spread over int8
    np.testing.assert_array_equal(fused, want)
    np.testing.assert_array_equal(op_by_op, want)


def test_fused_step_of_small_matrices_matches_reference() -> None:
    """Matrices below `INT8_MATMUL_MIN_MACS` (the digits transformer's): the matmul's
    float32 path, then the rescale of the whole map."""
    rng = np.random.default_rng(6)
    lhs = rng.integers(-128, 128, (4, 2, 8, 16), dtype=np.int8)
    rhs = rng.integers(-128, 128, (4, 2, 16, 8), dtype=np.int8)
    assert 8 * 16 * 8 < sequence.INT8_MATMUL_MIN_MACS
    model = DeviceModel(requantized_matmul_module(lhs.shape, rhs.shape, (-3, 4)))
    (fused,) = model([lhs, rhs])
    np.testing.assert_array_equal(fused, expected(lhs, rhs, (-3, 4)))


def test_matmul_read_twice_is_not_fused() -> None:
    lhs, rhs, zero_points = attention_operands()[0]
    model = DeviceModel(requantized_matmul_module(lhs.shape, rhs.shape, zero_points, 2))
    first, second = model([lhs, rhs])
    steps = model.interpreter._plan(model.function.body.block).steps
    assert MATMUL_THEN_RESCALE not in [step.external for step in steps]
    np.testing.assert_array_equal(first, expected(lhs, rhs, zero_points))
    np.testing.assert_array_equal(second, first)


def test_parts_of_the_fused_step_run_on_one_torch_thread(monkeypatch, spy, both_gemm_paths) -> None:
    """With two caller's threads and one matrix per group, the heads are split into two runs
    (`run_in_parts`), and every int8 GEMM of a run sees one torch thread, on the caller's
    thread and the pool's (the float32 path makes none)."""
    monkeypatch.setattr(sequence, "MATMUL_GROUP", 1 << 14)
    lhs, rhs, zero_points = attention_operands()[0]
    seen = spy(sequence, "int8_gemm_into", lambda *args: torch.get_num_threads())
    model = DeviceModel(requantized_matmul_module(lhs.shape, rhs.shape, zero_points))
    with torch_threads(2):
        (fused,) = model([lhs, rhs])
    np.testing.assert_array_equal(fused, expected(lhs, rhs, zero_points))
    assert seen == ([1] * 6 if both_gemm_paths == "int8-gemms" else [])


@pytest.fixture
def group_forms(spy) -> list[bool]:
    """Whether each `RequantizedMatmul.group_sums` call gave groups (else the map at once)."""
    return spy(
        sequence.RequantizedMatmul, "group_sums", lambda form: form is not None, returns=True
    )


@pytest.mark.parametrize("past", [0, 1])
def test_float32_groups_from_more_than_one_group(monkeypatch, group_forms, past) -> None:
    """The float32 path's matmul goes a group at a time from one sum past `MATMUL_GROUP`
    (6 matrices of 16 x 16 sums, the group made 1536 - 1 + past sums); the reference
    either way."""
    monkeypatch.setattr(sequence, "MATMUL_GROUP", 6 * 16 * 16 - 1 + past)
    rng = np.random.default_rng(7)
    lhs = rng.integers(-128, 128, (2, 3, 16, 32), dtype=np.int8)
    rhs = rng.integers(-128, 128, (2, 3, 32, 16), dtype=np.int8)
    with int8_gemms(False):
        model = DeviceModel(requantized_matmul_module(lhs.shape, rhs.shape, (4, -9)))
        (fused,) = model([lhs, rhs])
    np.testing.assert_array_equal(fused, expected(lhs, rhs, (4, -9)))
    assert group_forms == [not past]


@pytest.mark.parametrize("k", [258, 259])
def test_float32_groups_need_one_exact_chunk(monkeypatch, group_forms, k) -> None:
    """Worst-case products (|l - lhs_zp| = |r - rhs_zp| = 255 in the first row and column):
    up to K = 258 one float32 GEMM per group is exact (258 * 255^2 < 2^24) and the groups
    run; from K = 259 the map's chunked GEMMs (`MatmulPlan.apply`). Several groups either
    way; the reference's integers."""
    monkeypatch.setattr(sequence, "MATMUL_GROUP", 1 << 9)
    rng = np.random.default_rng(8)
    lhs = rng.integers(-128, 128, (2, 3, 16, k), dtype=np.int8)
    rhs = rng.integers(-128, 128, (2, 3, k, 16), dtype=np.int8)
    lhs[..., 0, :], rhs[..., :, 0] = -128, 127  # with zero points 127 and -128: -255, 255
    with int8_gemms(False):
        model = DeviceModel(requantized_matmul_module(lhs.shape, rhs.shape, (127, -128)))
        (fused,) = model([lhs, rhs])
    np.testing.assert_array_equal(fused, expected(lhs, rhs, (127, -128)))
    assert group_forms == [k == 258]
