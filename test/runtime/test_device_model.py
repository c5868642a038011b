"""The device model around the ops: vectorized over the batch, cached weights per call, checked
arguments."""

from __future__ import annotations

import dghw_testing as build
import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import InterpretationError

from dg.runtime.interpreter import DeviceModel, run_dghw


def conv_model() -> tuple[ModuleOp, np.ndarray]:
    rng = np.random.default_rng(7)
    w = rng.integers(-128, 128, (4, 3, 3, 2), dtype=np.int8)
    b = rng.integers(-1000, 1000, 4, dtype=np.int32)
    x_type, y_type = build.tensor(8, build.BATCH, 5, 5, 2), build.tensor(32, build.BATCH, 3, 3, 4)

    def ops(args):
        wc, bc = build.constant(w), build.constant(b)
        conv = build.conv2d(args[0], wc.result, bc.result, y_type, (2, 2), (1, 1, 1, 1), 3, 0)
        return [wc, bc, conv]

    return build.function_module([x_type], ops), w


def test_device_model_is_vectorized_over_the_batch():
    module, _ = conv_model()
    device = DeviceModel(module)
    x = np.random.default_rng(1).integers(-128, 128, (5, 5, 5, 2), dtype=np.int8)
    (batched,) = device([x])
    for i in range(5):
        (single,) = device([x[i : i + 1]])
        np.testing.assert_array_equal(single[0], batched[i])


def test_cached_weights_do_not_leak_between_calls():
    module, _ = conv_model()
    device = DeviceModel(module)
    rng = np.random.default_rng(2)
    for _ in range(3):
        x = rng.integers(-128, 128, (2, 5, 5, 2), dtype=np.int8)
        np.testing.assert_array_equal(device([x])[0], run_dghw(module, [x])[0])


@pytest.mark.parametrize(
    ("array", "message"),
    [
        (np.zeros((1, 5, 5, 2), np.int32), "expected int8 elements, got int32"),
        (np.zeros((1, 5, 4, 2), np.int8), r"got an array of shape \[1, 5, 4, 2\]"),
        (np.zeros((5, 5, 2), np.int8), r"got an array of shape \[5, 5, 2\]"),
    ],
)
def test_arguments_that_do_not_fit_are_rejected(array, message):
    module, _ = conv_model()
    with pytest.raises(ValueError, match=message):
        run_dghw(module, [array])


def test_argument_count_and_batch_agreement_are_checked():
    t = build.batched(32, (1, 3))
    module = build.function_module([t, t], lambda args: [build.add(*args)])
    with pytest.raises(ValueError, match="takes 2 argument"):
        run_dghw(module, [np.zeros((1, 3), np.int32)])
    with pytest.raises(ValueError, match="batch extent 2 differs from 1"):
        run_dghw(module, [np.zeros((1, 3), np.int32), np.zeros((2, 3), np.int32)])


def test_missing_function_is_reported():
    module, _ = conv_model()
    with pytest.raises(InterpretationError, match="no function @forward"):
        run_dghw(module, [], function="forward")


def test_kernels_run_on_one_intra_op_thread_and_the_callers_count_comes_back():
    """Inside a call torch's elementwise kernels get one thread (`one_intra_op_thread`),
    and the caller's count is known; after it, normally or by an error, it is back."""
    import torch
    from xdsl.interpreter import Interpreter

    from dg.runtime.threads import callers_intra_op_threads

    class ThreadCount(Interpreter.Listener):
        def __init__(self, fail: bool = False) -> None:
            self.seen: set[int] = set()
            self.fail = fail

        def did_interpret_op(self, op, results) -> None:
            self.seen.add(torch.get_num_threads())
            self.callers = callers_intra_op_threads()
            if self.fail:
                raise RuntimeError("a kernel failed")

    module, _ = conv_model()
    x = np.random.default_rng(0).integers(-128, 128, (3, 5, 5, 2), dtype=np.int8)
    device = DeviceModel(module)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        counter = ThreadCount()
        device([x], [counter])
        assert counter.seen == {1} and torch.get_num_threads() == 2
        assert counter.callers == 2 and callers_intra_op_threads() == 2
        with pytest.raises(RuntimeError, match="a kernel failed"):
            device([x], [ThreadCount(fail=True)])
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_a_kernel_takes_the_callers_threads_from_parallel_work_on():
    """Inside a call, `threads_for` gives work of `PARALLEL_WORK` the caller's threads and
    one step less one thread; outside a call, torch's own count."""
    import torch

    from dg.runtime.threads import PARALLEL_WORK, one_intra_op_thread, threads_for

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        with one_intra_op_thread():
            with threads_for(PARALLEL_WORK):
                assert torch.get_num_threads() == 2
            with threads_for(PARALLEL_WORK - 1):
                assert torch.get_num_threads() == 1
            assert torch.get_num_threads() == 1
        with threads_for(PARALLEL_WORK):
            assert torch.get_num_threads() == 2
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_a_kernel_inside_a_part_keeps_the_parts_one_thread():
    """Inside a part of `run_in_parts` (2 caller threads, 2 parts), `threads_for` of
    `PARALLEL_WORK` leaves the part's one torch thread, on the caller's and on the pool's."""
    import torch

    from dg.runtime.threads import PARALLEL_WORK, one_intra_op_thread, run_in_parts, threads_for

    seen: list[int] = []

    def part(items) -> None:
        with threads_for(PARALLEL_WORK):
            seen.extend(torch.get_num_threads() for _ in items)

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        with one_intra_op_thread():
            run_in_parts(part, [0, 1], PARALLEL_WORK)
    finally:
        torch.set_num_threads(before)
    assert seen == [1, 1]


@pytest.mark.parametrize("work_past", [-1, 0])
def test_parts_run_on_the_callers_threads_from_parallel_work_on(work_past):
    """`run_in_parts` inside a call with 2 caller threads: from `PARALLEL_WORK`, 5 items in
    two runs of consecutive items (2 on the caller, 3 on a worker), each on one torch
    thread; one step less, one run on the caller. Every item exactly once."""
    import threading

    import torch

    from dg.runtime.threads import PARALLEL_WORK, one_intra_op_thread, run_in_parts

    seen: list[tuple[int, int, int]] = []  # (item, thread, torch threads)

    def record(items):
        for item in items:
            seen.append((item, threading.get_ident(), torch.get_num_threads()))

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        with one_intra_op_thread():
            run_in_parts(record, list(range(5)), PARALLEL_WORK + work_past)
    finally:
        torch.set_num_threads(before)
    assert sorted(item for item, _, _ in seen) == list(range(5))
    caller = threading.get_ident()
    runs = [
        [item for item, thread, _ in seen if (thread == caller) == on_caller]
        for on_caller in (True, False)
    ]
    assert runs == ([[0, 1], [2, 3, 4]] if work_past == 0 else [[0, 1, 2, 3, 4], []])
    assert {threads for _, _, threads in seen} == {1}


def test_blocks_run_in_parts_with_one_scratch_each():
    """`run_blocks_in_parts` of 10 items in steps of 3 on 2 caller threads: the blocks [0, 3),
    [3, 6), [6, 9), [9, 10) (the last one short), each once, two on each thread, each
    part's scratch made once and handed to its blocks."""
    import threading

    import torch

    from dg.runtime.threads import PARALLEL_WORK, one_intra_op_thread, run_blocks_in_parts

    scratches: list[tuple[int, list[int]]] = []  # (thread, the blocks' starts)
    blocks: list[tuple[int, int, int]] = []  # (start, end, id of the scratch)

    def scratch() -> list[int]:
        made: list[int] = []
        scratches.append((threading.get_ident(), made))
        return made

    def block(start: int, end: int, buffers: list[int]) -> None:
        buffers.append(start)
        blocks.append((start, end, id(buffers)))

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        with one_intra_op_thread():
            run_blocks_in_parts(10, 3, block, scratch, PARALLEL_WORK)
    finally:
        torch.set_num_threads(before)
    assert sorted((start, end) for start, end, _ in blocks) == [(0, 3), (3, 6), (6, 9), (9, 10)]
    assert len({thread for thread, _ in scratches}) == 2
    assert sorted(starts for _, starts in scratches) == [[0, 3], [6, 9]]
    assert {identity for _, _, identity in blocks} == {id(s) for _, s in scratches}


def test_parts_inside_a_part_run_inline():
    """A kernel that splits its own work inside a part (a rescale inside a matmul's part)
    runs it on its own thread, on the caller's and on the pool's: the pool's one thread,
    waiting for a part queued behind its own, would wait forever."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    import torch

    from dg.runtime.threads import PARALLEL_WORK, one_intra_op_thread, run_in_parts

    seen: list[tuple[int, int, int]] = []  # (outer item, inner item, thread)

    def inner_of(item: int):
        return lambda inner: seen.extend((item, i, threading.get_ident()) for i in inner)

    def outer(items):
        for item in items:
            run_in_parts(inner_of(item), [0, 1, 2], PARALLEL_WORK)

    def call() -> None:
        with one_intra_op_thread():
            run_in_parts(outer, [0, 1], PARALLEL_WORK)

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        with ThreadPoolExecutor(1) as watchdog:
            watchdog.submit(call).result(timeout=60)
    finally:
        torch.set_num_threads(before)
    assert sorted((item, i) for item, i, _ in seen) == [(o, i) for o in (0, 1) for i in range(3)]
    for item in (0, 1):  # each outer item's inner runs on one thread
        assert len({thread for o, _, thread in seen if o == item}) == 1


def test_an_error_in_a_part_is_raised_after_every_part_ends():
    import torch

    from dg.runtime.threads import PARALLEL_WORK, one_intra_op_thread, run_in_parts

    done: list[int] = []

    def fail_on_three(items):
        for item in items:
            if item == 3:
                raise ValueError("item 3")
            done.append(item)

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        with one_intra_op_thread(), pytest.raises(ValueError, match="item 3"):
            run_in_parts(fail_on_three, [0, 1, 2, 3], PARALLEL_WORK)
    finally:
        torch.set_num_threads(before)
    assert sorted(done) == [0, 1, 2]


def test_a_planned_run_refuses_an_impl_that_gives_the_wrong_number_of_results():
    """The plan's slots take an op's results by count: an impl that gives more is an error
    at its op, never a shifted slot."""
    from dataclasses import dataclass

    from xdsl.interpreter import InterpreterFunctions, impl, register_impls

    from dg.dialects import dghw

    @register_impls
    @dataclass
    class TwoResults(InterpreterFunctions):
        @impl(dghw.ReshapeOp)
        def run_reshape(self, interpreter, op, args):
            return (args[0], args[0])

    module = build.function_module(
        [build.batched(8, (0, 4))],
        lambda args: [build.reshape(args[0], build.batched(8, (0, 2, 2)))],
    )
    device = DeviceModel(module)
    device.interpreter.register_implementations(TwoResults(), override=True)
    with pytest.raises(InterpretationError, match="'dghw.reshape' gave 2 results, expected 1"):
        device([np.zeros((1, 4), np.int8)])
