"""Bit shifts, bitwise ops and comparisons, and the tile of a repeat."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    impl,
    register_impls,
)

from dg.dialects import dghw
from dg.runtime.kernels.common import KernelFunctions

BITWISE = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


COMPARISONS = {
    "gt": np.greater,
    "ge": np.greater_equal,
    "lt": np.less,
    "le": np.less_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}
"""`dghw.compare` kinds as numpy ufuncs."""


@register_impls
@dataclass
class LogicFunctions(KernelFunctions):
    """The logic family's dghw ops."""

    @impl(dghw.ShiftOp)
    def run_shift(
        self, interpreter: Interpreter, op: dghw.ShiftOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        shift = op.shift.value.data
        if op.direction.data == "right":
            return (np.right_shift(x, shift),)  # arithmetic on a signed numpy type
        # LOGICAL_LEFT_SHIFT works on the bit pattern: shift it unsigned, so it wraps
        # to the element width (int8 as torch wraps int8, int32 likewise).
        unsigned = np.dtype(f"u{x.dtype.itemsize}")
        return (np.left_shift(x.view(unsigned), unsigned.type(shift)).view(x.dtype),)

    @impl(dghw.BitwiseOp)
    def run_bitwise(
        self, interpreter: Interpreter, op: dghw.BitwiseOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        return (BITWISE[op.kind.data](x, x.dtype.type(op.value.value.data)),)

    @impl(dghw.CompareOp)
    def run_compare(
        self, interpreter: Interpreter, op: dghw.CompareOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        holds = COMPARISONS[op.kind.data](x, x.dtype.type(op.value.value.data))
        return (holds.astype(np.int32),)

    @impl(dghw.BitwiseTensorOp)
    def run_bitwise_tensor(
        self,
        interpreter: Interpreter,
        op: dghw.BitwiseTensorOp,
        args: tuple[np.ndarray, np.ndarray],
    ) -> tuple[np.ndarray]:
        lhs, rhs = args
        # One element type (the verifier's rule): numpy keeps it, and and/or/xor of two
        # values of a width stay in that width, as torch's do.
        return (BITWISE[op.kind.data](lhs, rhs),)

    @impl(dghw.CompareTensorOp)
    def run_compare_tensor(
        self,
        interpreter: Interpreter,
        op: dghw.CompareTensorOp,
        args: tuple[np.ndarray, np.ndarray],
    ) -> tuple[np.ndarray]:
        lhs, rhs = args
        return (COMPARISONS[op.kind.data](lhs, rhs).astype(np.int32),)

    @impl(dghw.TileOp)
    def run_tile(
        self, interpreter: Interpreter, op: dghw.TileOp, args: tuple[np.ndarray]
    ) -> tuple[np.ndarray]:
        (x,) = args
        return (np.tile(x, op.multiples.get_values()),)
