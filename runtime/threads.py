"""torch's intra-op threads in the device model: one while it runs, the caller's count for a
kernel big enough to gain from them.

The device model makes many small torch passes (batch 1: 10^4 .. 10^5 elements each). Each
torch call over more than ~32k elements on several threads is a parallel region that ends
only when every thread has run; on a busy machine a region waited milliseconds for its
second thread (Llama s128 at batch 1 and 2 threads: 655 ms, against 69 on one thread, when
every torch call ran on both). So a call runs on one thread (`one_intra_op_thread`), and a
GEMM or a depthwise conv's float taps, of at least `PARALLEL_WORK` multiply-adds or
elements, takes the caller's threads back (`threads_for`), as the float model's kernels use
them; work made of many blocks or matrices (requantized GEMMs and matmuls, an attention's
heads) is split into one run per caller's thread instead (`run_in_parts`). The integers
never depend on the thread count: every exact path sums integers in a range where no
addition rounds or wraps (below 2^24 in float32, below 2^31 in int32), in any order, or
works elementwise.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from typing import TypeVar

import torch

PARALLEL_WORK = 1 << 16
"""Elements or multiply-adds from which a kernel runs on the caller's threads: tens of
microseconds of work on one thread, against a few per parallel region on an idle machine.
At batch 1 and 2 threads on an idle machine (bench/zoo.py's networks, 2^16 against 2^22):
ViT-Ti 27.3 against 33.5 ms, Llama s128 13.2 against 14.6, MobileNetV2 12.4 against 13.7.
On a machine whose two cores are busy with other work, regions wait for a time slice, and
ViT-Ti took 160 against 136 ms (eager: 47 ms, against 19 idle)."""

_CALLERS_THREADS: ContextVar[int] = ContextVar("callers_intra_op_threads", default=0)
"""torch's intra-op thread count of the device model's caller, during a call."""


@contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """torch's intra-op threads set to `count` inside, the previous count after (a change
    costs well under a microsecond)."""
    previous = torch.get_num_threads()
    if previous == count:
        yield
        return
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


@contextmanager
def one_intra_op_thread() -> Iterator[None]:
    """One torch thread while the device model runs; the caller's count is kept for
    `threads_for` and comes back after, normally or by an error."""
    token = _CALLERS_THREADS.set(torch.get_num_threads())
    try:
        with torch_threads(1):
            yield
    finally:
        _CALLERS_THREADS.reset(token)


def callers_intra_op_threads() -> int:
    """The intra-op thread count of the device model's caller, or torch's current one
    outside a call."""
    return _CALLERS_THREADS.get() or torch.get_num_threads()


_UNCHANGED = nullcontext()


def threads_for(work: int) -> AbstractContextManager[None]:
    """The caller's threads inside for `work` of at least `PARALLEL_WORK` (elements or
    multiply-adds), else one. Below it on one thread already, nothing is done: a kernel
    of the digits demos asks for this several times in a few microseconds. Inside a part
    of `run_in_parts` nothing is done either: the part keeps its one torch thread, the
    caller's other threads running the other parts."""
    if _IN_PART.get() or (work < PARALLEL_WORK and torch.get_num_threads() == 1):
        return _UNCHANGED
    return torch_threads(callers_intra_op_threads() if work >= PARALLEL_WORK else 1)


_T = TypeVar("_T")


@functools.cache
def _workers(count: int) -> ThreadPoolExecutor:
    """A pool of `count` threads, made once per count and kept for the process."""
    return ThreadPoolExecutor(count, thread_name_prefix="dg-device")


PARALLEL_NUMPY_WORK = 1 << 19
"""Elements from which a numpy kernel that walks a map block by block splits its blocks over
the caller's threads (`run_in_parts`): numpy's passes release the GIL and run side by side,
but handing a run to the pool costs tens of microseconds (np.take over 37 k elements: 29 us
on one thread, 70 us split; over 1 M: 824 us and 504 us). Batch-1 maps stay on one."""


def run_in_parts(
    function: Callable[[Sequence[_T]], None],
    items: Sequence[_T],
    work: int,
    least: int = PARALLEL_WORK,
) -> None:
    """`function` over `items`, which it handles each on its own (writing disjoint results),
    split from `least` work (`PARALLEL_WORK`; numpy kernels: `PARALLEL_NUMPY_WORK`) into
    one run of consecutive items per caller's thread, each run on one torch thread (the
    caller runs the first); below it, or with one thread, one run on the caller.

    For many small torch kernels (an attention's per-head int8 GEMMs): one parallel region
    per kernel made such a matmul slower on 2 threads than on 1 (Llama at batch 32: 10.2 ms
    against 4.3 ms split), while the kernels release the GIL and run side by side. An
    error in any run is raised here, after every run has ended."""
    threads = callers_intra_op_threads() if work >= least and not _IN_PART.get() else 1
    parts = min(threads, len(items))
    if parts <= 1:
        function(items)
        return
    bounds = [len(items) * part // parts for part in range(parts + 1)]
    runs = [items[start:end] for start, end in zip(bounds[:-1], bounds[1:], strict=True)]
    with torch_threads(1):
        others = [_workers(parts - 1).submit(_run_part, function, run) for run in runs[1:]]
        token = _IN_PART.set(True)
        try:
            function(runs[0])
        finally:
            _IN_PART.reset(token)
            wait(others)
        for other in others:
            other.result()


_IN_PART: ContextVar[bool] = ContextVar("inside_a_part", default=False)
"""Whether this thread runs a part of `run_in_parts`: a kernel called inside one (a rescale
inside a matmul's part) then runs its own parts inline. Split, the caller's part would queue
them behind the pool's thread, busy with another part, and wait; a pool thread would wait
for a part queued behind its own."""


def _run_part(function: Callable[[Sequence[_T]], None], run: Sequence[_T]) -> None:
    """`function(run)` on a pool thread, marked as inside a part (the pool's threads run
    nothing else, so the mark stays)."""
    _IN_PART.set(True)
    function(run)


_S = TypeVar("_S")


def run_blocks_in_parts(
    count: int,
    step: int,
    block: Callable[[int, int, _S], None],
    scratch: Callable[[], _S],
    work: int,
    numpy: bool = False,
) -> None:
    """`block(start, end, buffers)` for each run [start, end) of `step` of `count` items (the
    last one shorter), the runs split over the caller's threads as `run_in_parts` splits
    items (from `PARALLEL_WORK`; a numpy kernel's, `numpy`, from `PARALLEL_NUMPY_WORK`),
    each part's `buffers` made once by `scratch` and reused from block to block."""
    least = PARALLEL_NUMPY_WORK if numpy else PARALLEL_WORK

    def part(starts: Sequence[int]) -> None:
        buffers = scratch()
        for start in starts:
            block(start, min(start + step, count), buffers)

    run_in_parts(part, range(0, count, step), work, least)
