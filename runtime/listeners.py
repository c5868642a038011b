"""Interpreter listeners: saturation counts and recorded values (used by compare)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    IntegerAttr,
)
from xdsl.interpreter import (
    Interpreter,
)
from xdsl.ir import Operation

from dg.dialects import dghw
from dg.runtime.kernels.common import numpy_dtype
from dg.runtime.kernels.quantization import RescaleParameters, rescale_parameters, unclamped_rescale


@dataclass(frozen=True)
class Saturation:
    """How many elements of one `dghw.rescale` run were clipped to its result type's range."""

    low: int
    """Elements below the type's minimum, where `clamp_min` is that minimum."""
    high: int
    """Elements above the type's maximum, where `clamp_max` is that maximum."""
    elements: int

    @property
    def total(self) -> int:
        return self.low + self.high


class SaturationCounter(Interpreter.Listener):
    """An interpreter listener counting the saturated values of every `dghw.rescale`.

    Saturation is a value the requantization cannot represent: the unclamped
    result lies outside the result type's range and the clamp bound on that
    side is the type's own limit (`saturates`). A clamp that is an activation
    (a bound inside the range, or a ReLU's `clamp_min = output_zp`) cuts off
    what the model cuts off too, so it is not counted. The counter recomputes the rescale
    before its clamp, so it costs one rescale per rescale while attached and
    nothing when not (`DeviceModel.__call__` attaches listeners per call).
    """

    def __init__(self) -> None:
        self.counts: dict[Operation, Saturation] = {}
        self._parameters: dict[Operation, RescaleParameters] = {}

    def will_interpret_op(self, op: Operation, args: tuple[Any, ...]) -> None:
        if not isinstance(op, dghw.RescaleOp):
            return
        parameters = self._parameters.get(op)
        if parameters is None:
            parameters = self._parameters[op] = rescale_parameters(op)
        v = unclamped_rescale(op, args[0], parameters)
        info = np.iinfo(numpy_dtype(op.result.type))
        low = int(np.count_nonzero(v < info.min)) if saturates(op.clamp_min, info.min, op) else 0
        high = int(np.count_nonzero(v > info.max)) if saturates(op.clamp_max, info.max, op) else 0
        seen = self.counts.get(op, Saturation(0, 0, 0))
        self.counts[op] = Saturation(seen.low + low, seen.high + high, seen.elements + v.size)


def saturates(bound: IntegerAttr, limit: int, op: dghw.RescaleOp) -> bool:
    """Whether clamping to `bound` on this side is saturation, not an activation.

    It is when the bound is the type's `limit` and not the output zero point:
    `clamp_min = output_zp` is a ReLU (docs/dghw.md), even when that zero point is -128.
    """
    return bound.value.data == limit and bound.value.data != op.output_zp.value.data


class ValueRecorder(Interpreter.Listener):
    """An interpreter listener keeping every op's results (for per-layer comparisons)."""

    def __init__(self) -> None:
        self.results: dict[Operation, tuple[Any, ...]] = {}

    def did_interpret_op(self, op: Operation, results: tuple[Any, ...]) -> None:
        self.results[op] = results
