"""What the device model's kernel families share: the per-op plan cache base class,
numpy dtypes of dghw types, int32 range checks and per-channel parameter helpers.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import numpy as np
from numpy._core import umath
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerType,
    TensorType,
)
from xdsl.interpreter import (
    InterpreterFunctions,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import InterpretationError

from dg.dialects import dghw
from dg.runtime.exact import INT32_MAX, INT32_MIN, shared_tensor
from dg.runtime.threads import threads_for

_CLIP: np.ufunc = umath.clip  # type: ignore[attr-defined]  # numpy's stubs lack it
"""numpy's clip ufunc (`clip_in_place`)."""

NUMPY_DTYPES: dict[int, type[np.signedinteger[Any]]] = {8: np.int8, 32: np.int32}
"""numpy dtype of each dghw element width (dghw integers are signed)."""


_T = TypeVar("_T")


_OpT = TypeVar("_OpT", bound=Operation)


def numpy_dtype(t: Attribute) -> np.dtype[Any]:
    """The numpy dtype holding the elements of the dghw tensor type `t`."""
    assert isinstance(t, TensorType) and isinstance(t.element_type, IntegerType)
    return np.dtype(NUMPY_DTYPES[t.element_type.width.data])


def check_int32(acc: np.ndarray, op: Operation) -> None:
    """TOSA leaves an int32 overflow unpredictable; the device model reports it."""
    if acc.size and (acc.min() < INT32_MIN or acc.max() > INT32_MAX):
        raise InterpretationError(
            f"{op.name}: result {acc.min()}..{acc.max()} overflows int32 "
            f"(result %{op.results[0].name_hint or '?'})"
        )


def sole_int8_rescale(op: Operation) -> dghw.RescaleOp | None:
    """The `dghw.rescale` to int8 that is the only use of `op`'s result, if there is one: the
    tail a planned step may run with `op` (`EXTERNAL_STEPS` of the device model's plan)."""
    uses = list(op.results[0].uses) if len(op.results) == 1 else []
    if len(uses) != 1 or not isinstance(uses[0].operation, dghw.RescaleOp):
        return None
    rescale = uses[0].operation
    return rescale if numpy_dtype(rescale.result.type) == np.int8 else None


def sole_per_tensor_int8_rescale(op: Operation) -> dghw.RescaleOp | None:
    """`sole_int8_rescale` of `op` when that rescale is per tensor (one multiplier): an
    elementwise function of the int32 value alone, whatever its position."""
    rescale = sole_int8_rescale(op)
    if rescale is None or len(rescale.multiplier.get_values()) > 1:
        return None
    return rescale


def defined_by_constant(value: SSAValue) -> bool:
    return isinstance(value.owner, dghw.ConstantOp)


INT64_MAX = (1 << 63) - 1


def per_channel_rows(x: np.ndarray, item_size: int) -> np.ndarray:
    """`x` as [N, item_size] rows (a view when it can be): one row per batch item.

    A per-channel vector tiled to `item_size` (`tile_channels`) then lines up with
    every row. numpy broadcasts a [C] vector over [..., C] in inner loops of C
    elements, which costs as much as the arithmetic for C = 16; over whole rows the
    inner loop is the item, two to three times faster. The values are the same.
    """
    return x.reshape(x.shape[0], item_size)


def tile_channels(values: np.ndarray | float, item_size: int) -> Any:
    """A per-channel vector repeated over an item of `item_size` elements; a scalar as is."""
    if isinstance(values, int | float):
        return values
    return np.tile(values, item_size // len(values))


def per_item_parameters(
    cache: dict[tuple[int, ...], tuple[Any, ...]], x: np.ndarray, parameters: tuple[Any, ...]
) -> tuple[np.ndarray, tuple[Any, ...]]:
    """`x` as one row per batch item and its per-channel `parameters` tiled over an item.

    The tiles are made once per item shape (kept in `cache`). Scalar parameters,
    or an `x` with no axis besides the channels, stay as they are: the [C]
    vectors then broadcast directly.
    """
    if x.ndim < 2 or not any(isinstance(v, np.ndarray) for v in parameters):
        return x, parameters
    item = x.shape[1:]
    tiled = cache.get(item)
    if tiled is None:
        size = math.prod(item)
        tiled = cache[item] = tuple(tile_channels(v, size) for v in parameters)
    return per_channel_rows(x, math.prod(item)), tiled


TORCH_MIN_ELEMENTS = 1 << 15
"""Elements from which a kernel runs a pass in torch rather than numpy, where it has both
(vectorized integer shifts, fused multiply-adds): on fewer, as in the digits demos' maps,
numpy's calls cost about a microsecond, torch's several, and more between other kernels
than in a loop of their own (a requantization of 16 K sums in the digits transformer: 24 us
alone, 58 us in the network's run, 32 us called again at once; numpy's: 43 us both ways).
So it is measured in a network's run, as the bench runs it (one device call, one eager
call), each an A/B of two values interleaved in one process: the digits transformer at
batch 32 took 1.16 ms from 2^12, 0.97 from 2^14, and from 2^15 (with `FLOAT_INT8_GEMM_MACS`
2^19) 0.90 to 0.93 of 2^14; from 2^16 the digits CNN at batch 32 and the zoo's transformers
and MobileNetV2 at batch 1 were 3 to 13% slower than from 2^14."""


def runs_in_torch(elements: int) -> bool:
    """Whether a pass over `elements` runs in torch (`TORCH_MIN_ELEMENTS`)."""
    return elements >= TORCH_MIN_ELEMENTS


def clip_in_place(v: np.ndarray, low: float, high: float) -> None:
    """v clamped to [low, high] in place, in one pass: by numpy's clip ufunc itself, which
    `np.clip`, a Python function, calls after argument handling that cost 1.5 us a call,
    more than the pass over 8 K float64 (called directly, the digits transformer at batch
    32 took 0.97 of the time). The ufunc is numpy's private `numpy._core.umath.clip`;
    test/runtime/test_numpy_internals.py pins what this relies on."""
    _CLIP(v, low, high, out=v)


def centered_into(out: np.ndarray, x: np.ndarray, zero_point: int) -> np.ndarray:
    """`out[...] = x - zero_point`, exactly: `out`'s dtype holds every difference (float32
    or wider for int8 x). From `TORCH_MIN_ELEMENTS`, torch's widening copy and in-place
    subtraction, on the caller's threads from `PARALLEL_WORK` (`threads_for`): numpy's
    converting subtraction is not vectorized (a 112x112x96 map: 184 us against 448 on one
    thread); below it numpy's, whose one call costs less. Of a strided view into contiguous
    `out`, numpy's copies x first, in x's dtype: its converting subtraction walks a strided
    view element by element (an attention's transposed keys, 8 K int8: 20 us), its copy
    faster (7 us), and the subtraction then runs over contiguous memory (3 us)."""
    source = shared_tensor(x) if runs_in_torch(x.size) else None
    target = shared_tensor(out) if source is not None else None
    if source is None or target is None:
        if out.flags.c_contiguous:
            x = np.ascontiguousarray(x)
        # dtype= makes numpy subtract in out's dtype, not in x's (int8 would wrap).
        np.subtract(x, zero_point, out=out, dtype=out.dtype)
        return out
    with threads_for(x.size):
        target.copy_(source)
        target.sub_(zero_point)
    return out


BLOCK_ELEMENTS = 1 << 15
"""Elements an elementwise chain (`channel_blocks`) handles at a time: its int32 and
float64 temporaries (~400 KB) stay in a core's L2 cache, where each numpy pass runs about
three times faster than over a whole feature map streamed through memory."""


def channel_blocks(channels: int, parameters: tuple[Any, ...]) -> tuple[int, tuple[Any, ...]]:
    """The block length for a flat C-contiguous array whose last axis has `channels`, and
    `parameters` (per-channel [C] vectors or scalars) tiled to one block.

    A block is a multiple of C elements, so every block of the C-contiguous flat
    array starts at channel 0 and a block's element `i` has channel `i mod C`,
    which is what the tiles hold there. Scalars stay as they are.
    """
    channels = max(channels, 1)  # an empty array has no blocks to run
    block = max(1, BLOCK_ELEMENTS // channels) * channels
    return block, tuple(tile_channels(v, block) for v in parameters)


def memory_order(x: np.ndarray) -> tuple[int, ...]:
    """x's axes from the largest stride to the smallest: `x.transpose(memory_order(x))` is
    C-contiguous when x is a transposed view of C-contiguous memory (ties keep axis order)."""
    if x.flags.c_contiguous:
        return tuple(range(x.ndim))
    return strides_order(x.strides)


@functools.lru_cache(maxsize=1024)
def strides_order(strides: tuple[int, ...]) -> tuple[int, ...]:
    """The axes by decreasing |stride| (`memory_order`), kept: a network's views have the
    same strides every run, and the sort costs microseconds on maps of a few hundred
    elements."""
    return tuple(sorted(range(len(strides)), key=lambda axis: -abs(strides[axis])))


@functools.lru_cache(maxsize=1024)
def inverse_order(order: tuple[int, ...]) -> tuple[int, ...]:
    """The permutation that undoes `x.transpose(order)`, kept: a network's walks are the
    same every run, and numpy's argsort costs a few microseconds a call."""
    return tuple(np.argsort(order).tolist())


def in_memory_order(function: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """`function(x)` for an elementwise `function` that treats every element alike, run
    over `x` in its memory order when `x` is a transposed view of contiguous memory.

    Permuting the axes changes no element's value, only the order numpy walks them:
    over a transposed view (the attention heads' layouts) numpy's inner loops stride
    through memory, three or four times slower than over the contiguous array. The
    result is the same array, with `x`'s axis order (a transposed view itself).
    """
    if x.flags.c_contiguous or x.ndim < 2:
        return function(x)
    order = memory_order(x)
    walked = x.transpose(order)
    if not walked.flags.c_contiguous:
        return function(x)
    return function(walked).transpose(inverse_order(order))


def block_head(value: Any, length: int) -> Any:
    """The first `length` entries of a tiled block parameter; a scalar as is."""
    return value[:length] if isinstance(value, np.ndarray) else value


def uniform(values: Sequence[Any], dtype: type[np.generic] = np.int64) -> Any:
    """One Python number when every channel has the same value (a scalar operand is
    cheapest), else the values as a `dtype` array."""
    if all(v == values[0] for v in values):
        return dtype(values[0]).item()
    return np.array(values, dtype=dtype)


def as_int32(values: np.ndarray | int) -> np.ndarray | int:
    """Per-channel int32 bounds stay int32 in numpy's arithmetic with an int32 array."""
    return values if isinstance(values, int) else values.astype(np.int32)


def dense_array_values(
    attr: DenseArrayBase, stored: str, dtype: type[np.signedinteger[Any]] | None = None
) -> np.ndarray:
    """The elements of an integer dense-array property; `stored` is its little-endian dtype."""
    values = np.frombuffer(attr.data.data, dtype=np.dtype(stored))
    return values.astype(dtype or values.dtype.newbyteorder("="))


@dataclass
class KernelFunctions(InterpreterFunctions):
    """Base of the dghw kernel families: per-op constants and plans, prepared once.

    Per-op constants (constant tensors, GEMM weights, rescale parameters) are
    derived once and cached by op, so an instance must only be used with a module
    that is not mutated afterwards.
    """

    _cache: dict[Operation, Any] = field(default_factory=dict[Operation, Any])
    _plans: dict[Operation, Any] = field(default_factory=dict[Operation, Any])
    """Per-op prepared forms the hot impls look up with one `dict.get` (see `rescale_plan`)."""

    def planned(self, op: _OpT, prepare: Callable[[_OpT], _T]) -> _T:
        """`prepare(op)`, computed on the first call for `op` and kept in `_plans`."""
        plan = self._plans.get(op)
        if plan is None:
            plan = self._plans[op] = prepare(op)
        return cast(_T, plan)

    def cached(self, op: Operation, factory: Callable[[], _T]) -> _T:
        if op not in self._cache:
            self._cache[op] = factory()
        return cast(_T, self._cache[op])
